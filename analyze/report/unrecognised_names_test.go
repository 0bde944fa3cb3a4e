package report_test

import (
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
