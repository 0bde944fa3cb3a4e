package engine

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAScopeWithNoSelectedSpanIsNotSessionless pins skip_sessionless at
// its edge: a scope is left out as not applicable only when it selects
// spans and every one ran against a sessionless server; a scope that
// selects none is judged (or skipped as empty, where the rule says so),
// never counted not applicable.
func TestAScopeWithNoSelectedSpanIsNotSessionless(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r1 := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, callSpan(1, r1, 0, time.Millisecond, "s1"))
	d.add(ss, sp{trace: 2, name: "request", end: time.Second}) // no call
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
	if obs.NotApplicable != 0 || scopes != 2 {
		t.Errorf("not applicable %d, scopes judged %d; want 0 and both traces", obs.NotApplicable, scopes)
	}
}
