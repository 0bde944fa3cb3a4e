package pool_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAFailedHealthCheckOfAGoneCallerDialsNothing pins that an acquire
// whose caller's context is done by the time its idle session failed the
// health check returns the context's error without dialing: the miss is
// counted (health_check, no dial, no dial failure), the session closed,
// and the key's next miss is after_failure.
func TestAFailedHealthCheckOfAGoneCallerDialsNothing(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{HealthCheckAfter: time.Minute}})
	h.mustCall(fixtures.ToolEcho, nil)
	h.srv.ForgetSessions()
	h.clock.Advance(2 * time.Minute)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.pool.Acquire(cancelled, h.target); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "health check") {
		t.Fatalf("acquire on a done context after a failed check: err = %v, want the health check's context.Canceled", err)
	}
	st := h.pool.Stat()
	if st.Dials != 1 || st.DialFailures != 0 || st.Acquires != 2 || st.Misses != 2 || st.MissReasons[spans.MissHealthCheck] != 1 || st.Evictions[spans.EvictHealthCheck] != 1 {
		t.Fatalf("stat = %+v, want the first dial only, a health_check miss and eviction", st)
	}
	if st.IdleSessions != 0 || st.InUseSessions != 0 {
		t.Fatalf("stat = %+v, want the checked session closed", st)
	}

	l, err := h.pool.Acquire(context.Background(), h.target)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(nil)
	if st := h.pool.Stat(); st.Dials != 2 || st.MissReasons[spans.MissAfterFailure] != 1 {
		t.Errorf("stat = %+v, want the next acquire a miss for after_failure that dials", st)
	}
}
