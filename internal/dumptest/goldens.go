package dumptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// GoldenReport is one of the analyzer's JSON goldens of the generated
// dumps (testdata/traces, one per scenario in the OTLP JSON format): the
// report of a real dump, written and checked by the analyzer's golden
// tests. The report's queries and its renderers are pinned on them
// without running the analyzer.
type GoldenReport struct {
	Name   string // the scenario ("pooled")
	Path   string
	Raw    []byte
	Report *report.Report
}

// goldenScenarios is how many scenarios testdata/traces holds: fewer
// goldens found means the glob or the tree changed, not that there is
// less to test.
const goldenScenarios = 14

// GoldenReports reads every analyzer golden back as a Report, failing t
// when one does not decode or fewer than the scenarios are found.
func GoldenReports(t testing.TB) []GoldenReport {
	t.Helper()
	glob := goldenPath("*")
	paths, err := filepath.Glob(glob)
	if err != nil {
		t.Fatal(err)
	}
	var out []GoldenReport
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name, _, _ := strings.Cut(filepath.Base(p), ".")
		out = append(out, GoldenReport{Name: name, Path: p, Raw: raw, Report: decodeReport(t, p, raw)})
	}
	if len(out) < goldenScenarios {
		t.Fatalf("found %d analyzer goldens in %s, want the %d scenarios", len(out), glob, goldenScenarios)
	}
	return out
}

// Scenario returns a fresh Report decoded from the analyzer golden of one
// scenario ("pooled"), for a test to change a field of.
func Scenario(t testing.TB, name string) *report.Report {
	t.Helper()
	p := goldenPath(name)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return decodeReport(t, p, raw)
}

// goldenPath is the path of scenario name's analyzer golden ("*": all),
// found from this file, so any package's tests read the same files.
func goldenPath(name string) string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(self), "..", "..", "testdata", "traces", name+".otlp.json.golden.json")
}

// decodeReport decodes a golden's bytes, read from path, as a Report.
func decodeReport(t testing.TB, path string, raw []byte) *report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &r
}
