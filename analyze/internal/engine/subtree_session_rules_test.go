package engine

import (
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSessionRulesCountEachSubtreeExecutionsSessions pins the session
// rules' value where executions are subtrees (an execution root is
// configured): each execution counts the distinct sessions of the calls
// under its root, as in a trace scope, so one spread over two sessions
// reads 2 and one on a single session 1.
func TestSessionRulesCountEachSubtreeExecutionsSessions(t *testing.T) {
	root := rulefmt.Selector{Name: "agent.run"}
	cfg := rulefmt.Config{ExecutionRoot: &root}
	rules := rulefmt.BuiltinRules(cfg)
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	for i, sessions := range [][]string{{"s-1", "s-2"}, {"s-3", "s-3"}} {
		trace := uint64(i + 1)
		run := b.Add(ss, dumptest.Span{Trace: trace, Name: "agent.run", End: time.Minute})
		for j, s := range sessions {
			at := time.Duration(j+1) * time.Second
			inv := b.Add(ss, dumptest.Span{Trace: trace, Parent: run, Name: spans.SpanInvoke, Start: at, End: at + 100*time.Millisecond,
				Attrs: []any{spans.AttrCacheKey, "k"}})
			b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
				Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
			b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient,
				Start: at + time.Millisecond, End: at + 100*time.Millisecond,
				Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, s}})
		}
	}
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	obs, err := ObserveRules(d, cfg, rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rules, func(r rulefmt.Rule) bool { return r.ID == rulefmt.RuleOneSessionPerExecution })
	if i < 0 || rules[i].Scope.Kind != rulefmt.ScopeSubtree {
		t.Fatalf("no subtree-scoped %s among the built-in rules", rulefmt.RuleOneSessionPerExecution)
	}
	var values []float64
	for _, g := range obs[i].Groups {
		if !g.Complete {
			t.Fatalf("an incomplete group %+v", g)
		}
		for range g.Scopes {
			values = append(values, g.Values...)
		}
	}
	slices.Sort(values)
	if !slices.Equal(values, []float64{1, 2}) {
		t.Errorf("%s values per execution = %v, want [1 2] (groups %+v)", rulefmt.RuleOneSessionPerExecution, values, obs[i].Groups)
	}
}

// TestUserSessionRulesInSubtreesCountWithoutSkippingSessionless pins the
// session quantities of a user's subtree-scoped rules that do not skip
// sessionless calls (the built-in ones do, which takes another path):
// pool_sessions counts each execution's sessions not lost, lost_sessions
// those the server forgot (a call failing with session_expired), never 0
// for want of a list of the spans selected.
func TestUserSessionRulesInSubtreesCountWithoutSkippingSessionless(t *testing.T) {
	root := rulefmt.Selector{Name: "agent.run"}
	cfg := rulefmt.Config{ExecutionRoot: &root}
	builtin := rulefmt.BuiltinRules(cfg)
	i := slices.IndexFunc(builtin, func(r rulefmt.Rule) bool { return r.ID == rulefmt.RuleOneSessionPerExecution })
	pooled := builtin[i]
	pooled.ID, pooled.SkipSessionless = "user-pooled", false
	lost := pooled
	lost.ID = "user-lost"
	lost.Expect = []rulefmt.Expectation{{Of: rulefmt.QuantityLostSessions, Op: rulefmt.OpEq, Than: rulefmt.Operand{Number: 0}}}
	rules := []rulefmt.Rule{pooled, lost}
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	for i, sessions := range [][]string{{"s-1", "s-2"}, {"s-3", "s-3"}} {
		trace := uint64(i + 1)
		run := b.Add(ss, dumptest.Span{Trace: trace, Name: "agent.run", End: time.Minute})
		for j, s := range sessions {
			at := time.Duration(j+1) * time.Second
			inv := b.Add(ss, dumptest.Span{Trace: trace, Parent: run, Name: spans.SpanInvoke, Start: at, End: at + 100*time.Millisecond,
				Attrs: []any{spans.AttrCacheKey, "k"}})
			b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
				Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
			attrs := []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, s}
			if s == "s-1" {
				attrs = append(attrs, spans.AttrErrorType, spans.ErrTypeSessionExpired)
			}
			b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient,
				Start: at + time.Millisecond, End: at + 100*time.Millisecond, Attrs: attrs})
		}
	}
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	obs, err := ObserveRules(d, cfg, rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range [][]float64{{1, 1}, {0, 1}} {
		var values []float64
		for _, g := range obs[k].Groups {
			for range g.Scopes {
				values = append(values, g.Values...)
			}
		}
		slices.Sort(values)
		if !slices.Equal(values, want) {
			t.Errorf("%s: values per execution %v, want %v", rules[k].ID, values, want)
		}
	}
}

// TestSessionRulesReadTheSessionOfSpansThatAreNoCalls pins a session
// rule selecting spans that are not calls (handshakes here): their
// session is read from the vocabulary's session attribute on the span
// itself, so two handshakes on two sessions count two.
func TestSessionRulesReadTheSessionOfSpansThatAreNoCalls(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := d.add(ss, sp{trace: 1, name: spans.SpanInvoke, end: time.Minute, attrs: []any{spans.AttrCacheKey, "k"}})
	for i, s := range []string{"s-1", "s-2"} {
		at := time.Duration(i+1) * time.Second
		acq := d.add(ss, sp{trace: 1, parent: inv, name: spans.SpanAcquire, start: at, end: at + 500*time.Millisecond,
			attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
		d.add(ss, sp{trace: 1, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: at, end: at + 400*time.Millisecond,
			attrs: []any{spans.AttrSessionID, s}})
		d.add(ss, callSpan(1, inv, at+500*time.Millisecond, at+600*time.Millisecond, s)) // calls, so the writer shows them
	}
	rule := rulefmt.BuiltinRules(rulefmt.Config{})[0]
	if rule.ID != rulefmt.RuleOneSessionPerExecution {
		t.Fatalf("first built-in is %s", rule.ID)
	}
	rule.Select = &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanHandshake}}
	cfg := rulefmt.Config{}
	obs := observeIn(t, cfg, []rulefmt.Rule{rule}, d.td)
	if len(obs[0].Groups) != 1 || !slices.Equal(obs[0].Groups[0].Values, []float64{2}) {
		t.Errorf("groups %+v, want one trace reading 2 sessions", obs[0].Groups)
	}
}

// TestARuleErrorIsNotLostToTheSessionsItReads pins that a rule whose
// observation fails (here a distinct count of an attribute the dump was
// not built to keep) fails the whole observation, though the rule also
// reads sessions and the executions' figures it then asks for succeed.
func TestARuleErrorIsNotLostToTheSessionsItReads(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - id: tenants
    scope: trace
    select: {name: `+spans.SpanCallTool+`}
    expect:
      - {of: distinct, attribute: tenant.id, op: "<=", than: 1}
      - {of: pool_sessions, op: "==", than: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := observeUnkept(t, rulefmt.Config{}, gc.Rules); err == nil || !strings.Contains(err.Error(), "tenant.id") {
		t.Errorf("err %v: want the distinct count's error", err)
	}
}

// TestALostSessionIsExpiredWithALaterCallOnAnother pins what a lost
// session is: one a call found expired with a later call, at any
// distance, on another session. An expired call followed only by calls on
// the same session (the server answered again) loses none and keeps one.
func TestALostSessionIsExpiredWithALaterCallOnAnother(t *testing.T) {
	type call struct {
		session string
		expired bool
	}
	for _, tc := range []struct {
		name         string
		calls        []call
		pooled, lost float64
	}{
		{"expired then kept on its session", []call{{"s-1", true}, {"s-1", false}, {"s-1", false}}, 1, 0},
		{"expired then another session", []call{{"s-1", true}, {"s-2", false}}, 1, 1},
		{"expired, its session again, then another", []call{{"s-1", true}, {"s-1", false}, {"s-2", false}}, 1, 1},
		{"the last call expired", []call{{"s-1", false}, {"s-2", true}}, 2, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := observeOneExecution(t, func(b *dumptest.Builder, ss ptrace.SpanSlice, run uint64) {
				for j, c := range tc.calls {
					at := time.Duration(j+1) * time.Second
					inv := b.Add(ss, dumptest.Span{Trace: 1, Parent: run, Name: spans.SpanInvoke, Start: at, End: at + 100*time.Millisecond, Attrs: []any{spans.AttrCacheKey, "k"}})
					b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
						Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, true}})
					attrs := []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, c.session}
					if c.expired {
						attrs = append(attrs, spans.AttrErrorType, spans.ErrTypeSessionExpired)
					}
					b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient,
						Start: at + time.Millisecond, End: at + 100*time.Millisecond, Attrs: attrs})
				}
			})
			for k, want := range []float64{tc.pooled, tc.lost} {
				if g := obs[k].Groups; len(g) != 1 || !slices.Equal(g[0].Values, []float64{want}) {
					t.Errorf("%s: groups %+v, want one execution reading %v", []string{"pool_sessions", "lost_sessions"}[k], g, want)
				}
			}
		})
	}
}

// observeOneExecution observes, over the dump add writes under one
// agent.run root (trace 1), two rules on that execution: the built-in one
// session per execution (pool_sessions) and lost_sessions == 0.
func observeOneExecution(t *testing.T, add func(b *dumptest.Builder, ss ptrace.SpanSlice, run uint64)) []report.RuleObservation {
	t.Helper()
	root := rulefmt.Selector{Name: "agent.run"}
	cfg := rulefmt.Config{ExecutionRoot: &root}
	builtin := rulefmt.BuiltinRules(cfg)
	i := slices.IndexFunc(builtin, func(r rulefmt.Rule) bool { return r.ID == rulefmt.RuleOneSessionPerExecution })
	pooled := builtin[i]
	lost := pooled
	lost.ID = "lost"
	lost.Expect = []rulefmt.Expectation{{Of: rulefmt.QuantityLostSessions, Op: rulefmt.OpEq, Than: rulefmt.Operand{Number: 0}}}
	rules := []rulefmt.Rule{pooled, lost}
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	add(b, ss, b.Add(ss, dumptest.Span{Trace: 1, Name: "agent.run", End: time.Minute}))
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	obs, err := ObserveRules(d, cfg, rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// TestASubtreeRulesUnderLeavesOutCallsRightBelowTheScopesRoot pins
// under in a subtree scope whose root matches the under selector: a span
// is selected only when its nearest matching ancestor lies strictly below
// the scope's root, so a call right beneath the root is left out and one
// beneath a nested root counts in the outer scope alone. The distinct
// count (ranges of the tree) and the count agree.
func TestASubtreeRulesUnderLeavesOutCallsRightBelowTheScopesRoot(t *testing.T) {
	run := rulefmt.Selector{Name: "agent.run"}
	sel := &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}, Under: &run}
	scope := rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &run}
	rules := []rulefmt.Rule{
		{ID: "distinct", Scope: scope, Select: sel, AllowEmpty: true, Severity: rulefmt.SeverityError,
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityDistinct, Attribute: spans.AttrSessionID, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 5}}}},
		{ID: "count", Scope: scope, Select: sel, AllowEmpty: true, Severity: rulefmt.SeverityError,
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 5}}}},
	}
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
	outer := d.add(ss, sp{trace: 1, name: "agent.run", end: time.Minute})
	d.add(ss, callSpan(1, outer, time.Second, 2*time.Second, "s-1"))
	inner := d.add(ss, sp{trace: 1, parent: outer, name: "agent.run", start: 3 * time.Second, end: 10 * time.Second})
	d.add(ss, callSpan(1, inner, 4*time.Second, 5*time.Second, "s-2"))
	cfg := rulefmt.Config{}
	obs := observeIn(t, cfg, rules, d.td)
	for k := range rules {
		var values []float64
		for _, g := range obs[k].Groups {
			for range g.Scopes {
				values = append(values, g.Values...)
			}
		}
		slices.Sort(values)
		if !slices.Equal(values, []float64{0, 1}) {
			t.Errorf("%s: values per scope %v, want [0 1] (the inner root's call, in the outer scope only)", rules[k].ID, values)
		}
	}
}

// TestASubtreeSessionRulesAncestorsChooseItsCalls pins under and
// not_under in a subtree scope, both where the value needs the selected
// spans themselves (a session count) and where ranges of the tree count
// them (a count): a call beneath a probe, or not beneath a step, is left
// out, so the execution reads the sessions and calls of the calls kept.
func TestASubtreeSessionRulesAncestorsChooseItsCalls(t *testing.T) {
	probe, step := rulefmt.Selector{Name: "health.probe"}, rulefmt.Selector{Name: "agent.step"}
	for _, tc := range []struct {
		name            string
		under, notUnder *rulefmt.Selector
	}{
		{"not_under leaves out the probe's call", nil, &probe},
		{"under keeps only the step's call", &step, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := rulefmt.Selector{Name: "agent.run"}
			rule := rulefmt.Rule{ID: "sessions", Scope: rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &run}, Severity: rulefmt.SeverityError,
				Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}, Under: tc.under, NotUnder: tc.notUnder},
				Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityPoolSessions, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}},
					{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}}
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
			// The ancestor the selector asks of comes first: the index's
			// span 0, an ancestor like any other.
			const root, st, p = 101, 102, 103
			stepSpan := sp{trace: 1, id: st, parent: root, name: "agent.step", start: time.Second, end: 2 * time.Second}
			probeSpan := sp{trace: 1, id: p, parent: root, name: "health.probe", start: 3 * time.Second, end: 5 * time.Second}
			first, second := probeSpan, stepSpan
			if tc.under != nil {
				first, second = stepSpan, probeSpan
			}
			d.add(ss, first)
			d.add(ss, sp{trace: 1, id: root, name: "agent.run", end: time.Minute})
			d.add(ss, second)
			d.add(ss, callSpan(1, st, time.Second, 2*time.Second, "s-1"))
			d.add(ss, callSpan(1, p, 4*time.Second, 5*time.Second, "s-2"))
			d.add(ss, callSpan(1, root, 6*time.Second, 7*time.Second, "s-3"))
			cfg := rulefmt.Config{}
			obs := observeIn(t, cfg, []rulefmt.Rule{rule}, d.td)
			want := []float64{2, 2} // s-1 and s-3: two sessions, two calls
			if tc.under != nil {
				want = []float64{1, 1} // s-1
			}
			if g := obs[0].Groups; len(g) != 1 || !slices.Equal(g[0].Values, want) {
				t.Errorf("groups %+v, want one execution reading %v (sessions, calls)", g, want)
			}
		})
	}
}
