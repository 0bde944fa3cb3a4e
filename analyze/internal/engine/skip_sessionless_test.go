package engine

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAScopeWithNoSelectedSpanIsNotSessionless pins skip_sessionless at
// its edge: a scope is left out as not applicable only when it selects
// spans and every one ran against a sessionless server (the third trace);
// a scope that selects none is judged (or skipped as empty, where the rule
// says so), never counted not applicable.
func TestAScopeWithNoSelectedSpanIsNotSessionless(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r1 := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, callSpan(1, r1, 0, time.Millisecond, "s1"))
	d.add(ss, sp{trace: 2, name: "request", end: time.Second}) // no call
	r3 := d.add(ss, sp{trace: 3, name: "request", end: time.Second})
	d.add(ss, sp{trace: 3, parent: r3, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, end: time.Millisecond,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrProtocolVersion, spans.ProtocolModern}})
	rule := rulefmt.Rule{ID: "r", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, SkipSessionless: true,
		Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}, Severity: rulefmt.SeverityError}
	cfg := rulefmt.Config{}
	idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions([]rulefmt.Rule{rule})))
	idx.Add(d.td)
	a, err := AnalyzeRules(asDump(idx), cfg, []rulefmt.Rule{rule}, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obs := a.Rules[0]
	scopes := 0
	for _, g := range obs.Groups {
		scopes += g.Scopes
	}
	if obs.NotApplicable != 1 || scopes != 2 {
		t.Errorf("not applicable %d, scopes judged %d; want 1 (the sessionless trace) and the other two", obs.NotApplicable, scopes)
	}
}

// TestScopesOfOneValueAreGroupedApartByWhetherTheySelectedSpans pins how
// a rule's scopes are grouped: two traces reading the same value stay in
// two groups when one selected spans (its offenders are named) and the
// other none (the trace itself is named), so neither is named for the
// other.
func TestScopesOfOneValueAreGroupedApartByWhetherTheySelectedSpans(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r1 := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, sp{trace: 1, parent: r1, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, end: time.Millisecond,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}}) // no tenant
	d.add(ss, sp{trace: 2, name: "request", end: time.Second}) // no call
	rule := rulefmt.Rule{ID: "tenant", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, AllowEmpty: true,
		Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityDistinct, Attribute: "tenant.id", Op: rulefmt.OpGe, Than: rulefmt.Operand{Number: 1}}}, Severity: rulefmt.SeverityError}
	cfg := rulefmt.Config{}
	idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions([]rulefmt.Rule{rule})))
	idx.Add(d.td)
	obs, err := ObserveRules(asDump(idx), cfg, []rulefmt.Rule{rule}, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var offenders []int
	for _, g := range obs[0].Groups {
		if !slices.Equal(g.Values, []float64{0}) || g.Scopes != 1 {
			t.Errorf("group %+v; want one scope reading 0", g)
		}
		offenders = append(offenders, len(g.Offenders[0]))
	}
	slices.Sort(offenders)
	if !slices.Equal(offenders, []int{0, 1}) {
		t.Errorf("offenders per group %v; want [0 1]: the call's trace, and the trace without one", offenders)
	}
}

// TestASubtreeWithNoSelectedSpanIsEmptyNotSessionless pins
// skip_sessionless and skip_empty over subtree scopes: a subtree whose
// calls are all sessionless is not applicable, one with no call is skipped
// as empty (never counted not applicable), and the one with a call on a
// session is judged, its sessionless call left out of its count.
func TestASubtreeWithNoSelectedSpanIsEmptyNotSessionless(t *testing.T) {
	run := rulefmt.Selector{Name: "agent.run"}
	rule := rulefmt.Rule{ID: "r", Scope: rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &run}, SkipSessionless: true, SkipEmpty: true,
		Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}, Severity: rulefmt.SeverityError}
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r1 := d.add(ss, sp{trace: 1, name: "agent.run", end: time.Second})
	d.add(ss, callSpan(1, r1, 0, time.Millisecond, "s1"))
	d.add(ss, sp{trace: 1, parent: r1, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, end: time.Millisecond,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrProtocolVersion, spans.ProtocolModern}}) // not counted
	d.add(ss, sp{trace: 2, name: "agent.run", end: time.Second}) // no call
	r3 := d.add(ss, sp{trace: 3, name: "agent.run", end: time.Second})
	d.add(ss, sp{trace: 3, parent: r3, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, end: time.Millisecond,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrProtocolVersion, spans.ProtocolModern}})
	obs := observeIn(t, rulefmt.Config{}, []rulefmt.Rule{rule}, d.td)[0]
	scopes := 0
	for _, g := range obs.Groups {
		scopes += g.Scopes
	}
	if obs.NotApplicable != 1 || scopes != 1 || !slices.Equal(obs.Groups[0].Values, []float64{1}) {
		t.Errorf("not applicable %d, scopes judged %d, groups %+v; want 1 (the sessionless subtree) and 1 (the session's, counting its one call on a session)", obs.NotApplicable, scopes, obs.Groups)
	}
}
