package analyze

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// TestPairStageAttributesAcrossAdvances pins the pair stage's streaming
// contract: acquires are attributed in time order per pair whatever the
// order they were added in, as long as they arrive before the stage
// advances past them; one arriving after its pair was attributed past its
// start is attributed against the pair's state then and counted late.
func TestPairStageAttributesAcrossAdvances(t *testing.T) {
	ms := int64(time.Millisecond)
	ev := func(trace byte, start, end int64, hit bool) pairEvent {
		e := pairEvent{start: start * ms, leaseEnd: end * ms, scope: 0, key: 0, session: -1, hit: hit}
		e.trace[15] = trace
		return e
	}
	tests := []struct {
		name     string
		batches  [][]pairEvent // each added, then the stage advances to its advance
		advances []int64       // ms
		reasons  map[string]int
		late     int
	}{
		{
			name:     "out of order before the advance: cold then concurrent",
			batches:  [][]pairEvent{{ev(2, 10, 30, false), ev(1, 0, 20, false)}},
			advances: []int64{1 << 40},
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
		{
			name:     "split by an advance that waits for it: the same answer",
			batches:  [][]pairEvent{{ev(2, 10, 30, false)}, {ev(1, 0, 20, false)}},
			advances: []int64{5, 1 << 40}, // the first advance attributes nothing
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
		},
		{
			name:     "late: attributed on arrival against the pair's state, counted",
			batches:  [][]pairEvent{{ev(2, 10, 30, false)}, {ev(1, 0, 20, false)}},
			advances: []int64{20, 1 << 40}, // the first advance attributes trace 2's acquire as cold
			reasons:  map[string]int{spans.MissCold: 1, spans.MissConcurrent: 1},
			late:     1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPairStage(Config{IdleTTL: time.Hour})
			for i, b := range tc.batches {
				p.add(append([]pairEvent(nil), b...))
				p.advance(tc.advances[i] * ms)
			}
			r := p.report([]string{"scope"})
			for reason, n := range tc.reasons {
				if r.MissReasons[reason] != n {
					t.Errorf("%s = %d, want %d (all: %v)", reason, r.MissReasons[reason], n, r.MissReasons)
				}
			}
			if p.late != tc.late || len(p.buf) != 0 || r.Acquires != 2 || r.Keys != 1 {
				t.Errorf("late %d (want %d), pending %d, acquires %d, keys %d", p.late, tc.late, len(p.buf), r.Acquires, r.Keys)
			}
		})
	}
}
