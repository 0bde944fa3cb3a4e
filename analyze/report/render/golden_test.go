package render_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

var update = flag.Bool("update", false, "rewrite the table and Markdown goldens in testdata/")

// tracesGoldens are the analyzer's JSON goldens of the generated dumps
// (testdata/traces), one per scenario in the OTLP JSON format: each is the
// report of a real dump, written and checked by the analyzer's golden
// tests. This package reads them back as Reports, so its renderers are
// pinned on the reports of real dumps without running the analyzer.
const tracesGoldens = "../../../testdata/traces/*.otlp.json.golden.json"

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

func draw(t *testing.T, r *report.Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Write(&b, r, format); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return b.String()
}

// TestJSONReportReadsBackByteForByte pins the JSON renderer and the
// Report's decoding: every analyzer golden, decoded and rendered again, is
// the same bytes (indentation, key order, nulls against empty lists, no
// HTML escaping, executions.measurable kept).
func TestJSONReportReadsBackByteForByte(t *testing.T) {
	for _, g := range goldenReports(t) {
		t.Run(g.name, func(t *testing.T) {
			if got := draw(t, g.r, render.FormatJSON); got != string(g.raw) {
				t.Errorf("%s does not read back as itself:\n%s", g.path, cmp.Diff(string(g.raw), got))
			}
		})
	}
}

// TestTableAndMarkdownOfEachScenario pins the reports for people on the
// report of every generated scenario: the sections shown
// and left out (misses by cause only with misses, by scope, by protocol
// revision only when a revision is named, reads per request only with
// measures), the pool verdict of each kind of dump, the notes, and the
// values as each measure draws them. The goldens are
// testdata/<name>.table and testdata/<name>.md; -update rewrites them.
func TestTableAndMarkdownOfEachScenario(t *testing.T) {
	for _, g := range goldenReports(t) {
		for _, f := range []struct{ format, ext string }{{render.FormatTable, ".table"}, {render.FormatMarkdown, ".md"}} {
			t.Run(g.name+f.ext, func(t *testing.T) {
				got := draw(t, g.r, f.format)
				golden := filepath.Join("testdata", g.name+f.ext)
				if *update {
					if err := os.MkdirAll("testdata", 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("read golden (go test ./analyze/report -run %s -update): %v", t.Name(), err)
				}
				if got != string(want) {
					t.Errorf("%s differs from %s (rerun with -update if intended):\n%s", f.format, golden, cmp.Diff(string(want), got))
				}
			})
		}
	}
}
