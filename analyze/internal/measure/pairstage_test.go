package measure

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestPairStageAttributesAcrossAdvances pins the pair stage's streaming
// contract: acquires are attributed in time order per pair whatever the
// order they were added in, as long as they arrive before the stage
// advances past them; one arriving after its pair was attributed past its
// start is attributed against the pair's state then and counted late.
func TestPairStageAttributesAcrossAdvances(t *testing.T) {
	ms := int64(time.Millisecond)
	ev := func(trace byte, start, end int64, hit bool) record.Acquire {
		e := record.Acquire{Start: start * ms, LeaseEnd: end * ms, Scope: 0, Key: 0, Session: -1, Hit: hit}
		e.Trace[15] = trace
		return e
	}
	tests := []struct {
		name     string
		batches  [][]record.Acquire // each added, then the stage advances to its advance
		advances []int64            // ms
		reasons  map[string]int
		late     int
	}{
		{
			name:     "out of order before the advance: cold then concurrent",
			batches:  [][]record.Acquire{{ev(2, 10, 30, false), ev(1, 0, 20, false)}},
			advances: []int64{1 << 40},
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
		{
			name:     "split by an advance that waits for it: the same answer",
			batches:  [][]record.Acquire{{ev(2, 10, 30, false)}, {ev(1, 0, 20, false)}},
			advances: []int64{5, 1 << 40}, // the first advance attributes nothing
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
		{
			name:     "late: attributed on arrival against the pair's state, counted",
			batches:  [][]record.Acquire{{ev(2, 10, 30, false)}, {ev(1, 0, 20, false)}},
			advances: []int64{20, 1 << 40}, // the first advance attributes trace 2's acquire as cold
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
			late:     1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPairStage(rulefmt.Config{IdleTTL: time.Hour})
			for i, b := range tc.batches {
				p.Add(append([]record.Acquire(nil), b...))
				p.Advance(tc.advances[i] * ms)
			}
			r := p.Report([]string{"scope"})
			for reason, n := range tc.reasons {
				if r.MissReasons[reason] != n {
					t.Errorf("%s = %d, want %d (all: %v)", reason, r.MissReasons[reason], n, r.MissReasons)
				}
			}
			if p.Late != tc.late || p.Pending() != 0 || r.Acquires != 2 || r.Keys != 1 {
				t.Errorf("late %d (want %d), pending %d, acquires %d, keys %d", p.Late, tc.late, p.Pending(), r.Acquires, r.Keys)
			}
		})
	}
}

// TestSortGroupsSortsEveryPairWhateverTheWorkers pins the parallel sort of
// a big advance: every pair's acquires end in time order, none moves to
// another pair, and the result equals the one-goroutine sort.
func TestSortGroupsSortsEveryPairWhateverTheWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 3 * ParallelSortMin
	counts := make([]int32, 200)
	for i := 0; i < n; i++ {
		counts[rng.IntN(len(counts))]++
	}
	counts[7] = 0 // an empty pair among them
	first := make([]int32, len(counts)+1)
	for id, c := range counts {
		first[id+1] = first[id] + c
	}
	grouped := make([]record.Acquire, first[len(counts)])
	for id := range counts {
		for k := first[id]; k < first[id+1]; k++ {
			grouped[k] = record.Acquire{Start: rng.Int64N(1000), LeaseEnd: rng.Int64N(1000), Key: int32(id), Span: uint64(k)}
		}
	}
	want := slices.Clone(grouped)
	for id := range counts {
		slices.SortFunc(want[first[id]:first[id+1]], CmpPairTime)
	}
	for _, procs := range []int{1, 2, 3, 8} {
		got := slices.Clone(grouped)
		prev := runtime.GOMAXPROCS(procs)
		groups := make([][]record.Acquire, len(counts))
		for id := range counts {
			groups[id] = got[first[id]:first[id+1]]
		}
		SortGroups(groups)
		runtime.GOMAXPROCS(prev)
		if !slices.Equal(got, want) {
			t.Fatalf("GOMAXPROCS %d: the pairs are not each in time order", procs)
		}
	}
}

// TestALatePrewarmLeavesThePairsFrontier pins the frontier a late
// pre-warm leaves: a pre-warm arriving after its pair was attributed past
// its start is replayed, but the pair's frontier stays where the
// attributed acquires put it, so a later acquire behind that frontier
// still counts late.
func TestALatePrewarmLeavesThePairsFrontier(t *testing.T) {
	ms := int64(time.Millisecond)
	p := NewPairStage(rulefmt.Config{IdleTTL: time.Hour})
	p.Add([]record.Acquire{{Start: 10 * ms, LeaseEnd: 12 * ms, Session: -1}})
	p.Advance(20 * ms)
	p.Add([]record.Acquire{{Start: 5 * ms, LeaseEnd: 6 * ms, Session: -1, Prewarm: true}})
	p.Advance(30 * ms)
	p.Add([]record.Acquire{{Start: 7 * ms, LeaseEnd: 9 * ms, Session: -1}})
	p.Advance(1 << 62)
	if p.Late != 1 {
		t.Errorf("late %d, want 1: the acquire at 7 ms is behind the frontier of 10 ms", p.Late)
	}
}
