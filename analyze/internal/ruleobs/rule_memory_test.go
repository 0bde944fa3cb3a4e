package ruleobs

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestARuleWhoseAncestorTablesPassTheBudgetIsRefused pins the bound on
// what one rule's selectors hold: each under (or not_under) selector
// keeps an int32 per span of the index once asked, so a rule of many
// expectations, each under its own ancestor, is refused with
// ErrRuleMemory as soon as its tables would pass a quarter of the memory
// budget, exactly at the edge: as many as fit are observed. Without a
// budget any number is.
func TestARuleWhoseAncestorTablesPassTheBudgetIsRefused(t *testing.T) {
	b := dumptest.New()
	ss := b.Resource("service.name", "agent")
	const spans = 1000
	for i := range spans {
		b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: "call", Start: time.Duration(i) * time.Millisecond, End: time.Duration(i+1) * time.Millisecond})
	}
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(b.Traces())
	rule := func(unders int) rulefmt.Rule {
		r := rulefmt.Rule{ID: "many", Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump}, Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: "call"}}}
		for k := range unders {
			r.Expect = append(r.Expect, rulefmt.Expectation{Of: "count", Op: ">=", Than: rulefmt.Operand{},
				Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: "call"}, Under: &rulefmt.Selector{Name: fmt.Sprintf("n%d", k)}}})
		}
		return r
	}
	const fit = 10 // a quarter of the budget below holds ten tables of 4 bytes a span
	budget := int64(4 * fit * 4 * spans)
	for _, tc := range []struct {
		unders  int
		budget  int64
		refused bool
	}{
		{fit, budget, false},
		{fit + 1, budget, true},
		{100, 0, false},
	} {
		t.Run(fmt.Sprintf("%d unders, budget %d", tc.unders, tc.budget), func(t *testing.T) {
			_, err := Observe(context.Background(), idx, rulefmt.Config{}, []rulefmt.Rule{rule(tc.unders)}, ObserveOptions{MemoryBudget: tc.budget}, nil)
			if got := errors.Is(err, ErrRuleMemory); got != tc.refused {
				t.Errorf("err %v: refused %v, want %v", err, got, tc.refused)
			}
			if !tc.refused && err != nil {
				t.Errorf("err %v, want none", err)
			}
		})
	}
}
