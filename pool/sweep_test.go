package pool_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

func TestBackgroundSweepClosesAbandonedSessions(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true})
	ticks := make(chan time.Time)
	pool.StartSweeper(h.pool, ticks)
	h.mustCall("echo", map[string]any{"text": "x"})
	id := h.srv.SessionIDs()[0]

	h.clock.Advance(pool.DefaultIdleTTL / 2)
	ticks <- time.Time{}
	ticks <- time.Time{} // the sweeper took this one: the first sweep is done
	if st := h.pool.Stat(); st.IdleSessions != 1 {
		t.Fatalf("idle = %d after a sweep inside the TTL, want 1", st.IdleSessions)
	}

	h.clock.Advance(pool.DefaultIdleTTL)
	ticks <- time.Time{}
	ticks <- time.Time{}
	st := h.pool.Stat()
	if st.IdleSessions != 0 || st.Evictions[spans.EvictTTL] != 1 {
		t.Errorf("stat = %+v, want the idle session swept with no acquire", st)
	}
	if got := httpCount(h.srv, "DELETE", id); got != 1 {
		t.Errorf("DELETE of the swept session = %d, want 1", got)
	}
}

// TestAcquireSweepsExactlyOneIntervalAfterTheLastSweep pins the pacing of
// the acquire-time sweep (Options.SweepInterval): an acquire exactly one
// interval after the last sweep sweeps, one a nanosecond earlier does not.
// The swept session is another key's, long past its TTL, so only the sweep
// can close it; the acquire that sweeps is a hit on its own key, and the
// session it swept is closed (DELETE), not only forgotten. The interval is
// an hour, so the background timer never fires during the test.
func TestAcquireSweepsExactlyOneIntervalAfterTheLastSweep(t *testing.T) {
	const ttl, interval = time.Minute, time.Hour
	for _, tc := range []struct {
		name      string
		after     time.Duration // the other key's hit, after the first sweep
		wantSwept bool
	}{
		{"a nanosecond short of the interval does not sweep", interval - time.Nanosecond, false},
		{"exactly the interval sweeps", interval, true},
		{"past the interval sweeps", interval + time.Nanosecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{IdleTTL: ttl, SweepInterval: interval}})
			// The pool's first acquire starts the sweep clock.
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "a"})
			first := h.srv.SessionIDs()[0]
			other, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {"b"}}})
			if err != nil {
				t.Fatal(err)
			}
			callOther := func() {
				t.Helper()
				if _, err := h.pool.CallTool(context.Background(), other, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "b"}}); err != nil {
					t.Fatalf("call on the other key: %v", err)
				}
			}
			h.clock.Advance(interval - ttl/2) // not due: the other key dials
			callOther()
			h.clock.Advance(tc.after - (interval - ttl/2)) // its session reused
			callOther()
			st := h.pool.Stat()
			if st.Hits != 1 {
				t.Fatalf("stat = %+v; want the other key's second call a hit", st)
			}
			deleted := httpCount(h.srv, http.MethodDelete, first)
			swept := st.Evictions[spans.EvictTTL] == 1 && st.IdleSessions == 1 && deleted == 1
			kept := st.Evictions[spans.EvictTTL] == 0 && st.IdleSessions == 2 && deleted == 0
			if (tc.wantSwept && !swept) || (!tc.wantSwept && !kept) {
				t.Errorf("stat = %+v, DELETE of the first session %d; want it swept and closed: %v", st, deleted, tc.wantSwept)
			}
		})
	}
}
