package engine

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSubtreeCountsByRangesEqualCountsSpanBySpan pins the subtree
// aggregator, which counts a rule's selected spans and their distinct
// sessions by ranges of the tree, against the scope-by-scope path that
// tests each span with the selector (taken when a rule skips sessionless
// spans, which these dumps do not hold): over random trees of nested
// roots, steps and probes, with the index's span order shuffled, and every
// combination of under and not_under, both give every scope the same
// values.
func TestSubtreeCountsByRangesEqualCountsSpanBySpan(t *testing.T) {
	names := []string{"agent.run", "agent.step", "health.probe", spans.SpanCallTool}
	run := rulefmt.Selector{Name: "agent.run"}
	ancestors := []*rulefmt.Selector{nil, {Name: "agent.run"}, {Name: "agent.step"}, {Name: "health.probe"}}
	cases := 60
	if testing.Short() {
		cases = 15
	}
	for seed := range cases {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		d := newDump()
		ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
		addRandomTrees(d, ss, rng, names)
		for _, under := range ancestors {
			for _, notUnder := range ancestors {
				sel := &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}, Under: under, NotUnder: notUnder}
				expect := []rulefmt.Expectation{
					{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}},
					{Of: rulefmt.QuantityDistinct, Attribute: spans.AttrSessionID, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}},
				}
				byRange := rulefmt.Rule{ID: "ranges", Scope: rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: &run}, Select: sel, Expect: expect, AllowEmpty: true, Severity: rulefmt.SeverityError}
				bySpan := byRange
				bySpan.ID, bySpan.SkipSessionless = "spans", true
				obs := observeIn(t, rulefmt.Config{}, []rulefmt.Rule{byRange, bySpan}, d.td)
				if got, want := fmt.Sprintf("%+v", obs[0].Groups), fmt.Sprintf("%+v", obs[1].Groups); got != want {
					t.Fatalf("seed %d, %s: by ranges %s, span by span %s", seed, sel, got, want)
				}
			}
		}
	}
}

// addRandomTrees adds a few traces of random trees of names to ss, each
// rooted at an agent.run, each other span's parent an earlier span of its
// trace, the calls on one of three sessions, in an order shuffled so the
// index's span numbers do not follow the tree's.
func addRandomTrees(d *dump, ss ptrace.SpanSlice, rng *rand.Rand, names []string) {
	var all []sp
	id := uint64(1)
	for tr := uint64(1); tr <= 3; tr++ {
		var ids []uint64
		for k := range 2 + rng.IntN(14) {
			s := sp{trace: tr, id: id, name: names[0], start: time.Duration(k) * time.Millisecond, end: time.Minute}
			if k > 0 {
				s.parent = ids[rng.IntN(len(ids))]
				s.name = names[rng.IntN(len(names))]
			}
			if s.name == spans.SpanCallTool {
				s.kind = ptrace.SpanKindClient
				s.attrs = []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, fmt.Sprintf("s-%d", rng.IntN(3))}
			}
			ids = append(ids, id)
			all = append(all, s)
			id++
		}
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, s := range all {
		d.add(ss, s)
	}
}
