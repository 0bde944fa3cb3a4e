package measure

import (
	"slices"

	"github.com/mcptrace/mcptrace/analyze/internal/minheap"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
)

// cmpPairTimeOf is CmpPairTime on pointers, each key compared only when
// the ones before it tie (the trace ids' bytes seldom): the sorts and
// merges of the attribution compare more than anything else it does.
func cmpPairTimeOf(a, b *record.Acquire) int {
	if c := cmpTimes(a.Start, a.LeaseEnd, b.Start, b.LeaseEnd); c != 0 {
		return c
	}
	return cmpEventSpan(a, b)
}

// cmpTimes orders two acquires by their times, the first keys of the
// pair time order: start, then lease end.
// Plain comparisons, not cmp.Compare (whose cost, for the NaNs of
// floats, keeps it from being inlined): it is inlined in the sorts.
func cmpTimes(aStart, aEnd, bStart, bEnd int64) int {
	switch {
	case aStart < bStart:
		return -1
	case aStart > bStart:
		return 1
	case aEnd < bEnd:
		return -1
	case aEnd > bEnd:
		return 1
	}
	return 0
}

// mergeGroups appends to dst the acquires of groups, each already in time
// order (CmpPairTime), merged into one time order: a k-way merge on a heap
// of what is left of each group, n·log k comparisons where sorting the n
// acquires again would make n·log n. A scope's pairs are few next to its
// acquires.
func mergeGroups(dst []*record.Acquire, groups [][]record.Acquire) []*record.Acquire {
	if len(groups) == 1 {
		for i := range groups[0] {
			dst = append(dst, &groups[0][i])
		}
		return dst
	}
	h := minheap.New(func(a, b *[]record.Acquire) int { return cmpPairTimeOf(&(*a)[0], &(*b)[0]) })
	for _, g := range groups {
		if len(g) > 0 {
			h.Push(g)
		}
	}
	for h.Len() > 0 {
		rest := h.Min()
		dst = append(dst, &(*rest)[0])
		if *rest = (*rest)[1:]; len(*rest) == 0 {
			h.Pop()
		} else {
			h.FixMin()
		}
	}
	return dst
}

// pairTimeSorter sorts one pair's acquires in time order (cmpPairTimeOf)
// through a table of their two times and places: the sort compares and
// moves those 24 bytes, where sorting the records themselves passed two
// 64-byte records to every comparison and moved them on every swap. Its
// tables are kept for the next group.
type pairTimeSorter struct {
	keys []pairTimeKey
	tmp  []record.Acquire
}

// pairTimeKey is one acquire's place in its group beside its two times.
type pairTimeKey struct {
	start, leaseEnd int64
	at              int
}

// sort sorts g in time order. The order is total (a pair's acquires
// differ in trace or span id), so the sort need not be stable.
func (s *pairTimeSorter) sort(g []record.Acquire) {
	if len(g) < 2 {
		return
	}
	s.keys = s.keys[:0]
	for i := range g {
		s.keys = append(s.keys, pairTimeKey{g[i].Start, g[i].LeaseEnd, i})
	}
	slices.SortFunc(s.keys, func(a, b pairTimeKey) int {
		if c := cmpTimes(a.start, a.leaseEnd, b.start, b.leaseEnd); c != 0 {
			return c
		}
		return cmpPairTimeOf(&g[a.at], &g[b.at]) // equal times: the rest of the order decides
	})
	s.tmp = append(s.tmp[:0], g...)
	for i, k := range s.keys {
		g[i] = s.tmp[k.at]
	}
}
