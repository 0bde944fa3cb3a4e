package pool_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// The pool's boundaries, each pinned on both sides: the fake clock puts an
// event exactly at a limit and one nanosecond past it, on real fixture
// servers.

// TestIdleTTLBoundary_OnTheLazyPath pins the idle TTL where an acquire
// checks it itself: the acquire-time sweep is never due (SweepInterval a
// day), so only takeIdleLocked's own check can expire the session. A
// session idle for exactly IdleTTL is still reused; one idle a nanosecond
// longer is closed and the acquire misses with reason ttl (Options.IdleTTL).
func TestIdleTTLBoundary_OnTheLazyPath(t *testing.T) {
	const ttl = time.Minute
	for _, tc := range []struct {
		name    string
		idle    time.Duration
		wantHit bool
	}{
		{"idle exactly the TTL is reused", ttl, true},
		{"idle a nanosecond past the TTL expires", ttl + time.Nanosecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{IdleTTL: ttl, SweepInterval: 24 * time.Hour}})
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "a"})
			first := h.srv.SessionIDs()[0]
			h.clock.Advance(tc.idle)
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "b"})
			st := h.pool.Stat()
			if tc.wantHit {
				if st.Hits != 1 || st.Evictions[spans.EvictTTL] != 0 || len(h.srv.SessionIDs()) != 1 {
					t.Errorf("stat = %+v, sessions %d; want the idle session reused", st, len(h.srv.SessionIDs()))
				}
				return
			}
			if st.Hits != 0 || st.MissReasons[spans.MissTTL] != 1 || st.Evictions[spans.EvictTTL] != 1 {
				t.Errorf("stat = %+v, want one ttl miss and one ttl eviction on the acquire", st)
			}
			if got := httpCount(h.srv, http.MethodDelete, first); got != 1 {
				t.Errorf("DELETE of the expired session = %d, want 1", got)
			}
		})
	}
}

// TestIdleTTLBoundary_OnTheSweep pins the same boundary on the background
// sweep, which shares the expiry rule with the lazy path.
func TestIdleTTLBoundary_OnTheSweep(t *testing.T) {
	const ttl = time.Minute
	for _, tc := range []struct {
		name     string
		idle     time.Duration
		wantKept bool
	}{
		{"idle exactly the TTL is kept", ttl, true},
		{"idle a nanosecond past the TTL is swept", ttl + time.Nanosecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{IdleTTL: ttl}})
			ticks := make(chan time.Time)
			pool.StartSweeper(h.pool, ticks)
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "a"})
			h.clock.Advance(tc.idle)
			ticks <- time.Time{}
			ticks <- time.Time{} // the sweeper took this one: the first sweep is done
			st := h.pool.Stat()
			if kept := st.IdleSessions == 1 && st.Evictions[spans.EvictTTL] == 0; kept != tc.wantKept {
				t.Errorf("stat = %+v, want kept %v", st, tc.wantKept)
			}
		})
	}
}

// TestHealthCheckBoundary pins Options.HealthCheckAfter: a session idle for
// exactly the threshold is reused without a ping, one idle a nanosecond
// longer is pinged first.
func TestHealthCheckBoundary(t *testing.T) {
	const after = time.Minute
	for _, tc := range []struct {
		name      string
		idle      time.Duration
		wantPings int
	}{
		{"idle exactly the threshold: no ping", after, 0},
		{"idle a nanosecond past it: one ping", after + time.Nanosecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{HealthCheckAfter: after}})
			h.mustCall(fixtures.ToolEcho, nil)
			h.clock.Advance(tc.idle)
			h.mustCall(fixtures.ToolEcho, nil)
			if got := rpcCount(h.srv, "ping"); got != tc.wantPings {
				t.Errorf("pings = %d, want %d", got, tc.wantPings)
			}
			if st := h.pool.Stat(); st.Hits != 1 {
				t.Errorf("hits = %d, want the session reused", st.Hits)
			}
		})
	}
}

// TestFailedHealthCheckCountsItsAcquireOnce pins that an acquire whose idle
// session fails its ping and is redialed is one acquire, one miss (reason
// health_check), never two acquires: Acquires stays Hits + Misses.
func TestFailedHealthCheckCountsItsAcquireOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{HealthCheckAfter: time.Minute}})
	h.mustCall(fixtures.ToolEcho, nil)
	h.srv.ForgetSessions()
	h.clock.Advance(2 * time.Minute)
	h.mustCall(fixtures.ToolEcho, nil)
	st := h.pool.Stat()
	if st.Acquires != 2 || st.Hits != 0 || st.Misses != 2 || st.MissReasons[spans.MissHealthCheck] != 1 {
		t.Errorf("stat = %+v, want 2 acquires = 0 hits + 2 misses (cold, health_check)", st)
	}
	if got := len(h.spansNamed(spans.SpanAcquire)); int64(got) != st.Acquires {
		t.Errorf("acquire spans = %d, want one per counted acquire (%d)", got, st.Acquires)
	}
}

// TestExecutionRedialsOnceWhenTheRedialIsForgottenToo pins the one redial
// per call on an Execution, as on Pool.CallTool: when the redialed session
// is forgotten as well, the call fails with ErrSessionExpired after two
// dials and the tool never ran.
func TestExecutionRedialsOnceWhenTheRedialIsForgottenToo(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	e := h.pool.Execution()
	defer e.Close()
	h.srv.ForgetNextSessions(2)
	_, err := e.CallTool(context.Background(), h.target, &mcp.CallToolParams{Name: fixtures.ToolSideEffect})
	if !errors.Is(err, pool.ErrSessionExpired) {
		t.Fatalf("err = %v, want ErrSessionExpired after the one redial", err)
	}
	if st := h.pool.Stat(); st.Redials != 1 || st.Dials != 2 || st.MissReasons[spans.MissRedial] != 1 {
		t.Errorf("stat = %+v, want exactly one redial after two dials", st)
	}
	if n := h.srv.SideEffects(); n != 0 {
		t.Errorf("SideEffects() = %d, want 0", n)
	}
}

// TestGlobalIdleCapEvictsInReleaseOrderOnEqualTimestamps pins the LRU's
// tie rule: three keys released at the same instant (the clock does not
// move) under MaxIdle 2 lose the first released, since the LRU orders by
// release, not by timestamp.
func TestGlobalIdleCapEvictsInReleaseOrderOnEqualTimestamps(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{MaxIdle: 2}})
	targets := []*pool.Target{h.target}
	for _, tenant := range []string{"b", "c"} {
		tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {tenant}}})
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, tg)
	}
	call := func(tg *pool.Target) {
		t.Helper()
		if _, err := h.pool.CallTool(context.Background(), tg, &mcp.CallToolParams{Name: fixtures.ToolEcho}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tg := range targets {
		call(tg)
	}
	first := h.srv.SessionIDs()[0]
	if st := h.pool.Stat(); st.IdleSessions != 2 || st.Evictions[spans.EvictLRU] != 1 {
		t.Fatalf("stat = %+v, want two idle and one lru eviction", st)
	}
	if got := httpCount(h.srv, http.MethodDelete, first); got != 1 {
		t.Errorf("DELETE of the first released session = %d, want 1", got)
	}
	// The two kept are the later releases: both hit, newest first.
	call(targets[2])
	call(targets[1])
	if st := h.pool.Stat(); st.Hits != 2 {
		t.Errorf("hits = %d, want the second and third keys' sessions kept", st.Hits)
	}
	call(targets[0])
	if st := h.pool.Stat(); st.MissReasons[spans.MissEvicted] != 1 {
		t.Errorf("miss reasons = %v, want the first key's miss evicted", st.MissReasons)
	}
}

// TestIdleSizingBoundary_ThePeakCountsForExactlyTheIdleTTL pins the peak
// rule's window: a key whose two leases (its peak) end exactly IdleTTL
// after the peak keeps both idle; a nanosecond later the peak has lapsed
// and the key keeps MaxIdlePerKey (1), evicting the other.
func TestIdleSizingBoundary_ThePeakCountsForExactlyTheIdleTTL(t *testing.T) {
	const ttl = time.Minute
	for _, tc := range []struct {
		name     string
		held     time.Duration
		wantIdle int
	}{
		{"released exactly the TTL after the peak: both kept", ttl, 2},
		{"released a nanosecond later: the peak lapsed", ttl + time.Nanosecond, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{IdleTTL: ttl}})
			ctx := context.Background()
			a, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				t.Fatal(err)
			}
			b, err := h.pool.Acquire(ctx, h.target)
			if err != nil {
				a.Release(nil)
				t.Fatal(err)
			}
			h.clock.Advance(tc.held)
			a.Release(nil)
			b.Release(nil)
			st := h.pool.Stat()
			if st.IdleSessions != tc.wantIdle || st.Evictions[spans.EvictIdleLimit] != int64(2-tc.wantIdle) {
				t.Errorf("stat = %+v, want %d idle and %d idle_limit evictions", st, tc.wantIdle, 2-tc.wantIdle)
			}
		})
	}
}

// TestBreakerCooldownBoundary pins the cooldown's end: an acquire a
// nanosecond before it still fails fast; one exactly at its end makes the
// trial dial, which succeeds and closes the breaker.
func TestBreakerCooldownBoundary(t *testing.T) {
	const cooldown = 30 * time.Second
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{BreakerThreshold: 2, BreakerCooldown: cooldown}})
	h.failDial()
	h.failDial()
	h.clock.Advance(cooldown - time.Nanosecond)
	if ce := h.wantCircuitOpen(); ce.RetryIn != time.Nanosecond {
		t.Errorf("RetryIn = %s a nanosecond before the cooldown ends, want 1ns", ce.RetryIn)
	}
	h.clock.Advance(time.Nanosecond)
	if _, err := h.call(context.Background(), fixtures.ToolSideEffect, nil); err != nil {
		t.Fatalf("the trial dial exactly at the cooldown's end: %v, want it made and successful", err)
	}
	if st := h.pool.Stat(); st.OpenBreakers != 0 || st.BreakerOpens != 1 || st.Dials != 3 {
		t.Errorf("stat = %+v, want the breaker closed by the trial (3 dials, 1 opening)", st)
	}
}
