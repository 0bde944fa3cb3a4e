package htmlreport

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestEveryTextOfARuleVerdictIsEscaped pins that the rule table's verdicts
// reach the page with their description, TraceQL and examples escaped as
// their found and expected texts are (a rule file's or a dump's bidi
// override shown as an escape), and that the check's own examples are not
// changed by it.
func TestEveryTextOfARuleVerdictIsEscaped(t *testing.T) {
	const evil = "safe\u202eexe.txt"
	examples := []report.RuleExample{{TraceID: evil, SpanID: evil, TraceQL: evil}}
	h := &Report{Rules: []report.RuleVerdict{{ID: evil, Description: evil, Found: evil, Expected: evil, TraceQL: evil, Examples: examples}}}
	h.escapeText()
	r := h.Rules[0]
	for name, got := range map[string]string{"id": r.ID, "description": r.Description, "found": r.Found, "expected": r.Expected,
		"traceql": r.TraceQL, "example trace": r.Examples[0].TraceID, "example span": r.Examples[0].SpanID, "example traceql": r.Examples[0].TraceQL} {
		if strings.ContainsRune(got, '\u202e') {
			t.Errorf("%s %q: a raw bidi override reaches the page", name, got)
		}
	}
	if examples[0].TraceQL != evil {
		t.Errorf("the check's own example changed to %q", examples[0].TraceQL)
	}
}
