package report_test

import (
	"os"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestUnrecognisedNamesAreEscapedAndClipped pins that the span names the
// no-span-recognised message quotes (the CLI prints it as it is) are
// escaped for a terminal and clipped to 80 runes, in both its forms.
func TestUnrecognisedNamesAreEscapedAndClipped(t *testing.T) {
	long := strings.Repeat("n", 200)
	r := &report.Report{Spans: 2, Recognition: report.RecognitionReport{UnrecognisedNames: []report.NameCount{
		{Name: "x\x1b[2Jy\u202ez", Spans: 1}, {Name: long, Spans: 1},
	}}}
	for form, got := range map[string]string{"text": r.UnrecognisedText(), "line": r.UnrecognisedLine()} {
		if strings.ContainsAny(got, "\x1b\u202e") {
			t.Errorf("the %s form prints a control or format character raw: %q", form, got)
		}
		if !strings.Contains(got, `x\x1b[2Jy\u202ez`) {
			t.Errorf("the %s form lacks the name escaped: %q", form, got)
		}
		if !strings.Contains(got, strings.Repeat("n", 79)+"…") || strings.Contains(got, strings.Repeat("n", 80)) {
			t.Errorf("the %s form does not clip the long name to 80 runes: %q", form, got)
		}
	}
}

// TestRenderingLeavesTheReadsTableInItsOrder pins that drawing the reads
// section, which orders the reads fields for display, leaves the table in
// its own order: after a report is drawn, MeasureDoc is still the table of
// docs/analysis-schema.md, whatever other test drew a report before.
func TestRenderingLeavesTheReadsTableInItsOrder(t *testing.T) {
	data, err := os.ReadFile("../../docs/analysis-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- measures:begin -->\n", "<!-- measures:end -->"
	doc := string(data)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("docs/analysis-schema.md lacks the %q and %q markers", begin, end)
	}
	r := scenario(t, "cold-init-two-reads")
	if len(r.Measures) == 0 {
		t.Fatal("the case this pins is not set up: no reads measure")
	}
	render(t, r, report.RenderTable)
	if got := report.MeasureDoc(); got != doc[i+len(begin):j] {
		t.Errorf("after drawing a report, MeasureDoc differs from docs/analysis-schema.md's table:\n%s", got)
	}
}
