package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// tracesGoldens are the analyzer's JSON goldens of the generated dumps
// (testdata/traces), one per scenario in the OTLP JSON format: each is the
// report of a real dump, written and checked by the analyzer's golden
// tests. This package reads them back as Reports, so its queries are pinned
// on the reports of real dumps without running the analyzer.
const tracesGoldens = "../../testdata/traces/*.otlp.json.golden.json"

// goldenReport is one analyzer golden: its path, its bytes and the Report
// they decode to.
type goldenReport struct {
	name string // the scenario ("pooled")
	path string
	raw  []byte
	r    *report.Report
}

func goldenReports(t *testing.T) []goldenReport {
	t.Helper()
	paths, err := filepath.Glob(tracesGoldens)
	if err != nil {
		t.Fatal(err)
	}
	var out []goldenReport
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
		out = append(out, goldenReport{name: name, path: p, raw: raw, r: &r})
	}
	if len(out) < 14 {
		t.Fatalf("found %d analyzer goldens in %s, want the 14 scenarios", len(out), tracesGoldens)
	}
	return out
}
