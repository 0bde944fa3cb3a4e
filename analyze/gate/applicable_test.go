package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestBuiltinRulesApplyOnlyWhereTheWriterShowsWhatTheyNeed judges the
// built-in rules on the third-party corpus: a rule needing what the
// writer's spans cannot show is not applicable, with the reason, never a
// pass on nothing nor incomplete forever; and check exits 0 only when a
// rule applied, 3 when none could.
func TestBuiltinRulesApplyOnlyWhereTheWriterShowsWhatTheyNeed(t *testing.T) {
	na := func(why string) RuleResult { return RuleResult{Status: StatusNotApplicable, Found: why} }
	pass := RuleResult{Status: StatusPass}
	fail := RuleResult{Status: StatusFail}
	tests := []struct {
		dump string
		want map[string]RuleResult // by rule id: status, and a part of the finding
		exit int
	}{
		{"openllmetry/pooled", map[string]RuleResult{
			// No server address: the second target's cold start is no regression.
			rulefmt.RuleNoUnexplainedMisses: na("no target identity"),
			// Calls parented to a session span spanning several executions.
			rulefmt.RuleOneSessionPerExecution: na("executions not measurable"),
			rulefmt.RuleAcquireHasCacheHit:     na("no acquire span"),
			rulefmt.RuleHandshakeOnlyOnMiss:    na("no acquire span"),
			rulefmt.RuleOneAcquirePerInvoke:    na("no invocation span"),
		}, ExitIncomplete},
		{"openllmetry/per-call", map[string]RuleResult{
			rulefmt.RuleOneSessionPerExecution: fail,
			rulefmt.RuleNoUnexplainedMisses:    na("no target identity"),
		}, ExitFail},
		{"shinzo/pooled", map[string]RuleResult{
			// An upper bound of 0 is the truth.
			rulefmt.RuleNoUnexplainedMisses: pass,
			rulefmt.RuleServerKeptSessions:  na("server-side writer"),
			rulefmt.RuleAcquireHasCacheHit:  na("no acquire span"),
		}, ExitPass},
		{"shinzo/forget", map[string]RuleResult{
			// The redial after a refused attempt the server never saw.
			rulefmt.RuleNoUnexplainedMisses: na("only an upper bound"),
		}, ExitIncomplete},
	}
	for _, tt := range tests {
		t.Run(tt.dump, func(t *testing.T) {
			cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
			rules := rulefmt.BuiltinRules(cfg)
			rep, byID := gateEvalFile(t, cfg, rules, "../../testdata/traces/corpus/"+tt.dump+".jsonl")
			for id, want := range tt.want {
				got := byID[id]
				if got.Status != want.Status || !strings.Contains(got.Found, want.Found) {
					t.Errorf("%s: %s %q, want %s containing %q", id, got.Status, got.Found, want.Status, want.Found)
				}
				if got.Status == StatusNotApplicable && got.TraceQL != "" {
					t.Errorf("%s: not applicable, yet shows a TraceQL naming spans the dump may not have: %s", id, got.TraceQL)
				}
			}
			results := make([]RuleResult, 0, len(rules))
			for _, r := range rules {
				results = append(results, byID[r.ID])
			}
			if c := NewCheckReport(rep, results, nil, ""); c.ExitCode != tt.exit {
				t.Errorf("exit %d (%s, %v), want %d", c.ExitCode, c.Verdict, c.IncompleteReasons, tt.exit)
			}
		})
	}
}

// TestABoundDecidesOnlyTheComparisonsItCan pins which comparisons a
// lower or upper bound decides: a lower bound of 86% proves a hit rate of
// at least 80%, never one of at most 90%.
func TestABoundDecidesOnlyTheComparisonsItCan(t *testing.T) {
	tests := []struct {
		state report.Measurability
		op    rulefmt.Op
		got   float64
		bound float64
		want  bool
	}{
		{report.LowerBound, rulefmt.OpGe, 0.86, 0.8, true},  // holds for the truth
		{report.LowerBound, rulefmt.OpGe, 0.7, 0.8, false},  // the truth may be higher
		{report.LowerBound, rulefmt.OpLe, 0.86, 0.9, false}, // the truth may be higher
		{report.LowerBound, rulefmt.OpLe, 0.95, 0.9, true},  // breaks for the truth
		{report.LowerBound, rulefmt.OpEq, 2, 1, true},
		{report.LowerBound, rulefmt.OpEq, 0, 1, false},
		{report.UpperBound, rulefmt.OpEq, 0, 0, true}, // at most 0 is 0
		{report.UpperBound, rulefmt.OpEq, 1, 0, false},
		{report.UpperBound, rulefmt.OpLe, 1, 2, true},
		{report.UpperBound, rulefmt.OpLe, 3, 2, false},
		{report.UpperBound, rulefmt.OpGt, 1, 2, true},
		{report.UpperBound, rulefmt.OpNe, 1, 2, false},
		{report.Measurable, rulefmt.OpNe, 1, 2, true},
	}
	for _, tt := range tests {
		ex := rulefmt.Expectation{Of: "hit_rate", Op: tt.op, Than: rulefmt.Operand{Number: tt.bound}}
		if got := boundDecides(&ex, tt.state, tt.got, tt.bound, ex.Holds(tt.got, tt.bound)); got != tt.want {
			t.Errorf("%s %v: %s %v decides = %v, want %v", tt.state, tt.got, tt.op, tt.bound, got, tt.want)
		}
	}
}

// TestExplainSaysWhatARuleNeeds pins that `mcptrace rules --explain`
// says, for each built-in rule, what the writer's spans must show for it
// to apply, and nothing of the kind for a rule needing nothing.
func TestExplainSaysWhatARuleNeeds(t *testing.T) {
	want := map[string]string{
		rulefmt.RuleOneSessionPerExecution: "show calls, executions, session_id;",
		rulefmt.RuleServerKeptSessions:     "show calls, executions, session_id, refused_attempts;",
		rulefmt.RuleNoUnexplainedMisses:    "show acquires, target_identity;",
		rulefmt.RuleAcquireHasCacheHit:     "show acquire_spans;",
		rulefmt.RuleHandshakeOnlyOnMiss:    "show acquire_spans, handshake_spans;",
		rulefmt.RuleOneAcquirePerInvoke:    "show acquire_spans, invocation_spans;",
	}
	for _, r := range rulefmt.BuiltinRules(rulefmt.Config{}) {
		if got := ExplainRule(&r); !strings.Contains(got, "Applies only where the writer's spans "+want[r.ID]) {
			t.Errorf("%s explained without what it needs (%q):\n%s", r.ID, want[r.ID], got)
		}
	}
	plain := rulefmt.Rule{ID: "plain", Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump}, Severity: rulefmt.SeverityError,
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpEq}}}
	if got := ExplainRule(&plain); strings.Contains(got, "Applies only") {
		t.Errorf("a rule needing nothing explained with needs:\n%s", got)
	}
}
