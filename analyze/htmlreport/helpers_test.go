package htmlreport

import (
	"flag"
	"os"
	"testing"

	"go.uber.org/goleak"
)

var update = flag.Bool("update", false, "rewrite the golden data in ../testdata/htmlreport")

// tracesDir holds the scenario dumps, seen from analyze/ (where the tests
// run: see TestMain).
const tracesDir = "../testdata/traces"

// TestMain runs the tests from analyze/, where the golden data was written:
// the report echoes its input paths, so they read as they always have. It
// fails the tests if a goroutine outlives them (the readers decode in
// parallel).
func TestMain(m *testing.M) {
	if err := os.Chdir(".."); err != nil {
		panic(err)
	}
	goleak.VerifyTestMain(m)
}
