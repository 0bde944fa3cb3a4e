package engine

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// pairAt is one forwarded acquire of pool "p", key "k", for a PairStream
// test: n names its trace and span, session (when set) makes it an acquire
// inferred from a call.
func pairAt(n byte, start, leaseEnd int64, hit bool, session string) PairEvent {
	ev := PairEvent{Scope: "p", HasScope: true, Key: "k", HasKey: true, Start: start, LeaseEnd: leaseEnd, Hit: hit}
	ev.TraceID = pcommon.TraceID{15: n}
	ev.SpanID = pcommon.SpanID{7: n}
	if session != "" {
		ev.Session, ev.HasSession = session, true
	}
	return ev
}

// pairRound is one Add then Attribute of a PairStream test, and what that
// Attribute must return.
type pairRound struct {
	add        []PairEvent
	before     int64
	acquires   []AcquireCount
	handshakes []PoolCount
	pending    int
	late       int // LateAcquires after the round
}

// TestAPairStreamAttributesEachAcquireOnceAtItsTurn pins a PairStream's
// rounds: Attribute takes only the acquires that started strictly before
// its bound (one starting at it waits), returns only what this round
// attributed (never the counts of an earlier one again), remembers a
// session's first call across rounds, and counts as late only an acquire
// that starts before its pair's latest attributed start, not one that
// starts with it; a late acquire does not move that start back.
func TestAPairStreamAttributesEachAcquireOnceAtItsTurn(t *testing.T) {
	const all = math.MaxInt64
	cold := func(n int) AcquireCount { return AcquireCount{Pool: "p", MissCause: spans.MissCold, N: n} }
	hits := func(n int) AcquireCount { return AcquireCount{Pool: "p", Hit: true, N: n} }
	tests := []struct {
		name   string
		rounds []pairRound
	}{
		{
			name: "an acquire starting at the bound waits for the next round",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 100, 200, false, "")}, before: 100, pending: 1},
				{before: 101, acquires: []AcquireCount{cold(1)}},
			},
		},
		{
			name: "of two acquires the one starting at the bound waits",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 50, 60, false, ""), pairAt(2, 100, 200, true, "")}, before: 100, acquires: []AcquireCount{cold(1)}, pending: 1},
				{before: 101, acquires: []AcquireCount{hits(1)}},
			},
		},
		{
			name: "each round returns only its own acquires",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 100, 200, false, "")}, before: all, acquires: []AcquireCount{cold(1)}},
				{add: []PairEvent{pairAt(2, 300, 400, true, "")}, before: all, acquires: []AcquireCount{hits(1)}},
				{before: all},
			},
		},
		{
			name: "an acquire starting with the pair's latest attributed one is not late, one before it is",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 100, 200, false, "")}, before: all, acquires: []AcquireCount{cold(1)}},
				{add: []PairEvent{pairAt(2, 100, 150, false, "")}, before: all,
					acquires: []AcquireCount{{Pool: "p", MissCause: spans.MissConcurrent, N: 1}}},
				{add: []PairEvent{pairAt(3, 99, 300, true, "")}, before: all, acquires: []AcquireCount{hits(1)}, late: 1},
			},
		},
		{
			name: "a late acquire leaves its pair's frontier where it was",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 100, 200, false, "")}, before: all, acquires: []AcquireCount{cold(1)}},
				{add: []PairEvent{pairAt(2, 50, 60, true, "")}, before: all, acquires: []AcquireCount{hits(1)}, late: 1},
				{add: []PairEvent{pairAt(3, 70, 80, true, "")}, before: all, acquires: []AcquireCount{hits(1)}, late: 2},
			},
		},
		{
			name: "a session's first call is its miss and handshake, once across rounds",
			rounds: []pairRound{
				{add: []PairEvent{pairAt(1, 100, 200, true, "s")}, before: all,
					acquires: []AcquireCount{cold(1)}, handshakes: []PoolCount{{Pool: "p", N: 1}}},
				{add: []PairEvent{pairAt(2, 300, 400, true, "s")}, before: all, acquires: []AcquireCount{hits(1)}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewPairStream(rulefmt.Config{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range tc.rounds {
				s.Add(r.add)
				acq, hs := s.Attribute(r.before)
				if d := cmp.Diff(r.acquires, acq); d != "" {
					t.Errorf("round %d: acquires (-want +got):\n%s", i, d)
				}
				if d := cmp.Diff(r.handshakes, hs); d != "" {
					t.Errorf("round %d: handshakes (-want +got):\n%s", i, d)
				}
				if s.Pending() != r.pending || s.LateAcquires() != r.late {
					t.Errorf("round %d: pending %d, late %d; want %d, %d", i, s.Pending(), s.LateAcquires(), r.pending, r.late)
				}
			}
		})
	}
}
