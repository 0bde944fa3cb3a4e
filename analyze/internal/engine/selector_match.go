package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// matcher is a Selector compiled against one finished index: names and
// values become table lookups, so matching a span costs a few comparisons.
type matcher struct {
	x       *index.Index
	anyName bool
	nameOK  []bool // per name id
	attrs   []condition
	res     []condition
	kind    int16 // -1: any
	status  int16 // -1: any
	// near is, per span index, the nearest proper ancestor the selector
	// matches (-1 none), computed on first use by nearest: ancestor
	// questions then cost O(1) per span instead of a walk up the chain.
	near []int32
	// only, when set, is per span index whether the span may match at all:
	// a Calls selector's tool calls, from the vocabulary stage.
	only []bool
	// calls counts the spans match was asked about: a test pins that a rule
	// looks at each span a bounded number of times, whatever the depth.
	calls int64
}

// nearest returns the nearest proper ancestor of span i that m matches, -1
// when none.
func (m *matcher) nearest(i int32) int32 {
	if m.near == nil {
		m.near = m.x.NearestAncestors(m.match)
	}
	return m.near[i]
}

// nearestOrSelf returns span i when m matches it, else its nearest proper
// ancestor that m matches, -1 when none.
func (m *matcher) nearestOrSelf(i int32) int32 {
	if m.match(i) {
		return i
	}
	return m.nearest(i)
}

type condition struct {
	key   uint16
	op    rulefmt.MatchOp
	val   int32 // OpEquals/OpNotEquals: interned value, -1 if no span has it
	re    *regexp.Regexp
	cache []int8 // OpRegex: per value id, 0 unknown, 1 match, 2 no match
}

// compile binds sel to x. It fails when sel names an attribute the index did
// not keep: the index must be built with the configuration's IndexOptions.
func compile(x *index.Index, sel rulefmt.Selector) (*matcher, error) {
	return compileContext(context.Background(), x, sel)
}

// compileContext is compile stopped by ctx between two regex matches.
//
// A regex is matched at most once per distinct span name or value (names
// here, values on first need, both cached), never once per span; and the
// work that can take is bounded before any of it is done: Go's regexp runs
// in time proportional to the program's instructions times the text's
// bytes, so a selector whose regex program exceeds maxRegexInsts is refused,
// naming the regex and its size, instead of running for minutes (a legal
// 3000-state regex over 80 long span names would).
func compileContext(ctx context.Context, x *index.Index, sel rulefmt.Selector) (*matcher, error) {
	x.Finish()
	if sel.Calls {
		return nil, errors.New("a selector of the vocabulary's calls is only for a rule's selection")
	}
	m := &matcher{x: x, anyName: sel.Name == "" && sel.NameRegex == nil, kind: -1, status: -1}
	if !m.anyName {
		if sel.NameRegex != nil {
			if err := rulefmt.CheckRegexBudget(sel.NameRegex, "name_regex"); err != nil {
				return nil, err
			}
		}
		m.nameOK = make([]bool, len(x.Names))
		for i, n := range x.Names {
			if sel.NameRegex != nil {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			m.nameOK[i] = n == sel.Name || (sel.NameRegex != nil && sel.NameRegex.MatchString(n))
		}
	}
	if k, ok := sel.SpanKind(); ok {
		m.kind = int16(k)
	}
	if c, ok := sel.StatusCode(); ok {
		m.status = int16(c)
	}
	var err error
	if m.attrs, err = compileConds(x, sel.Attributes, x.SpanKeyOK, "span"); err != nil {
		return nil, err
	}
	if m.res, err = compileConds(x, sel.Resource, x.ResKeyOK, "resource"); err != nil {
		return nil, err
	}
	return m, nil
}

func compileConds(x *index.Index, ms []rulefmt.AttrMatch, kept []bool, what string) ([]condition, error) {
	conds := make([]condition, 0, len(ms))
	for _, am := range ms {
		id, ok := x.LookupKey(am.Key)
		if !ok || !kept[id] {
			return nil, fmt.Errorf("selector reads %s attribute %q, which the index did not keep: build it with the configuration's IndexOptions", what, am.Key)
		}
		c := condition{key: id, op: am.Op, re: am.Regex, val: -1}
		switch am.Op {
		case rulefmt.OpEquals, rulefmt.OpNotEquals:
			c.val = x.LookupValue(am.Value)
		case rulefmt.OpRegex:
			if err := rulefmt.CheckRegexBudget(am.Regex, what+" attribute "+strconv.Quote(am.Key)+" regex"); err != nil {
				return nil, err
			}
			c.cache = make([]int8, len(x.Vals))
		}
		conds = append(conds, c)
	}
	return conds, nil
}

// match reports whether span i satisfies the selector.
func (m *matcher) match(i int32) bool {
	m.calls++
	if m.only != nil && !m.only[i] {
		return false
	}
	s := m.x.Span(i)
	if !m.anyName && !m.nameOK[s.Name] {
		return false
	}
	if m.kind >= 0 && int16(s.Kind) != m.kind {
		return false
	}
	if m.status >= 0 && int16(s.Status) != m.status {
		return false
	}
	for k := range m.attrs {
		v, ok := m.x.AttrVal(i, m.attrs[k].key)
		if !m.attrs[k].holds(m.x, v, ok) {
			return false
		}
	}
	for k := range m.res {
		v, ok := m.x.ResAttrVal(i, m.res[k].key)
		if !m.res[k].holds(m.x, v, ok) {
			return false
		}
	}
	return true
}

func (c *condition) holds(x *index.Index, v int32, present bool) bool {
	switch c.op {
	case rulefmt.OpEquals:
		return present && v == c.val
	case rulefmt.OpNotEquals:
		return !present || v != c.val
	case rulefmt.OpExists:
		return present
	case rulefmt.OpAbsent:
		return !present
	case rulefmt.OpRegex:
		if !present {
			return false
		}
		switch c.cache[v] {
		case 1:
			return true
		case 2:
			return false
		}
		ok := c.re.MatchString(x.Vals[v])
		c.cache[v] = 2
		if ok {
			c.cache[v] = 1
		}
		return ok
	}
	return false
}
