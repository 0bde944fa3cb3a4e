package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestOnlyThePartialInputsAreNamed pins that, of several inputs read
// into one check, the incomplete reasons name each damaged input once,
// with its own span count, and never a whole one.
func TestOnlyThePartialInputsAreNamed(t *testing.T) {
	r := &report.Report{Partial: true, PoolSpans: 10, Spans: 30, Traces: 3, Inputs: []report.InputReport{
		{Path: "whole.jsonl", Spans: 10}, {Path: "cut.jsonl", Spans: 7, Partial: true}, {Path: "also-whole.jsonl", Spans: 13}}}
	pass := RuleResult{ID: "r", Severity: rulefmt.SeverityError, Status: StatusPass, Scopes: 1}
	c := NewCheckReport(r, []RuleResult{pass}, nil, "")
	if len(c.IncompleteReasons) != 1 || !strings.HasPrefix(c.IncompleteReasons[0], "cut.jsonl is partial: 7 spans were read") {
		t.Errorf("incomplete reasons %q, want one, naming cut.jsonl and its 7 spans", c.IncompleteReasons)
	}
}

// notApplicable counts the rules not applicable.
func notApplicable(rules []RuleResult) int {
	n := 0
	for _, r := range rules {
		if r.Status == StatusNotApplicable {
			n++
		}
	}
	return n
}

// TestAnAppliedWarningIsNoErrorRuleApplied pins what "no error-severity
// rule could apply" counts: warnings that applied do not stand for the
// error-severity rules that could not, so the check is incomplete, naming
// those; one error-severity rule that applied is enough to pass, and so
// is a check of warnings alone, where no error-severity rule was left out.
func TestAnAppliedWarningIsNoErrorRuleApplied(t *testing.T) {
	na := RuleResult{ID: "needs-sessions", Severity: rulefmt.SeverityError, Status: StatusNotApplicable, Found: "not applicable: no session ids"}
	warn := RuleResult{ID: "warns", Severity: rulefmt.SeverityWarning, Status: StatusPass, Scopes: 1}
	errPass := RuleResult{ID: "holds", Severity: rulefmt.SeverityError, Status: StatusPass, Scopes: 1}
	r := &report.Report{PoolSpans: 10, Spans: 10, Traces: 1}
	for _, tc := range []struct {
		name  string
		rules []RuleResult
		want  Status
	}{
		{"a warning applied, the error rule not", []RuleResult{na, warn}, StatusIncomplete},
		{"an error rule applied", []RuleResult{na, warn, errPass}, StatusPass},
		{"only warnings, none not applicable", []RuleResult{warn}, StatusPass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCheckReport(r, tc.rules, nil, "")
			if c.Verdict != tc.want || c.Counts.NotApplicable != notApplicable(tc.rules) || c.Counts.Pass != len(tc.rules)-notApplicable(tc.rules) {
				t.Errorf("verdict %s, counts %+v; want %s", c.Verdict, c.Counts, tc.want)
			}
			says := strings.Contains(strings.Join(c.IncompleteReasons, "; "), "no error-severity rule could apply to these spans: needs-sessions: not applicable: no session ids")
			if says != (tc.want == StatusIncomplete) {
				t.Errorf("incomplete reasons %q; want them to name needs-sessions: %v", c.IncompleteReasons, tc.want == StatusIncomplete)
			}
		})
	}
}
