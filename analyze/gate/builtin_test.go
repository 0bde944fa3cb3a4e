package gate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestBuiltinRulesPassAndFailOnTheirDumps pins, for every built-in rule, a
// dump in testdata/traces it passes and one it fails, with the number of
// offending examples it names.
func TestBuiltinRulesPassAndFailOnTheirDumps(t *testing.T) {
	cases := []struct {
		rule, dump string
		want       Status
		examples   int
	}{
		{rulefmt.RuleOneSessionPerExecution, "pooled", StatusPass, 0},
		{rulefmt.RuleOneSessionPerExecution, "per-call-dial", StatusFail, 3},
		{rulefmt.RuleNoUnexplainedMisses, "prod-cold-starts", StatusPass, 0},
		{rulefmt.RuleNoUnexplainedMisses, "unexplained-miss", StatusFail, 1},
		{rulefmt.RuleNoUnexplainedMisses, "per-call-dial", StatusFail, 5},
		{rulefmt.RuleAcquireHasCacheHit, "pooled", StatusPass, 0},
		{rulefmt.RuleAcquireHasCacheHit, "missing-cache-hit", StatusFail, 3},
		{rulefmt.RuleHandshakeOnlyOnMiss, "ttl-and-redial", StatusPass, 0},
		{rulefmt.RuleHandshakeOnlyOnMiss, "handshake-on-hit", StatusFail, 1},
		{rulefmt.RuleOneAcquirePerInvoke, "ttl-and-redial", StatusPass, 0}, // two acquires, the second a redial
		{rulefmt.RuleOneAcquirePerInvoke, "double-acquire", StatusFail, 1},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.dump, func(t *testing.T) {
			rules := rulefmt.BuiltinRules(rulefmt.Config{})
			_, res := gateEvalFile(t, rulefmt.Config{}, rules, filepath.Join(tracesDir, c.dump+".otlp.jsonl"))
			got := res[c.rule]
			if got.Status != c.want {
				t.Fatalf("status = %s, want %s (found: %s)", got.Status, c.want, got.Found)
			}
			if len(got.Examples) != c.examples {
				t.Errorf("examples = %d, want %d: %+v", len(got.Examples), c.examples, got.Examples)
			}
			for _, ex := range got.Examples {
				if len(ex.TraceID) != 32 || ex.TraceQL == "" {
					t.Errorf("example %+v: want a 32-digit trace id and a TraceQL query", ex)
				}
			}
		})
	}
}

// TestRuleBreakingScenariosBreakOnlyTheirRule keeps the generated
// scenarios honest: each fails exactly the built-in rule it exists for.
func TestRuleBreakingScenariosBreakOnlyTheirRule(t *testing.T) {
	for _, c := range []struct {
		name  string
		build func() ptrace.Traces
		rule  string
	}{
		{"missing-cache-hit", tracegen.MissingCacheHit, rulefmt.RuleAcquireHasCacheHit},
		{"handshake-on-hit", tracegen.HandshakeOnHit, rulefmt.RuleHandshakeOnlyOnMiss},
		{"double-acquire", tracegen.DoubleAcquire, rulefmt.RuleOneAcquirePerInvoke},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, res := gateEval(t, rulefmt.Config{}, rulefmt.BuiltinRules(rulefmt.Config{}), c.build())
			var failed []string
			for id, r := range res {
				if r.Status != StatusPass {
					failed = append(failed, id)
				}
			}
			if !slices.Equal(failed, []string{c.rule}) {
				t.Errorf("rules not passing = %v, want only %s", failed, c.rule)
			}
		})
	}
}

// TestBuiltinRulesFollowTheExecutionRoot: with an execution root, sessions
// are counted per execution subtree, not per trace.
func TestBuiltinRulesFollowTheExecutionRoot(t *testing.T) {
	root := rulefmt.Selector{Name: "executor.execute"}
	cfg := rulefmt.Config{ExecutionRoot: &root}
	rules := rulefmt.BuiltinRules(cfg)
	if rules[0].Scope.Kind != rulefmt.ScopeSubtree || rules[0].Scope.Root.Name != "executor.execute" {
		t.Fatalf("scope = %v, want the subtree of the execution root", rules[0].Scope)
	}
	_, res := gateEval(t, cfg, rules, tracegen.PerCallDial())
	if r := res[rulefmt.RuleOneSessionPerExecution]; r.Status != StatusFail || r.Failed != 3 || r.Scopes != 3 {
		t.Errorf("per-call-dial by execution root: %+v, want 3 of 3 executions failing", r)
	}
	_, res = gateEval(t, cfg, rules, tracegen.Pooled())
	if r := res[rulefmt.RuleOneSessionPerExecution]; r.Status != StatusPass || r.Scopes != 3 {
		t.Errorf("pooled by execution root: %+v, want 3 executions passing", r)
	}
}

// TestBuiltinRulesAreIncompleteWithoutPoolSpans: a dump without pool spans
// (the cold-init story) gives the built-in rules nothing to judge, which is
// incomplete, never a pass.
func TestBuiltinRulesAreIncompleteWithoutPoolSpans(t *testing.T) {
	_, res := gateEval(t, rulefmt.Config{}, rulefmt.BuiltinRules(rulefmt.Config{}), tracegen.ColdInitOneRead())
	for id, r := range res {
		if r.Status != StatusIncomplete || !strings.HasPrefix(r.Found, "nothing to judge") {
			t.Errorf("%s = %s (%s), want incomplete: nothing to judge", id, r.Status, r.Found)
		}
	}
	if r := res[rulefmt.RuleOneSessionPerExecution]; r.Scopes != 0 {
		t.Errorf("one-session-per-execution judged %d traces without calls, want them skipped", r.Scopes)
	}
}

// TestRedialSplitIsTheServersFindingNotThePools pins the split of
// one-session-per-execution: an execution moved to a new session by the
// transparent redial after the server forgot its session is the warning
// server-kept-execution-state, while a split the pool caused (per-call
// dial) stays the rule's error.
func TestRedialSplitIsTheServersFindingNotThePools(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	_, res := gateEval(t, rulefmt.Config{}, rules, tracegen.TTLAndRedial())
	if r := res[rulefmt.RuleOneSessionPerExecution]; r.Status != StatusPass || r.Scopes != 5 {
		t.Errorf("ttl-and-redial: %s = %s (%s), want pass over 5 executions", r.ID, r.Status, r.Found)
	}
	lost := res[rulefmt.RuleServerKeptSessions]
	if lost.Status != StatusFail || lost.Severity != rulefmt.SeverityWarning || lost.Failed != 1 || !strings.Contains(lost.Found, "lost_sessions = 1 in 1 of 5 traces") {
		t.Errorf("ttl-and-redial: %s = %+v, want a warning failing 1 of 5 traces", lost.ID, lost)
	}
	_, res = gateEval(t, rulefmt.Config{}, rules, tracegen.PerCallDial())
	if r := res[rulefmt.RuleOneSessionPerExecution]; r.Status != StatusFail || !strings.Contains(r.Found, "pool_sessions = 2") {
		t.Errorf("per-call-dial: %s = %s (%s), want a failure the pool caused", r.ID, r.Status, r.Found)
	}
	if r := res[rulefmt.RuleServerKeptSessions]; r.Status != StatusPass {
		t.Errorf("per-call-dial: %s = %s (%s), want pass: the server forgot nothing", r.ID, r.Status, r.Found)
	}
	// The calls in the words of the vocabulary read: ours, by name.
	if want := `{ name = "plugin.mcp.client.call_tool" && span.error.type = "session_expired" }`; lost.TraceQL != want {
		t.Errorf("%s TraceQL = %s, want %s", lost.ID, lost.TraceQL, want)
	}
}

// TestBuiltinSeveritiesAreConfigurable: builtin: in the configuration file
// sets a built-in rule's severity or leaves it out, and rejects what it does
// not know with the place.
func TestBuiltinSeveritiesAreConfigurable(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte("builtin:\n  server-kept-execution-state: error\n  one-session-per-execution: warning\n  acquire-has-cache-hit: off\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]rulefmt.Severity{}
	for _, r := range gc.ApplyBuiltin(rulefmt.BuiltinRules(rulefmt.Config{})) {
		got[r.ID] = r.Severity
	}
	if got[rulefmt.RuleServerKeptSessions] != rulefmt.SeverityError || got[rulefmt.RuleOneSessionPerExecution] != rulefmt.SeverityWarning || got[rulefmt.RuleNoUnexplainedMisses] != rulefmt.SeverityError {
		t.Errorf("severities = %v", got)
	}
	if _, on := got[rulefmt.RuleAcquireHasCacheHit]; on {
		t.Errorf("%s is off but still applied", rulefmt.RuleAcquireHasCacheHit)
	}
	for _, bad := range []struct{ doc, want string }{
		{"builtin:\n  no-such-rule: error\n", `mcptrace.yaml:2:3: unknown key "no-such-rule"`},
		{"builtin:\n  one-session-per-execution: loud\n", `mcptrace.yaml:2:30: builtin one-session-per-execution: severity "loud": want one of error, warning, off`},
	} {
		if _, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(bad.doc)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: err = %v, want %s", bad.doc, err, bad.want)
		}
	}
}
