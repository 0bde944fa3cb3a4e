package ruleobs

import (
	"regexp"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestSelectorKeyIsSharedExactlyByTheSameSelection pins when two rules'
// selectors share one compiled matcher: the same conditions written at
// different places of the file do; a selector differing in any field does
// not, nor one whose value holds the key's separators (a space, a quote,
// "name=").
func TestSelectorKeyIsSharedExactlyByTheSameSelection(t *testing.T) {
	base := rulefmt.Selector{Name: "plugin.mcp.invoke", Attributes: []rulefmt.AttrMatch{{Key: "k", Op: rulefmt.OpEquals, Value: "v"}}, Line: 3, Column: 5}
	moved := base
	moved.Line, moved.Column = 40, 9
	if selectorKey(&base) != selectorKey(&moved) {
		t.Errorf("the same selector at another place of the file: keys differ")
	}
	for name, other := range map[string]rulefmt.Selector{
		"name":             {Name: "plugin.mcp.invok", Attributes: base.Attributes},
		"attribute value":  {Name: base.Name, Attributes: []rulefmt.AttrMatch{{Key: "k", Op: rulefmt.OpEquals, Value: "w"}}},
		"attribute op":     {Name: base.Name, Attributes: []rulefmt.AttrMatch{{Key: "k", Op: rulefmt.OpNotEquals, Value: "v"}}},
		"resource":         {Name: base.Name, Resource: base.Attributes},
		"kind":             {Name: base.Name, Attributes: base.Attributes, Kind: "client"},
		"status":           {Name: base.Name, Attributes: base.Attributes, Status: "error"},
		"calls":            {Name: base.Name, Attributes: base.Attributes, Calls: true},
		"regex":            {NameRegex: regexp.MustCompile("plugin.mcp.invoke"), Attributes: base.Attributes},
		"value posing":     {Name: base.Name, Attributes: []rulefmt.AttrMatch{{Key: "k", Op: rulefmt.OpEquals, Value: `v" "name=x`}}},
		"name posing attr": {Name: `plugin.mcp.invoke" 1 "k`, Attributes: nil},
	} {
		if selectorKey(&base) == selectorKey(&other) {
			t.Errorf("%s: a different selector shares the key %s", name, selectorKey(&base))
		}
	}
}

// TestMatcherCacheLetsGoAfterTheLastRuleUsingIt pins the bound on compiled
// selectors held across rules: a selector two rules use is kept after the
// first (so the second compiles nothing) and let go after the second; one
// no rule counted is never kept.
func TestMatcherCacheLetsGoAfterTheLastRuleUsingIt(t *testing.T) {
	sel := func(name string) *rulefmt.SpanSelector {
		return &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: name}, Under: &rulefmt.Selector{Name: "plugin.mcp.invoke"}}
	}
	rules := []rulefmt.Rule{{ID: "a", Select: sel("call")}, {ID: "b", Select: sel("call")}, {ID: "c", Select: sel("other")}}
	c := newMatcherCache(rules, -1)
	callKey, underKey := selectorKey(&rules[0].Select.Selector), selectorKey(rules[0].Select.Under)
	if c.uses[callKey] != 2 || c.uses[underKey] != 3 {
		t.Fatalf("uses %v; want call 2, under 3", c.uses)
	}
	m := &selector.Matcher{}
	c.put(callKey, m)
	c.put("never counted", m)
	c.done(&rules[0])
	if got, ok := c.get(callKey); !ok || got != m {
		t.Errorf("after the first of two rules: the matcher is gone, want it kept")
	}
	if _, ok := c.get("never counted"); ok {
		t.Errorf("a selector no rule counted was kept")
	}
	c.done(&rules[1])
	if _, ok := c.get(callKey); ok {
		t.Errorf("after the last rule using it: the matcher is kept, want it let go")
	}
	c.done(&rules[2])
	if len(c.byKey) != 0 || len(c.uses) != 0 {
		t.Errorf("after every rule: %d matchers, %d counts held; want none", len(c.byKey), len(c.uses))
	}
}

// TestMatcherCacheKeepsNoMoreThanItsShareOfTheBudget pins the bound on
// the matchers kept for later rules: exactly as many as a quarter of the
// budget holds at matcherBytes a span are kept, one more is not (its rule
// compiles its own again), and without a budget any number is kept.
func TestMatcherCacheKeepsNoMoreThanItsShareOfTheBudget(t *testing.T) {
	const spans = 1000
	if got := keptMatchers(4*2*spans*matcherBytes, spans); got != 2 {
		t.Fatalf("keptMatchers of a budget for 2 = %d", got)
	}
	if got := keptMatchers(4*2*spans*matcherBytes-1, spans); got != 1 {
		t.Errorf("keptMatchers one byte short of 2 = %d, want 1", got)
	}
	if got := keptMatchers(0, spans); got != -1 {
		t.Errorf("keptMatchers without a budget = %d, want -1 (any number)", got)
	}
	var rules []rulefmt.Rule
	for _, name := range []string{"a", "b", "c", "a", "b", "c"} {
		rules = append(rules, rulefmt.Rule{Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: name}}})
	}
	for _, tc := range []struct {
		limit, want int
	}{{2, 2}, {-1, 3}} {
		c := newMatcherCache(rules, tc.limit)
		for _, r := range rules[:3] {
			c.put(selectorKey(&r.Select.Selector), &selector.Matcher{})
		}
		if len(c.byKey) != tc.want {
			t.Errorf("limit %d: %d matchers kept, want %d", tc.limit, len(c.byKey), tc.want)
		}
	}
}
