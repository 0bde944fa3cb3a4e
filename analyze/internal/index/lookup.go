package index

import (
	"slices"
	"strings"
)

// This file answers "which id has this value?" on a finished index in
// O(log n), without the build-time map a finished index drops (it costs
// more than the value table) and without scanning the table, which would
// make every caller asking once per scope quadratic (`check` on 78k
// executions would spend 90% of its time in a linear valueID per scope).

// valueLookup is the reverse of index.vals while the build-time map is
// dropped: the value ids sorted by value, built on first use. The value
// table only grows between resets, and a reset index keeps its map, so the
// lookup is current while it covers as many values as the table holds.
type valueLookup struct {
	byValue []int32 // value ids, sorted by value
	n       int     // len(index.vals) when byValue was built
	// Sorted counts the value-table entries Sorted into byValue over the
	// index's life, and Lookups the calls: tests pin that a check looks
	// values up a bounded number of times per rule, never per scope, and
	// sorts the table once.
	Sorted, Lookups int64
}

// LookupValue returns the id of an interned value, or -1 when no span
// carries it, in O(1) while the index keeps its build-time map and
// O(log n) amortized after: the sorted ids are built once per finished
// table (4 bytes per value).
func (x *Index) LookupValue(v string) int32 {
	x.ValLookup.Lookups++
	if x.lender != nil {
		return x.lender.lentValueID(v)
	}
	if x.ValIdx != nil {
		if id, ok := x.ValIdx[v]; ok {
			return id
		}
		return -1
	}
	l := &x.ValLookup
	if l.byValue == nil || l.n != len(x.Vals) {
		l.byValue = make([]int32, len(x.Vals))
		for i := range l.byValue {
			l.byValue[i] = int32(i)
		}
		slices.SortFunc(l.byValue, func(a, b int32) int { return strings.Compare(x.Vals[a], x.Vals[b]) })
		l.n = len(x.Vals)
		l.Sorted += int64(len(x.Vals))
	}
	at, ok := slices.BinarySearchFunc(l.byValue, v, func(id int32, v string) int { return strings.Compare(x.Vals[id], v) })
	if !ok {
		return -1
	}
	return l.byValue[at]
}
