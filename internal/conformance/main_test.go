package conformance

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/conformance/client"
)

// clientEnv, set, makes the test binary the conformance client: the runner
// starts its --command (this binary) with the variable inherited, and
// TestMain hands the process to client.Main. The client is then built with
// the test (under -race when the test is), and a change to the pool or the
// client invalidates the cached test result.
const clientEnv = "MCPTRACE_CONFORMANCE_CLIENT"

// TestMain plays the client when the runner starts this binary, and
// otherwise runs the tests, failing the package if a worker or a runner's
// process wait outlives its test.
func TestMain(m *testing.M) {
	if os.Getenv(clientEnv) != "" {
		os.Exit(client.Main(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
