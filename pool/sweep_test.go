package pool_test

import (
	"testing"
	"time"

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
