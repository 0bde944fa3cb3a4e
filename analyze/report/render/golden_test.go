package render_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

var update = flag.Bool("update", false, "rewrite the table and Markdown goldens in testdata/")

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
	for _, g := range dumptest.GoldenReports(t) {
		t.Run(g.Name, func(t *testing.T) {
			if got := draw(t, g.Report, render.FormatJSON); got != string(g.Raw) {
				t.Errorf("%s does not read back as itself:\n%s", g.Path, cmp.Diff(string(g.Raw), got))
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
	for _, g := range dumptest.GoldenReports(t) {
		for _, f := range []struct{ format, ext string }{{render.FormatTable, ".table"}, {render.FormatMarkdown, ".md"}} {
			t.Run(g.Name+f.ext, func(t *testing.T) {
				got := draw(t, g.Report, f.format)
				golden := filepath.Join("testdata", g.Name+f.ext)
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
