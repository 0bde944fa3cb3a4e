package measure

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
)

// acq is an acquire whose order keys are given: start, lease end, the
// trace id's last byte and the span id.
func acq(start, end int64, trace byte, span uint64) record.Acquire {
	a := record.Acquire{Start: start, LeaseEnd: end, Span: span}
	a.Trace[15] = trace
	return a
}

// TestCmpPairTimeOrdersByEachKeyOnlyWhenTheOnesBeforeTie pins the order
// of the keys at their boundaries: an earlier key decides even when a
// later one says the opposite, and equal keys fall through to the next.
func TestCmpPairTimeOrdersByEachKeyOnlyWhenTheOnesBeforeTie(t *testing.T) {
	tests := []struct {
		name string
		a, b record.Acquire
		want int
	}{
		{"start decides over a later lease end", acq(1, 9, 9, 9), acq(2, 1, 1, 1), -1},
		{"equal starts: the lease end decides", acq(5, 2, 9, 9), acq(5, 3, 1, 1), -1},
		{"equal starts and ends: the trace decides", acq(5, 3, 1, 9), acq(5, 3, 2, 1), -1},
		{"all equal but the span", acq(5, 3, 2, 8), acq(5, 3, 2, 7), 1},
		{"equal", acq(5, 3, 2, 7), acq(5, 3, 2, 7), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CmpPairTime(tt.a, tt.b); got != tt.want {
				t.Errorf("CmpPairTime = %d, want %d", got, tt.want)
			}
			if got := CmpPairTime(tt.b, tt.a); got != -tt.want {
				t.Errorf("CmpPairTime reversed = %d, want %d", got, -tt.want)
			}
		})
	}
}

// TestMergeGroupsEqualsSortingTheirAcquires checks the k-way merge against
// sorting every acquire again, over random groups (sorted each, as the
// pair stage hands them over) with many ties in start and lease end,
// empty groups, and one group alone.
func TestMergeGroupsEqualsSortingTheirAcquires(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for round := range 500 {
		groups := make([][]record.Acquire, r.IntN(7))
		var all []record.Acquire
		span := uint64(0)
		for g := range groups {
			for range r.IntN(12) {
				span++
				a := acq(r.Int64N(6), r.Int64N(3), byte(r.IntN(3)), span)
				groups[g] = append(groups[g], a)
			}
			slices.SortFunc(groups[g], CmpPairTime)
			all = append(all, groups[g]...)
		}
		slices.SortFunc(all, CmpPairTime)
		var got []record.Acquire
		for _, p := range mergeGroups(nil, groups) {
			got = append(got, *p)
		}
		if !slices.Equal(got, all) {
			t.Fatalf("round %d: merged\n%v\nwant\n%v", round, got, all)
		}
	}
}

// TestMergeGroupsPointsIntoTheGroups pins that the merge hands out the
// groups' own acquires, not copies: the attribution writes each one's
// cause through the pointer.
func TestMergeGroupsPointsIntoTheGroups(t *testing.T) {
	groups := [][]record.Acquire{{acq(1, 1, 1, 1), acq(3, 1, 1, 3)}, {acq(2, 1, 1, 2)}}
	evs := mergeGroups(nil, groups)
	if len(evs) != 3 || evs[0] != &groups[0][0] || evs[1] != &groups[1][0] || evs[2] != &groups[0][1] {
		t.Fatalf("merge does not point into the groups in order: %p %p %p", evs[0], evs[1], evs[2])
	}
	one := mergeGroups(nil, groups[:1])
	if len(one) != 2 || one[0] != &groups[0][0] || one[1] != &groups[0][1] {
		t.Fatalf("a single group is not handed out as it is")
	}
}

// TestPairTimeSorterSortsAsCmpPairTime checks the sort through the table
// of times against sorting the records with CmpPairTime, over random
// groups with many ties in start and lease end (so that the ids decide),
// records that differ in fields the order does not read, groups of 0, 1
// and many acquires, and one sorter reused from a larger group to a
// smaller one.
func TestPairTimeSorterSortsAsCmpPairTime(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	var s pairTimeSorter
	for round := range 2000 {
		g := make([]record.Acquire, r.IntN(40))
		for i := range g {
			g[i] = acq(r.Int64N(4), r.Int64N(3), byte(r.IntN(3)), uint64(r.IntN(6)))
			// At tells which record moved where; Key and Hit are not in the order.
			g[i].At, g[i].Key, g[i].Hit = int32(i), int32(r.IntN(5)), r.IntN(2) == 0
		}
		want := slices.Clone(g)
		slices.SortFunc(want, func(a, b record.Acquire) int {
			if c := CmpPairTime(a, b); c != 0 {
				return c
			}
			return int(a.At - b.At) // equal in every key: either order is right; compare as sets below
		})
		s.sort(g)
		if !slices.IsSortedFunc(g, CmpPairTime) {
			t.Fatalf("round %d: not in time order:\n%v", round, g)
		}
		if got := slices.SortedFunc(slices.Values(g), func(a, b record.Acquire) int { return int(a.At - b.At) }); !slices.Equal(got, slices.SortedFunc(slices.Values(want), func(a, b record.Acquire) int { return int(a.At - b.At) })) {
			t.Fatalf("round %d: the sort lost or changed a record:\n%v\nwant\n%v", round, g, want)
		}
	}
}

// BenchmarkSortPairTime sorts a pair's acquires as the pair stage holds
// them (a group of 256, about one in four behind the one before, as a
// pooled workload's overlapping traces file them) with the records
// themselves (records, the baseline) and through the table of times
// (table).
func BenchmarkSortPairTime(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	g := make([]record.Acquire, 256)
	for i := range g {
		start := int64(i)*1000 + r.Int64N(1500)
		g[i] = acq(start, start+r.Int64N(5000), byte(r.IntN(250)), r.Uint64())
	}
	work := make([]record.Acquire, len(g))
	b.Run("records", func(b *testing.B) {
		for b.Loop() {
			copy(work, g)
			slices.SortFunc(work, CmpPairTime)
		}
	})
	b.Run("table", func(b *testing.B) {
		var s pairTimeSorter
		for b.Loop() {
			copy(work, g)
			s.sort(work)
		}
	})
}
