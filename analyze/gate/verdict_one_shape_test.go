package gate

import (
	"reflect"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestTheHTMLRuleTableIsTheChecksVerdicts pins that the HTML report's rule
// table holds the check's verdicts themselves (report.RuleVerdict, every
// field: status, found, expected, examples, TraceQL), in rule order, passing
// and not applicable ones too: no second shape to copy into, where a field
// could be dropped or reworded.
func TestTheHTMLRuleTableIsTheChecksVerdicts(t *testing.T) {
	verdicts := []RuleResult{
		{ID: "a", Status: StatusPass, Severity: rulefmt.SeverityError, Expected: "= 0", Found: "0", Scopes: 3, Examples: []Example{}},
		{ID: "b", Status: StatusFail, Severity: rulefmt.SeverityError, Expected: "= 1", Found: "2 in 1 of 3 traces", Scopes: 3, Failed: 1,
			Examples: []Example{{TraceID: "0af7651916cd43dd8448eb211c80319c", SpanID: "b7ad6b7169203331", TraceQL: `{ trace:id = "0af7651916cd43dd8448eb211c80319c" }`}}, TraceQL: "{ }"},
		{ID: "c", Status: StatusNotApplicable, Severity: rulefmt.SeverityWarning, Found: "not applicable: no session id", Examples: []Example{}},
	}
	h := NewCheckReport(&report.Report{}, verdicts, nil, "").HTML()
	if !reflect.DeepEqual(h.Rules, []report.RuleVerdict(verdicts)) {
		t.Errorf("HTML rule table %+v, want the check's verdicts %+v", h.Rules, verdicts)
	}
	if len(h.Offenders) != 2 || h.Offenders[0].ID != "b" || h.Offenders[1].ID != "c" {
		t.Errorf("offenders %+v, want the failing and the not applicable rule", h.Offenders)
	}
}
