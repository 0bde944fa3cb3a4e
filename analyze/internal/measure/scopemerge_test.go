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
