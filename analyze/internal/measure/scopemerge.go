package measure

import (
	"cmp"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
)

// cmpPairTimeOf is CmpPairTime on pointers, each key compared only when
// the ones before it tie (the trace ids' bytes seldom): the sorts and
// merges of the attribution compare more than anything else it does.
func cmpPairTimeOf(a, b *record.Acquire) int {
	if a.Start != b.Start {
		return cmp.Compare(a.Start, b.Start)
	}
	if a.LeaseEnd != b.LeaseEnd {
		return cmp.Compare(a.LeaseEnd, b.LeaseEnd)
	}
	return cmpEventSpan(a, b)
}

// mergeGroups appends to dst the acquires of groups, each already in time
// order (CmpPairTime), merged into one time order: a k-way merge on a heap
// of the groups' heads, n·log k comparisons where sorting the n acquires
// again would make n·log n. A scope's pairs are few next to its acquires.
func mergeGroups(dst []*record.Acquire, groups [][]record.Acquire) []*record.Acquire {
	switch len(groups) {
	case 0:
		return dst
	case 1:
		for i := range groups[0] {
			dst = append(dst, &groups[0][i])
		}
		return dst
	}
	h := groupHeap{heads: make([]groupHead, 0, len(groups))}
	for _, g := range groups {
		if len(g) > 0 {
			h.heads = append(h.heads, groupHead{g: g})
		}
	}
	for i := len(h.heads)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	for len(h.heads) > 0 {
		top := &h.heads[0]
		dst = append(dst, &top.g[0])
		if top.g = top.g[1:]; len(top.g) == 0 {
			last := len(h.heads) - 1
			h.heads[0] = h.heads[last]
			h.heads = h.heads[:last]
		}
		h.down(0)
	}
	return dst
}

// groupHead is what is left of one group in a merge: its head is g[0].
type groupHead struct{ g []record.Acquire }

// groupHeap is a min-heap of the groups' heads in time order.
type groupHeap struct{ heads []groupHead }

// down moves the head at i down to its place.
func (h *groupHeap) down(i int) {
	n := len(h.heads)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && cmpPairTimeOf(&h.heads[r].g[0], &h.heads[l].g[0]) < 0 {
			m = r
		}
		if cmpPairTimeOf(&h.heads[m].g[0], &h.heads[i].g[0]) >= 0 {
			return
		}
		h.heads[i], h.heads[m] = h.heads[m], h.heads[i]
		i = m
	}
}
