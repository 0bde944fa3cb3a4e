package ruleobs

import (
	"cmp"
	"slices"
	"sort"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
)

// subtreeAgg answers a rule's count and distinct expectations for every
// subtree scope of the rule at once, in O(n log n) over the spans, however
// the subtrees nest. Judging each subtree by looking at its spans would
// cost the sum of the subtree sizes: depth² on a chain of nested roots (a
// runaway recursion of invocations, each the root of a scope).
//
// Scope k is rooted at span r with the depth-first range [L, R) =
// [pre[r], end[r]). A span i of that range is selected by a compiledSel
// when the selector matches i itself and, for under and not_under, when
// the nearest matching proper ancestor of i lies strictly below r: for an
// ancestor a of a span in the range, pre[a] in (L, R). So each selected
// span becomes a point keyed by a depth-first position (its own, or its
// nearest under ancestor's), and a scope's count is the number of keys in
// a range: two binary searches over the sorted keys.
type subtreeAgg struct {
	x      *index.Index
	t      *index.Tree
	scopes []RuleScope
	counts map[*CompiledSel][]int32
	dist   map[distinctKey][]int32
	pts    map[*CompiledSel][]selPoint
}

type distinctKey struct {
	c   *CompiledSel
	key uint16
}

// NewSubtreeAgg returns the aggregator that answers, for scopes over x,
// each scope's counts and distinct values by range queries on the tree.
func NewSubtreeAgg(x *index.Index, scopes []RuleScope) *subtreeAgg {
	return &subtreeAgg{x: x, t: x.Tree(), scopes: scopes, counts: map[*CompiledSel][]int32{}, dist: map[distinctKey][]int32{}, pts: map[*CompiledSel][]selPoint{}}
}

// selPoint is one span the selector matches itself: pos is its depth-first
// position, under and notUnder the positions of its nearest proper ancestor
// matching under and not_under (-1 none, or no such selector).
type selPoint struct {
	span                 int32
	pos, under, notUnder int32
}

// points lists, in depth-first order, the spans c.self matches.
func (g *subtreeAgg) points(c *CompiledSel) []selPoint {
	var out []selPoint
	for pos, i := range g.t.DFS {
		if !c.Self.Match(i) {
			continue
		}
		p := selPoint{span: i, pos: int32(pos), under: -1, notUnder: -1}
		if c.Under != nil {
			if a := c.Under.Nearest(i); a >= 0 {
				p.under = g.t.Pre[a]
			}
		}
		if c.NotUnder != nil {
			if a := c.NotUnder.Nearest(i); a >= 0 {
				p.notUnder = g.t.Pre[a]
			}
		}
		out = append(out, p)
	}
	return out
}

// Count returns how many spans c selects in scope k.
func (g *subtreeAgg) Count(c *CompiledSel, k int) int {
	if cs, ok := g.counts[c]; ok {
		return int(cs[k])
	}
	pts := g.points(c)
	// The keys counted with a plus and with a minus sign. A span is
	// selected in the scope rooted at r (range [L, R)) when:
	//   no under, no not_under: pos in [L, R)
	//   no under, not_under:    pos in [L, R), minus notUnder in (L, R)
	//   under, no not_under:    under in (L, R)
	//   under and not_under:    under in (L, R), minus min(under,
	//                           notUnder) in (L, R) when both exist
	// (the root itself is selected only without under, as selects says).
	// A missing ancestor is -1, which lies in no scope's range (each
	// starts at 0, and at L+1 where the root is left out), so it needs no
	// test of its own: min(under, -1) counts nothing, as under -1 does.
	plus, minus := make([]int32, len(pts)), make([]int32, len(pts))
	for j, p := range pts {
		if c.Under == nil {
			plus[j], minus[j] = p.pos, p.notUnder
		} else {
			plus[j], minus[j] = p.under, min(p.under, p.notUnder)
		}
	}
	slices.Sort(plus)
	slices.Sort(minus)
	inRange := func(keys []int32, lo, hi int32) int32 { // keys in [lo, hi)
		a, _ := slices.BinarySearch(keys, lo)
		b, _ := slices.BinarySearch(keys, hi)
		return int32(b - a)
	}
	cs := make([]int32, len(g.scopes))
	for k, sc := range g.scopes {
		L, R := g.t.Pre[sc.Root], g.t.End[sc.Root]
		lo := L
		if c.Under != nil {
			lo = L + 1 // strictly below the root
		}
		cs[k] = inRange(plus, lo, R) - inRange(minus, L+1, R)
	}
	g.counts[c] = cs
	return int(cs[k])
}

// Distinct returns how many distinct values of span attribute key the
// spans c selects in scope k carry. Without not_under the selected spans of
// a scope are the points whose key lies in a range, and the distinct values
// over every range are counted offline in O(n log n): ranges by their end,
// a Fenwick tree holding 1 at the last point of each value seen so far.
// With not_under (no built-in rule has it) the scope's spans are looked at
// one by one.
func (g *subtreeAgg) Distinct(c *CompiledSel, key uint16, k int) int {
	dk := distinctKey{c, key}
	ds, ok := g.dist[dk]
	if !ok {
		if c.NotUnder != nil {
			ds = g.distinctEach(c, key)
		} else {
			ds = g.distinctByRange(c, key)
		}
		g.dist[dk] = ds
	}
	return int(ds[k])
}

// distinctEach counts the distinct values of key over the spans c selects,
// scope by scope (a not_under selector: no ranges of the tree to share).
func (g *subtreeAgg) distinctEach(c *CompiledSel, key uint16) []int32 {
	ds := make([]int32, len(g.scopes))
	for k, sc := range g.scopes {
		vals := map[int32]bool{}
		for _, i := range sc.Spans {
			if c.Selects(g.x, i, sc.Root) {
				if v, ok := g.x.AttrVal(i, key); ok {
					vals[v] = true
				}
			}
		}
		ds[k] = int32(len(vals))
	}
	return ds
}

// valuePoint is a selected span's value of a key at its place in the
// tree's depth-first order (or its under ancestor's).
type valuePoint struct{ key, val int32 }

// distinctByRange counts the distinct values of key over the spans c
// selects in every scope at once: each scope is a range of the depth-first
// order, and the distinct values of ranges are counted offline (ranges by
// their end, each value counted at its latest point, in a Fenwick tree).
func (g *subtreeAgg) distinctByRange(c *CompiledSel, key uint16) []int32 {
	var pts []valuePoint
	for _, p := range g.points(c) {
		v, ok := g.x.AttrVal(p.span, key)
		if !ok {
			continue
		}
		at := p.pos
		if c.Under != nil {
			at = p.under // -1, no under ancestor, lies in no scope's range
		}
		pts = append(pts, valuePoint{at, v})
	}
	sort.SliceStable(pts, func(a, b int) bool { return pts[a].key < pts[b].key })
	return g.distinctInRanges(pts, c.Under != nil)
}

// distinctInRanges counts the distinct values of pts (sorted by key) in
// each scope's range of the depth-first order, past the scope's root when
// under is set.
func (g *subtreeAgg) distinctInRanges(pts []valuePoint, under bool) []int32 {
	keys := make([]int32, len(pts))
	for j, p := range pts {
		keys[j] = p.key
	}
	// Each scope as a range [lo, hi) of pts.
	type query struct{ lo, hi, scope int32 }
	qs := make([]query, len(g.scopes))
	for k, sc := range g.scopes {
		L, R := g.t.Pre[sc.Root], g.t.End[sc.Root]
		if under {
			L++
		}
		lo, _ := slices.BinarySearch(keys, L)
		hi, _ := slices.BinarySearch(keys, R)
		qs[k] = query{int32(lo), int32(hi), int32(k)}
	}
	slices.SortFunc(qs, func(a, b query) int { return int(a.hi - b.hi) })
	fen := make([]int32, len(pts)+1)
	add := func(j int, d int32) {
		for j++; j < len(fen); j += j & -j {
			fen[j] += d
		}
	}
	sum := func(j int) int32 { // points [0, j)
		var s int32
		for ; j > 0; j -= j & -j {
			s += fen[j]
		}
		return s
	}
	ds := make([]int32, len(g.scopes))
	last := map[int32]int{}
	next := 0
	for _, q := range qs {
		for ; next < int(q.hi); next++ {
			v := pts[next].val
			if j, ok := last[v]; ok {
				add(j, -1)
			}
			add(next, 1)
			last[v] = next
		}
		ds[q.scope] = sum(int(q.hi)) - sum(int(q.lo))
	}
	return ds
}

// selected lists the spans c selects in scope k, in depth-first order.
// Without under and not_under (the built-in session rules' selector) they
// are one run of the selector's points, found by binary search, so a scope
// costs its own selected spans and no more; otherwise the scope's spans are
// tested one by one.
func (g *subtreeAgg) selected(c *CompiledSel, k int) []int32 {
	sc := g.scopes[k]
	if c.Under != nil || c.NotUnder != nil {
		var out []int32
		for _, i := range sc.Spans {
			if c.Selects(g.x, i, sc.Root) {
				out = append(out, i)
			}
		}
		return out
	}
	pts, ok := g.pts[c]
	if !ok {
		pts = g.points(c)
		g.pts[c] = pts
	}
	L, R := g.t.Pre[sc.Root], g.t.End[sc.Root]
	lo, _ := slices.BinarySearchFunc(pts, L, func(p selPoint, t int32) int { return cmp.Compare(p.pos, t) })
	hi, _ := slices.BinarySearchFunc(pts, R, func(p selPoint, t int32) int { return cmp.Compare(p.pos, t) })
	out := make([]int32, 0, hi-lo)
	for _, p := range pts[lo:hi] {
		out = append(out, p.span)
	}
	return out
}
