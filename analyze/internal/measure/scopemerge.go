package measure

import (
	"cmp"

	"github.com/mcptrace/mcptrace/analyze/internal/minheap"
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
