package engine

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestRuleScopesSayWhyTheyAreIncomplete pins which scopes a rule may
// judge and why the others wait, over readsDump: per subtree and per
// trace, a scope whose trace lacks a span matching complete_when (trace
// 3) waits for it, one whose trace lacks a parent span (trace 4) waits
// for that parent; without complete_when only the missing parent counts.
func TestRuleScopesSayWhyTheyAreIncomplete(t *testing.T) {
	sel := func(s string) *rulefmt.Selector { x := parseSel(t, s); return &x }
	reads := &rulefmt.SpanSelector{Selector: *sel("db.query")}
	expect := []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpGe, Than: rulefmt.Operand{Number: 0}}}
	subtree := rulefmt.Scope{Kind: rulefmt.ScopeSubtree, Root: sel("request")}
	trace := rulefmt.Scope{Kind: rulefmt.ScopeTrace}
	cases := []struct {
		name                    string
		rule                    rulefmt.Rule
		complete, parent, other int // scopes: complete, waiting for a parent, waiting for complete_when
	}{
		// Subtrees: T1, T2 and T5's two are complete; T3 lacks its worker,
		// T4 its parent.
		{"subtrees with complete_when", rulefmt.Rule{Scope: subtree, CompleteWhen: sel("worker")}, 4, 1, 1},
		{"subtrees without", rulefmt.Rule{Scope: subtree}, 5, 1, 0},
		{"traces with complete_when", rulefmt.Rule{Scope: trace, CompleteWhen: sel("worker")}, 3, 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.rule
			r.ID, r.Select, r.Expect, r.Severity = "r", reads, expect, rulefmt.SeverityError
			cfg := rulefmt.Config{}
			idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions([]rulefmt.Rule{r})))
			idx.Add(readsDump().td)
			a, err := AnalyzeRules(asDump(idx), cfg, []rulefmt.Rule{r}, ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var complete, parent, other int
			for _, g := range a.Rules[0].Groups {
				switch {
				case g.Complete:
					complete += g.Scopes
				case g.MissingParent:
					parent += g.Scopes
				default:
					other += g.Scopes
				}
			}
			if complete != tc.complete || parent != tc.parent || other != tc.other {
				t.Errorf("complete %d, waiting for a parent %d, for complete_when %d; want %d, %d, %d",
					complete, parent, other, tc.complete, tc.parent, tc.other)
			}
		})
	}
}
