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
	_, self, _, _ := runtime.Caller(0)
	glob := filepath.Join(filepath.Dir(self), "..", "..", "testdata", "traces", "*.otlp.json.golden.json")
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
		var r report.Report
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		name, _, _ := strings.Cut(filepath.Base(p), ".")
		out = append(out, GoldenReport{Name: name, Path: p, Raw: raw, Report: &r})
	}
	if len(out) < goldenScenarios {
		t.Fatalf("found %d analyzer goldens in %s, want the %d scenarios", len(out), glob, goldenScenarios)
	}
	return out
}
