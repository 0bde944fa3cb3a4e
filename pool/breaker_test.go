package pool_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// failDial makes the next dial fail: the fixture answers the handshake's
// initialized notification (its first session-bearing request) with 503.
func (h *harness) failDial() {
	h.t.Helper()
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, Method: "notifications/initialized"})
	_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
	var hs *pool.HTTPStatusError
	if !errors.As(err, &hs) || hs.Status != http.StatusServiceUnavailable {
		h.t.Fatalf("dial against a 503: err = %v, want an HTTP 503 dial failure", err)
	}
}

// wantCircuitOpen checks that a call fails fast with ErrCircuitOpen and
// sends nothing to the server, and returns the typed error.
func (h *harness) wantCircuitOpen() *pool.CircuitOpenError {
	h.t.Helper()
	before := len(h.srv.Requests())
	st := h.pool.Stat()
	_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
	if !errors.Is(err, pool.ErrCircuitOpen) {
		h.t.Fatalf("err = %v, want ErrCircuitOpen", err)
	}
	var ce *pool.CircuitOpenError
	if !errors.As(err, &ce) {
		h.t.Fatalf("err = %v, want a *CircuitOpenError", err)
	}
	if ce.Key != h.target.Key() || !strings.Contains(err.Error(), h.target.Key()) || !strings.Contains(err.Error(), ce.Cooldown.String()) {
		h.t.Errorf("err = %q (%+v), want it to name key %s and the cooldown", err, ce, h.target.Key())
	}
	if got := len(h.srv.Requests()); got != before {
		h.t.Errorf("a fail-fast acquire sent %d requests to the server, want none", got-before)
	}
	after := h.pool.Stat()
	if after.BreakerRejects != st.BreakerRejects+1 || after.Acquires != st.Acquires || after.Dials != st.Dials {
		h.t.Errorf("stat after a rejected acquire = %+v, want one more reject and no acquire or dial counted", after)
	}
	inv := h.lastInvocation()
	if len(inv.acquires) != 1 || len(inv.handshakes) != 0 || len(inv.calls) != 0 {
		h.t.Fatalf("rejected invocation has %d acquires, %d handshakes, %d calls; want 1, 0, 0", len(inv.acquires), len(inv.handshakes), len(inv.calls))
	}
	wantAttr(h.t, "rejected acquire", inv.acquires[0], spans.AttrErrorType, spans.ErrTypeCircuitOpen)
	wantAttr(h.t, "rejected acquire", inv.acquires[0], spans.AttrCacheHit, "false")
	wantAttr(h.t, "rejected invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeCircuitOpen)
	return ce
}

func TestBreaker_OpensAfterConsecutiveDialFailuresAndHalfOpensAfterCooldown(t *testing.T) {
	const cooldown = 30 * time.Second
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{BreakerThreshold: 3, BreakerCooldown: cooldown}})

	h.failDial()
	h.failDial()
	if st := h.pool.Stat(); st.BreakerOpens != 0 || st.OpenBreakers != 0 {
		t.Fatalf("stat = %+v after 2 of 3 failures, want the breaker closed", st)
	}
	h.failDial()
	st := h.pool.Stat()
	if st.BreakerOpens != 1 || st.OpenBreakers != 1 || st.DialFailures != 3 {
		t.Fatalf("stat = %+v after 3 failures, want the breaker open", st)
	}
	if !strings.Contains(h.logs.String(), "circuit breaker opened") {
		t.Errorf("logs = %q, want the opening logged", h.logs.String())
	}

	ce := h.wantCircuitOpen()
	if ce.Failures != 3 || ce.Cooldown != cooldown || ce.RetryIn != cooldown {
		t.Errorf("circuit error = %+v, want 3 failures, cooldown and retry in %s", ce, cooldown)
	}
	h.clock.Advance(cooldown - time.Second)
	if ce := h.wantCircuitOpen(); ce.RetryIn != time.Second {
		t.Errorf("retry in = %s a second before the cooldown ends, want 1s", ce.RetryIn)
	}

	// Half-open: one trial dial; it fails, so the breaker opens again.
	h.clock.Advance(time.Second)
	h.failDial()
	if st := h.pool.Stat(); st.BreakerOpens != 2 || st.OpenBreakers != 1 || st.Dials != 4 {
		t.Fatalf("stat = %+v after a failed trial, want the breaker reopened after one more dial", st)
	}
	if ce := h.wantCircuitOpen(); ce.RetryIn != cooldown {
		t.Errorf("retry in = %s after a failed trial, want a full cooldown %s", ce.RetryIn, cooldown)
	}

	// The trial after the next cooldown succeeds and closes the breaker.
	h.clock.Advance(cooldown)
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
		t.Fatalf("trial call = %q, want count:1", got)
	}
	st = h.pool.Stat()
	if st.OpenBreakers != 0 || st.BreakerOpens != 2 || st.BreakerRejects != 3 {
		t.Errorf("stat = %+v, want the breaker closed after the successful trial", st)
	}
	if !strings.Contains(h.logs.String(), "circuit breaker closed") {
		t.Errorf("logs = %q, want the recovery logged", h.logs.String())
	}
	if got := h.srv.SideEffects(); got != 1 {
		t.Errorf("side_effect ran %d times, want 1: no failed or refused call reached the tool", got)
	}
}

func TestBreaker_OnlyConsecutiveFailuresCount(t *testing.T) {
	// Dial per call, so every call is a dial.
	h := newHarness(t, harnessOpts{pool: pool.Options{BreakerThreshold: 3, MaxIdlePerKey: -1}})
	h.failDial()
	h.failDial()
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "up"})
	h.failDial()
	h.failDial()
	if st := h.pool.Stat(); st.BreakerOpens != 0 || st.OpenBreakers != 0 {
		t.Fatalf("stat = %+v: a success between failures must reset the count", st)
	}
	if got := h.mustCall(fixtures.ToolEcho, map[string]any{"text": "still dialing"}); got != "still dialing" {
		t.Errorf("call = %q", got)
	}
}

func TestBreaker_OffByDefault(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdlePerKey: -1}})
	for range 5 {
		h.failDial()
	}
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "x"})
	if st := h.pool.Stat(); st.BreakerOpens != 0 || st.BreakerRejects != 0 || st.Dials != 6 {
		t.Errorf("stat = %+v, want every call dialed and no breaker", st)
	}
}

func TestBreaker_HalfOpenAllowsOneTrialAtATime(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{BreakerThreshold: 2, BreakerCooldown: time.Minute}})
	h.failDial()
	h.failDial()
	h.clock.Advance(time.Minute)

	// Hold the trial's handshake at the server, so it is in flight.
	h.srv.SetMethodLatency("initialize", time.Hour)
	initsBefore := rpcCount(h.srv, "initialize")
	seen := len(h.srv.Requests())
	trialCtx, cancelTrial := context.WithCancel(context.Background())
	trial := make(chan error, 1)
	go func() {
		_, err := h.call(trialCtx, fixtures.ToolSideEffect, nil)
		trial <- err
	}()
	// The key never completed a handshake, so its revision is unknown: the
	// trial probes with server/discover, then sends the held initialize.
	if err := h.srv.WaitRequests(boundedContext(t), seen+2); err != nil {
		t.Fatal(err)
	}
	if ce := h.wantCircuitOpen(); ce.RetryIn != 0 || !strings.Contains(ce.Error(), "trial dial is in flight") {
		t.Errorf("concurrent acquire during the trial: %v, want fail fast saying a trial is in flight", ce)
	}

	// A trial the caller abandons proves nothing: the next acquire may try.
	cancelTrial()
	if err := <-trial; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned trial: err = %v, want context.Canceled", err)
	}
	if st := h.pool.Stat(); st.BreakerOpens != 1 || st.OpenBreakers != 1 {
		t.Errorf("stat = %+v, want the breaker still open, not reopened, after an abandoned trial", st)
	}
	h.srv.SetMethodLatency("initialize", 0)
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
		t.Fatalf("next trial = %q, want count:1", got)
	}
	if got := rpcCount(h.srv, "initialize") - initsBefore; got != 2 {
		t.Errorf("initialize requests since the cooldown = %d, want 2 (abandoned trial, good trial)", got)
	}
	if st := h.pool.Stat(); st.OpenBreakers != 0 {
		t.Errorf("stat = %+v, want the breaker closed", st)
	}
}

func TestBreaker_IdleSessionsAreServedWhileOpen(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{BreakerThreshold: 2}})
	h.mustCall(fixtures.ToolSideEffect, nil)
	ctx := context.Background()
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	// With the only session leased, the next calls dial, and fail.
	h.failDial()
	h.failDial()
	if st := h.pool.Stat(); st.OpenBreakers != 1 {
		t.Fatalf("stat = %+v, want the breaker open", st)
	}
	h.wantCircuitOpen()
	held.Release(nil)
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:2" {
		t.Errorf("call with an idle session while the breaker is open = %q, want count:2 (a hit costs the server no dial)", got)
	}
	if st := h.pool.Stat(); st.Hits != 2 || st.OpenBreakers != 1 {
		t.Errorf("stat = %+v, want the hit served and the breaker still open", st)
	}
}

func TestBreaker_InvalidOptionsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		opts  pool.Options
		field string
	}{
		{"threshold of one", pool.Options{BreakerThreshold: 1}, "BreakerThreshold"},
		{"negative threshold", pool.Options{BreakerThreshold: -2}, "BreakerThreshold"},
		{"negative cooldown", pool.Options{BreakerThreshold: 2, BreakerCooldown: -time.Second}, "BreakerCooldown"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pool.New(tc.opts)
			if err == nil {
				_ = p.Close()
				t.Fatal("options accepted")
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err = %v, want it to name %s", err, tc.field)
			}
		})
	}
}
