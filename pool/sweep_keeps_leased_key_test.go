package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSweepKeepsAKeyWhoseLeaseIsStillOut pins that a sweep, on acquire or in
// the background, never forgets a key that has a session out on lease,
// however long ago the key was last active: forgetting it would make the
// key's next miss cold instead of concurrent, reset its in-use cap (a
// third acquire over a cap of 2 would dial), and strand the leased session
// when it comes back (the next acquire would dial instead of reusing it).
func TestSweepKeepsAKeyWhoseLeaseIsStillOut(t *testing.T) {
	const ttl = time.Minute
	cases := []struct {
		name  string
		sweep func(h *harness)
	}{
		{"the sweep an acquire runs", func(*harness) {}},
		{"the background sweep", func(h *harness) {
			ticks := make(chan time.Time)
			pool.StartSweeper(h.pool, ticks)
			ticks <- time.Time{}
			ticks <- time.Time{} // the sweeper took this one: the first sweep is done
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{
				IdleTTL: ttl, MaxInUsePerKey: 2, AcquireTimeout: 50 * time.Millisecond,
			}})
			ctx := context.Background()
			first, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				t.Fatal(err)
			}
			// The key sits with its one lease out for longer than a sweep
			// forgets abandoned keys after.
			h.clock.Advance(2*ttl + time.Second)
			tc.sweep(h)

			second, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				t.Fatal(err)
			}
			defer second.Release(nil)
			st := h.pool.Stat()
			if st.MissReasons[spans.MissConcurrent] != 1 || st.MissReasons[spans.MissCold] != 1 {
				t.Errorf("miss reasons = %v, want one cold and one concurrent: the key is still known", st.MissReasons)
			}
			if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, pool.ErrAcquireTimeout) {
				t.Errorf("third acquire over MaxInUsePerKey 2: err = %v, want ErrAcquireTimeout", err)
			}
			if st := h.pool.Stat(); st.Dials != 2 {
				t.Errorf("dials = %d, want 2: the in-use cap still counts the first lease", st.Dials)
			}

			id := first.SessionID()
			first.Release(nil)
			again, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Release(nil)
			if !again.CacheHit() || again.SessionID() != id {
				t.Errorf("acquire after the first lease came back: hit %v session %q, want a hit on %q", again.CacheHit(), again.SessionID(), id)
			}
		})
	}
}
