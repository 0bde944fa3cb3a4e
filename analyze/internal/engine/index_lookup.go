package engine

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
	// sorted counts the value-table entries sorted into byValue over the
	// index's life, and lookups the calls: tests pin that a check looks
	// values up a bounded number of times per rule, never per scope, and
	// sorts the table once.
	sorted, lookups int64
}

// lookupValue returns the id of an interned value, or -1 when no span
// carries it, in O(1) while the index keeps its build-time map and
// O(log n) amortized after: the sorted ids are built once per finished
// table (4 bytes per value).
func (x *index) lookupValue(v string) int32 {
	if x.lender != nil {
		return x.lender.lookupValue(v)
	}
	x.valLookup.lookups++
	if x.valIdx != nil {
		if id, ok := x.valIdx[v]; ok {
			return id
		}
		return -1
	}
	l := &x.valLookup
	if l.byValue == nil || l.n != len(x.vals) {
		l.byValue = make([]int32, len(x.vals))
		for i := range l.byValue {
			l.byValue[i] = int32(i)
		}
		slices.SortFunc(l.byValue, func(a, b int32) int { return strings.Compare(x.vals[a], x.vals[b]) })
		l.n = len(x.vals)
		l.sorted += int64(len(x.vals))
	}
	at, ok := slices.BinarySearchFunc(l.byValue, v, func(id int32, v string) int { return strings.Compare(x.vals[id], v) })
	if !ok {
		return -1
	}
	return l.byValue[at]
}
