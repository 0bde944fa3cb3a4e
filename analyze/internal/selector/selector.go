package selector

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Matcher is a Selector compiled against one finished index: names and
// values become table lookups, so matching a span costs a few comparisons.
type Matcher struct {
	x       *index.Index
	AnyName bool
	NameOK  []bool // per name id
	Attrs   []condition
	Res     []condition
	Kind    int16 // 0: any (no selector names the unspecified kind)
	Status  int16 // -1: any
	// near is, per span index, the nearest proper ancestor the selector
	// matches (-1 none), computed on first use by nearest: ancestor
	// questions then cost O(1) per span instead of a walk up the chain.
	near []int32
	// only, when set, is per span index whether the span may match at all:
	// a Calls selector's tool calls, from the vocabulary stage.
	Only []bool
	// Calls counts the spans match was asked about: a test pins that a rule
	// looks at each span a bounded number of times, whatever the depth.
	Calls int64
}

// Nearest returns the nearest proper ancestor of span i that m matches, -1
// when none.
func (m *Matcher) Nearest(i int32) int32 {
	if m.near == nil {
		m.near = m.x.NearestAncestors(m.Match)
	}
	return m.near[i]
}

// NearestOrSelf returns span i when m matches it, else its nearest proper
// ancestor that m matches, -1 when none.
func (m *Matcher) NearestOrSelf(i int32) int32 {
	if m.Match(i) {
		return i
	}
	return m.Nearest(i)
}

type condition struct {
	key   uint16
	op    rulefmt.MatchOp
	val   int32 // OpEquals/OpNotEquals: interned value, -1 if no span has it
	re    *regexp.Regexp
	cache []int8 // OpRegex: per value id, 0 unknown, 1 match, 2 no match
}

// Compile binds sel to x. It fails when sel names an attribute the index did
// not keep: the index must be built with the configuration's IndexOptions.
func Compile(x *index.Index, sel rulefmt.Selector) (*Matcher, error) {
	return CompileContext(context.Background(), x, sel)
}

// CompileContext is compile stopped by ctx between two regex matches.
//
// A regex is matched at most once per distinct span name or value (names
// here, values on first need, both cached), never once per span; and the
// work that can take is bounded before any of it is done: Go's regexp runs
// in time proportional to the program's instructions times the text's
// bytes, so a selector whose regex program exceeds maxRegexInsts is refused,
// naming the regex and its size, instead of running for minutes (a legal
// 3000-state regex over 80 long span names would).
func CompileContext(ctx context.Context, x *index.Index, sel rulefmt.Selector) (*Matcher, error) {
	x.Finish()
	if sel.Calls {
		return nil, errors.New("a selector of the vocabulary's calls is only for a rule's selection")
	}
	m := &Matcher{x: x, AnyName: sel.Name == "" && sel.NameRegex == nil, Status: -1}
	if !m.AnyName {
		if sel.NameRegex != nil {
			if err := rulefmt.CheckRegexBudget(sel.NameRegex, "name_regex"); err != nil {
				return nil, err
			}
		}
		m.NameOK = make([]bool, len(x.Names))
		for i, n := range x.Names {
			if sel.NameRegex != nil {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			m.NameOK[i] = n == sel.Name || (sel.NameRegex != nil && sel.NameRegex.MatchString(n))
		}
	}
	if k, ok := sel.SpanKind(); ok {
		m.Kind = int16(k)
	}
	if c, ok := sel.StatusCode(); ok {
		m.Status = int16(c)
	}
	var err error
	if m.Attrs, err = compileConds(x, sel.Attributes, x.SpanKeyOK, "span"); err != nil {
		return nil, err
	}
	if m.Res, err = compileConds(x, sel.Resource, x.ResKeyOK, "resource"); err != nil {
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

// Match reports whether span i satisfies the selector.
func (m *Matcher) Match(i int32) bool {
	m.Calls++
	if m.Only != nil && !m.Only[i] {
		return false
	}
	s := m.x.Span(i)
	if !m.AnyName && !m.NameOK[s.Name] {
		return false
	}
	if m.Kind > 0 && int16(s.Kind) != m.Kind {
		return false
	}
	if m.Status >= 0 && int16(s.Status) != m.Status {
		return false
	}
	for k := range m.Attrs {
		v, ok := m.x.AttrVal(i, m.Attrs[k].key)
		if !m.Attrs[k].holds(m.x, v, ok) {
			return false
		}
	}
	for k := range m.Res {
		v, ok := m.x.ResAttrVal(i, m.Res[k].key)
		if !m.Res[k].holds(m.x, v, ok) {
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
