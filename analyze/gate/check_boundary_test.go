package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestPartialInputVerdictFollowsAllowPartial pins what a damaged input does
// to a check whose rules all hold: without AllowPartial the verdict is
// incomplete (exit 3) and says which input is partial; with it the verdict
// is the rules' (pass); a failed rule fails whatever the option.
func TestPartialInputVerdictFollowsAllowPartial(t *testing.T) {
	pass := RuleResult{ID: "r", Severity: rulefmt.SeverityError, Status: StatusPass, Scopes: 1}
	fail := RuleResult{ID: "r", Severity: rulefmt.SeverityError, Status: StatusFail, Scopes: 1, Failed: 1}
	tests := []struct {
		name         string
		partial      bool
		allowPartial bool
		rule         RuleResult
		verdict      Status
		exit         int
		reason       bool // an incomplete reason names the partial input
	}{
		{"a whole input: pass", false, false, pass, StatusPass, ExitPass, false},
		{"a partial input: incomplete", true, false, pass, StatusIncomplete, ExitIncomplete, true},
		{"a partial input allowed: pass", true, true, pass, StatusPass, ExitPass, false},
		{"a partial input and a failed rule: fail", true, false, fail, StatusFail, ExitFail, true},
		{"a partial input allowed and a failed rule: fail", true, true, fail, StatusFail, ExitFail, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &report.Report{Partial: tc.partial, PoolSpans: 10, Spans: 10, Traces: 1,
				Inputs: []report.InputReport{{Path: "dump.jsonl", Spans: 10, Partial: tc.partial}}}
			c := NewCheckReportWith(r, []RuleResult{tc.rule}, nil, "", CheckOptions{AllowPartial: tc.allowPartial})
			if c.Verdict != tc.verdict || c.ExitCode != tc.exit {
				t.Errorf("verdict %s exit %d, want %s exit %d (reasons %q)", c.Verdict, c.ExitCode, tc.verdict, tc.exit, c.IncompleteReasons)
			}
			named := len(c.IncompleteReasons) == 1 && strings.Contains(c.IncompleteReasons[0], "dump.jsonl is partial")
			if named != tc.reason || (!tc.reason && len(c.IncompleteReasons) != 0) {
				t.Errorf("incomplete reasons %q, want one naming dump.jsonl: %v", c.IncompleteReasons, tc.reason)
			}
		})
	}
}
