package whatif

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
)

// manyAcquires is a workload of n acquires over 8 keys of one scope, one
// a millisecond, each lease a tenth of that.
func manyAcquires(n int) *Workload {
	c := NewCollector()
	for i := range n {
		start := int64(i) * int64(time.Millisecond)
		c.Add(&events.Acquire{Scope: "s", Key: fmt.Sprintf("k%d", i%8), HasScope: true, HasKey: true,
			Start: start, LeaseEnd: start + int64(100*time.Microsecond), Attempt: 1})
	}
	return c.Workload()
}

// cancelAfter is a context whose Err is nil for its first n calls and
// context.Canceled from then on: it counts the replay's looks, so the test
// pins where the replay polls without timing anything.
type cancelAfter struct {
	context.Context
	n, calls int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// TestReplayStopsAtTheNextPollOnceCanceled pins that a replay looks at its
// context before its first acquire and every replayPoll acquires after: a
// context canceled before the replay starts replays nothing, one canceled
// after the k-th look stops after k×replayPoll acquires, each returning
// context.Canceled; one never canceled replays every acquire.
func TestReplayStopsAtTheNextPollOnceCanceled(t *testing.T) {
	w := manyAcquires(3*replayPoll + 7)
	set := Settings{IdleTTL: time.Minute, IdlePerKey: 1, MaxIdle: 64}
	for _, tc := range []struct {
		name     string
		looksOK  int
		wantAcqs int
		canceled bool
	}{
		{"canceled before the replay starts: zero work", 0, 0, true},
		{"canceled after the first look", 1, replayPoll, true},
		{"canceled after the third look", 3, 3 * replayPoll, true},
		{"never canceled", 1 << 30, 3*replayPoll + 7, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := &cancelAfter{Context: context.Background(), n: tc.looksOK}
			row, err := w.ReplayContext(ctx, set)
			if got := errors.Is(err, context.Canceled); got != tc.canceled {
				t.Fatalf("error %v: canceled %v, want %v", err, got, tc.canceled)
			}
			if row.Acquires != tc.wantAcqs {
				t.Errorf("replayed %d acquires, want %d", row.Acquires, tc.wantAcqs)
			}
		})
	}
}

// TestGridOverTheCapIsRefusedBeforeAnyReplay pins MaxGrid: a grid of
// exactly MaxGrid combinations is accepted, one more is refused with
// ErrGridTooLarge naming each list, the product and the limit, and lists
// long enough to overflow the product are refused too.
func TestGridOverTheCapIsRefusedBeforeAnyReplay(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lists []GridList
		want  string // "" accepted
	}{
		{"exactly the cap", []GridList{{"--idle-ttl", 100}, {"--idle-per-key", 100}, {"--max-idle", 1}, {"--prewarm", 1}}, ""},
		{"one over the cap", []GridList{{"--idle-ttl", 10_001}, {"--idle-per-key", 1}}, "10,001 settings combinations, over the limit of 10,000"},
		{"300 × 300 × 10", []GridList{{"--idle-ttl", 300}, {"--idle-per-key", 300}, {"--max-idle", 10}, {"--prewarm", 1}},
			"300 --idle-ttl values × 300 --idle-per-key values × 10 --max-idle values × 1 --prewarm values make 900,000 settings combinations"},
		{"a product past the integers", []GridList{{"--idle-ttl", 1 << 40}, {"--idle-per-key", 1 << 40}}, "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckGrid(tc.lists...)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrGridTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrGridTooLarge saying %q", err, tc.want)
			}
		})
	}
}

// The grid's work is its combinations times the dump's acquires: 10,000
// combinations on a dump of 12,000 acquires were a minute of replay. Past
// MaxReplayedAcquires the run is refused before any replay, naming both
// factors; exactly the budget is accepted, and one combination (the
// dump's own replay, linear in what was read) never is refused.
func TestReplayWorkOverTheBudgetIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name             string
		combos, acquires int
		want             string // "" accepted
	}{
		{"exactly the budget", MaxGrid, MaxReplayedAcquires / MaxGrid, ""},
		{"one acquire over", MaxGrid, MaxReplayedAcquires/MaxGrid + 1,
			"10,000 settings combinations × 1,001 acquires make 10,010,000 acquire replays, over the limit of 10,000,000"},
		{"one combination of any dump", 1, 1 << 40, ""},
		{"a product past the integers", 1 << 40, 1 << 40, "over the limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckWork(tc.combos, tc.acquires)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrGridTooLarge) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrGridTooLarge saying %q", err, tc.want)
			}
		})
	}
}
