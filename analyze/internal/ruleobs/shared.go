package ruleobs

import (
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// A compiled selector holds, once asked an ancestor question, a table of
// one int32 per span of the index (and a Calls selector one bool per
// span). Compiled once per selector of each rule and kept for the whole
// observation, a thousand rules on a trace of 200k spans held a thousand
// such tables. matcherCache compiles identical selectors once, whichever
// rule writes them, and lets a table go once no rule left to observe
// uses its selector: what is held is the distinct selectors of the rules
// still to come, never one per rule.
type matcherCache struct {
	byKey map[string]*selector.Matcher
	// uses counts, per selector key, the rules still to observe that use
	// it.
	uses map[string]int
	// max is how many matchers byKey may hold, -1 for any number.
	max int
}

// matcherBytes is the most a compiled selector holds per span of the
// index: its nearest-ancestor table (an int32) and a Calls selector's
// table (a bool).
const matcherBytes = 5

// keptMatchers is how many compiled selectors of an index of spans spans
// a quarter of budget holds (-1, any number, for no budget).
func keptMatchers(budget int64, spans int) int {
	if budget <= 0 {
		return -1
	}
	return int(budget / 4 / (int64(max(spans, 1)) * matcherBytes))
}

// newMatcherCache counts the selectors of rules; it keeps at most limit
// matchers at a time (-1: any number).
func newMatcherCache(rules []rulefmt.Rule, limit int) *matcherCache {
	c := &matcherCache{byKey: map[string]*selector.Matcher{}, uses: map[string]int{}, max: limit}
	for i := range rules {
		for _, k := range ruleSelectorKeys(&rules[i]) {
			c.uses[k]++
		}
	}
	return c
}

// get returns the matcher compiled for key, if one is kept; a nil cache
// keeps none.
func (c *matcherCache) get(key string) (*selector.Matcher, bool) {
	if c == nil {
		return nil, false
	}
	m, ok := c.byKey[key]
	return m, ok
}

// put keeps m for key while a rule still to observe uses it, unless the
// cache holds as many as it may: a later rule then compiles its own.
func (c *matcherCache) put(key string, m *selector.Matcher) {
	if c == nil || (c.max >= 0 && len(c.byKey) >= c.max) {
		return
	}
	if _, ok := c.uses[key]; ok {
		c.byKey[key] = m
	}
}

// done lets go of the matchers no rule after r uses.
func (c *matcherCache) done(r *rulefmt.Rule) {
	if c == nil {
		return
	}
	for _, k := range ruleSelectorKeys(r) {
		if c.uses[k]--; c.uses[k] <= 0 {
			delete(c.uses, k)
			delete(c.byKey, k)
		}
	}
}

// ruleSelectorKeys are the keys of the distinct selectors r compiles.
func ruleSelectorKeys(r *rulefmt.Rule) []string {
	var keys []string
	seen := map[string]bool{} // a rule may hold thousands: no scan per key
	add := func(s *rulefmt.Selector) {
		if s == nil {
			return
		}
		k := selectorKey(s)
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	addSel := func(s *rulefmt.SpanSelector) {
		if s != nil {
			add(&s.Selector)
			add(s.Under)
			add(s.NotUnder)
		}
	}
	add(r.CompleteWhen)
	add(r.Scope.Root)
	addSel(r.Select)
	for k := range r.Expect {
		addSel(r.Expect[k].Select)
	}
	return keys
}

// selectorKey is a text two selectors share exactly when they select the
// same spans: every field, each quoted, so no value can pass for another
// field's (a value holding a space or "=" included). Where a selector
// sits in its file is no part of it.
func selectorKey(s *rulefmt.Selector) string {
	var b strings.Builder
	q := func(v string) {
		b.WriteString(strconv.Quote(v))
		b.WriteByte(' ')
	}
	q(s.Name)
	if s.NameRegex != nil {
		q("~" + s.NameRegex.String())
	} else {
		q("")
	}
	for _, group := range [][]rulefmt.AttrMatch{s.Attributes, s.Resource} {
		b.WriteString(strconv.Itoa(len(group)) + " ")
		for _, m := range group {
			q(m.Key)
			b.WriteString(strconv.Itoa(int(m.Op)) + " ")
			if m.Regex != nil {
				q(m.Regex.String())
			} else {
				q(m.Value)
			}
		}
	}
	q(s.Kind)
	q(s.Status)
	b.WriteString(strconv.FormatBool(s.Calls))
	return b.String()
}
