package render_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestMeasureDocIsTheSchemaDocsTable pins MeasureDoc to the table between
// the markers of docs/analysis-schema.md (the analyzer's test rewrites the
// doc with -update): each row's name, unit, direction, key and whether a
// rule may name it.
func TestMeasureDocIsTheSchemaDocsTable(t *testing.T) {
	data, err := os.ReadFile("../../../docs/analysis-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- measures:begin -->\n", "<!-- measures:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/analysis-schema.md lacks the %q and %q markers", begin, end)
	}
	if got := render.MeasureDoc(); got != doc[i+len(begin):j] {
		t.Errorf("MeasureDoc differs from docs/analysis-schema.md's table:\n%s", got)
	}
	for _, row := range []string{
		"| `hit_rate` | ratio | higher | `pool.hit_rate` | yes | acquires; ≥ without refused_attempts |",
		"| `scopes` | count | neither | `pool.scopes` | no | - |",
		"| `measures.NAME.expect` | count | neither | `measures[].expect` | no | - |",
	} {
		if !strings.Contains(render.MeasureDoc(), row) {
			t.Errorf("MeasureDoc lacks %q", row)
		}
	}
}

// TestRenderingLeavesTheReadsTableInItsOrder pins that drawing the reads
// section, which orders the reads fields for display, leaves the table in
// its own order: after a report is drawn, MeasureDoc is still the table of
// docs/analysis-schema.md, whatever other test drew a report before.
func TestRenderingLeavesTheReadsTableInItsOrder(t *testing.T) {
	data, err := os.ReadFile("../../../docs/analysis-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- measures:begin -->\n", "<!-- measures:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/analysis-schema.md lacks the %q and %q markers", begin, end)
	}
	r := dumptest.Scenario(t, "cold-init-two-reads")
	if len(r.Measures) == 0 {
		t.Fatal("the case this pins is not set up: no reads measure")
	}
	draw(t, r, render.FormatTable)
	if got := render.MeasureDoc(); got != doc[i+len(begin):j] {
		t.Errorf("after drawing a report, MeasureDoc differs from docs/analysis-schema.md's table:\n%s", got)
	}
}
