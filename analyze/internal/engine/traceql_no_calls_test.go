package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestACallsRulesQueryWithoutCallsToNameIsItsOwnSelectors pins the query
// of a rule selecting calls when the vocabulary, built in code, names no
// call selector: the rule's own selector's words stand, never the words of
// a call selector that is not there.
func TestACallsRulesQueryWithoutCallsToNameIsItsOwnSelectors(t *testing.T) {
	voc := &rulefmt.Vocabulary{Name: "no-calls", Session: rulefmt.SessionSource{Attribute: spans.AttrSessionID}}
	cfg := rulefmt.Config{Vocabulary: voc}
	sel := &rulefmt.SpanSelector{Selector: rulefmt.Selector{Calls: true, Kind: "client"}}
	rule := rulefmt.Rule{ID: "calls", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Select: sel, AllowEmpty: true, Severity: rulefmt.SeverityError,
		Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpGe, Than: rulefmt.Operand{Number: 1}}}}
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	d.add(ss, callSpan(1, r, 0, time.Millisecond, "s1"))
	obs := observeIn(t, cfg, []rulefmt.Rule{rule}, d.td)
	if want := sel.TraceQL() + " | "; !strings.HasPrefix(obs[0].TraceQL, want) {
		t.Errorf("query %q, want it to start with the rule's own selector, %q", obs[0].TraceQL, want)
	}
}
