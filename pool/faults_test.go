package pool_test

// The pool fault matrix (RELIABILITY.md): each case drives a real fixture
// server over HTTP on 127.0.0.1 into one fault and pins the call's outcome,
// the fixture's ledger and side_effect counter (a side-effectful tool never
// runs twice), pool.Stat(), the exported spans, and, through TestMain's
// goleak, that nothing is left running.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// waitBound bounds every barrier wait so a broken pool fails a test rather
// than hanging it; no test asserts on time.
const waitBound = 30 * time.Second

func boundedContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	t.Cleanup(cancel)
	return ctx
}

// invocation is the span tree of one CallTool.
type invocation struct {
	invoke     sdktrace.ReadOnlySpan
	acquires   []sdktrace.ReadOnlySpan // in attempt order
	handshakes []sdktrace.ReadOnlySpan
	calls      []sdktrace.ReadOnlySpan
}

// lastInvocation returns the span tree of the last invoke span that ended.
func (h *harness) lastInvocation() invocation {
	h.t.Helper()
	all := h.rec.Spans()
	var inv invocation
	for i := len(all) - 1; i >= 0; i-- {
		if all[i].Name() == spans.SpanInvoke {
			inv.invoke = all[i]
			break
		}
	}
	if inv.invoke == nil {
		h.t.Fatal("no invoke span recorded")
	}
	id := inv.invoke.SpanContext().SpanID()
	acquireIDs := map[any]bool{}
	for _, s := range all {
		if s.Parent().SpanID() != id {
			continue
		}
		switch s.Name() {
		case spans.SpanAcquire:
			inv.acquires = append(inv.acquires, s)
			acquireIDs[s.SpanContext().SpanID()] = true
		case spans.SpanCallTool:
			inv.calls = append(inv.calls, s)
		}
	}
	for _, s := range all {
		if s.Name() == spans.SpanHandshake && acquireIDs[s.Parent().SpanID()] {
			inv.handshakes = append(inv.handshakes, s)
		}
	}
	return inv
}

// wantAttr fails the test unless span s has key = want ("" means absent).
func wantAttr(t *testing.T, what string, s sdktrace.ReadOnlySpan, key, want string) {
	t.Helper()
	if got := attr(s, key); got != want {
		t.Errorf("%s %s = %q, want %q", what, key, got, want)
	}
}

// toolCalls returns the ledger's tools/call requests for tool.
func toolCalls(srv *fixtures.Server, tool string) []fixtures.Request {
	var out []fixtures.Request
	for _, r := range srv.Requests() {
		if r.RPCMethod == "tools/call" && r.Tool == tool {
			out = append(out, r)
		}
	}
	return out
}

// warm runs one side_effect call so the key has an idle session, and
// returns that session's id.
func (h *harness) warm() string {
	h.t.Helper()
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
		h.t.Fatalf("warm-up side_effect = %q, want count:1", got)
	}
	ids := h.srv.SessionIDs()
	if len(ids) != 1 {
		h.t.Fatalf("session ids after warm-up = %v, want one", ids)
	}
	return ids[0]
}

// wantFreshSessionNext checks that the pool recovers: the next call dials a
// new session (miss reason after_failure) and runs the tool once more.
func (h *harness) wantFreshSessionNext(wantCount string) {
	h.t.Helper()
	before := h.pool.Stat()
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != wantCount {
		h.t.Errorf("next side_effect = %q, want %s", got, wantCount)
	}
	st := h.pool.Stat()
	if st.MissReasons[spans.MissAfterFailure] != before.MissReasons[spans.MissAfterFailure]+1 || st.Dials != before.Dials+1 {
		h.t.Errorf("next call: stat = %+v, want one more dial, with miss reason after_failure", st)
	}
}

func TestFaultMatrix_ReusedSessionGoneIsRedialedOnce(t *testing.T) {
	cases := []struct {
		name  string
		fault func(srv *fixtures.Server, session string)
	}{
		{"server restart on the same port", func(srv *fixtures.Server, _ string) { srv.Restart() }},
		{"session expired while idle", func(srv *fixtures.Server, id string) { srv.ExpireSession(id) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			old := h.warm()
			url := h.srv.URL()
			tc.fault(h.srv, old)
			if h.srv.URL() != url {
				t.Fatalf("fixture moved from %s to %s", url, h.srv.URL())
			}

			if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:2" {
				t.Fatalf("side_effect after the fault = %q, want count:2 on a redialed session", got)
			}

			// Ledger: the rejected call carried the old id and never ran;
			// the retry ran once on a new session.
			calls := toolCalls(h.srv, fixtures.ToolSideEffect)
			if len(calls) != 3 || calls[1].SessionID != old || calls[1].Status != http.StatusNotFound || calls[2].SessionID == old || calls[2].Status != http.StatusOK {
				t.Errorf("side_effect requests = %+v, want warm-up, a 404 on the old session, one call on a new one", calls)
			}
			if got := h.srv.SideEffects(); got != 2 {
				t.Errorf("side_effect ran %d times, want 2 (never twice for one call)", got)
			}
			if got := h.srv.Initializes(); got != 2 {
				t.Errorf("initializes = %d, want 2", got)
			}

			st := h.pool.Stat()
			if st.Redials != 1 || st.MissReasons[spans.MissRedial] != 1 || st.Failures[spans.ErrTypeSessionExpired] != 1 ||
				st.Dials != 2 || st.DialFailures != 0 || st.IdleSessions != 1 || st.InUseSessions != 0 {
				t.Errorf("stat = %+v, want one redial after one session_expired drop, the new session idle", st)
			}

			inv := h.lastInvocation()
			if len(inv.acquires) != 2 || len(inv.calls) != 2 || len(inv.handshakes) != 1 {
				t.Fatalf("invocation has %d acquires, %d calls, %d handshakes; want 2, 2, 1", len(inv.acquires), len(inv.calls), len(inv.handshakes))
			}
			wantAttr(t, "first acquire", inv.acquires[0], spans.AttrCacheHit, "true")
			wantAttr(t, "second acquire", inv.acquires[1], spans.AttrAttempt, "2")
			wantAttr(t, "second acquire", inv.acquires[1], spans.AttrMissReason, spans.MissRedial)
			wantAttr(t, "first call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeSessionExpired)
			wantAttr(t, "first call", inv.calls[0], spans.AttrSessionID, old)
			wantAttr(t, "second call", inv.calls[1], spans.AttrErrorType, "")
			wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, "")
			if got := inv.invoke.Status().Code.String(); got != "Unset" {
				t.Errorf("invoke status = %s, want Unset after a successful redial", got)
			}
		})
	}
}

func TestFaultMatrix_SessionExpiresWhileCallInFlight_NotRetried(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	old := h.warm()
	h.srv.ExpireDuringNextCall()

	_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
	if err == nil {
		t.Fatal("call whose session expired in flight succeeded")
	}
	if errors.Is(err, pool.ErrSessionExpired) {
		t.Errorf("err = %v: reported as a plain expiry, which invites a retry of a tool that ran", err)
	}
	if !contains(err.Error(), "side_effect") || !contains(err.Error(), "without response") {
		t.Errorf("err = %q, want it to name the tool and say the answer never came", err)
	}
	if got := h.srv.SideEffects(); got != 2 {
		t.Errorf("side_effect ran %d times, want 2: once for the warm-up, once for the call that lost its answer", got)
	}
	st := h.pool.Stat()
	if st.Redials != 0 || st.Failures[spans.ErrTypeTransport] != 1 || st.IdleSessions != 0 || st.InUseSessions != 0 {
		t.Errorf("stat = %+v, want no redial and the session dropped as a transport failure", st)
	}
	inv := h.lastInvocation()
	if len(inv.acquires) != 1 || len(inv.calls) != 1 {
		t.Fatalf("invocation has %d acquires and %d calls, want 1 and 1 (no retry)", len(inv.acquires), len(inv.calls))
	}
	wantAttr(t, "call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeTransport)
	wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeTransport)

	h.wantFreshSessionNext("count:3")
	// The dropped session's DELETE finds it gone: "then 404".
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	var del []fixtures.Request
	for _, r := range h.srv.Requests() {
		if r.HTTPMethod == http.MethodDelete && r.SessionID == old {
			del = append(del, r)
		}
	}
	if len(del) != 1 || del[0].Status != http.StatusNotFound {
		t.Errorf("DELETE of the expired session = %+v, want one, answered 404", del)
	}
}

func TestFaultMatrix_ServerAnswering400ForAnUnknownSession_NotRetried(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{UnknownSessionStatus: http.StatusBadRequest}})
	old := h.warm()
	h.srv.Restart()

	_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
	if !errors.Is(err, pool.ErrSessionRejected) || errors.Is(err, pool.ErrSessionExpired) {
		t.Fatalf("err = %v, want ErrSessionRejected (and not ErrSessionExpired)", err)
	}
	if got := h.srv.SideEffects(); got != 1 {
		t.Errorf("side_effect ran %d times, want 1", got)
	}
	calls := toolCalls(h.srv, fixtures.ToolSideEffect)
	if len(calls) != 2 || calls[1].SessionID != old || calls[1].Status != http.StatusBadRequest {
		t.Errorf("side_effect requests = %+v, want the second answered 400 on the old session and no third", calls)
	}
	st := h.pool.Stat()
	if st.Redials != 0 || st.Failures[spans.ErrTypeBadSession] != 1 || st.IdleSessions != 0 {
		t.Errorf("stat = %+v, want no redial and one bad_session drop", st)
	}
	inv := h.lastInvocation()
	if len(inv.acquires) != 1 || len(inv.calls) != 1 {
		t.Fatalf("invocation has %d acquires and %d calls, want 1 and 1", len(inv.acquires), len(inv.calls))
	}
	wantAttr(t, "call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeBadSession)
	wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeBadSession)
	h.wantFreshSessionNext("count:2")
}

func TestFaultMatrix_ConnectionResetMidCall_NotRetried(t *testing.T) {
	cases := []struct {
		when      fixtures.ResetWhen
		wantRuns  int64
		wantFault string
	}{
		{fixtures.ResetBeforeTool, 1, fixtures.FaultResetBeforeTool},
		{fixtures.ResetAfterTool, 2, fixtures.FaultResetAfterTool},
	}
	for _, tc := range cases {
		t.Run(tc.when.String()+" the tool ran", func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			h.warm()
			h.srv.ResetConnectionOnNextCall(tc.when)

			_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
			if err == nil {
				t.Fatal("call on a reset connection succeeded")
			}
			if errors.Is(err, pool.ErrSessionExpired) || errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want a transport failure", err)
			}
			if got := h.srv.SideEffects(); got != tc.wantRuns {
				t.Errorf("side_effect ran %d times, want %d (the pool cannot know whether it ran, so never retries)", got, tc.wantRuns)
			}
			calls := toolCalls(h.srv, fixtures.ToolSideEffect)
			if len(calls) != 2 || calls[1].Fault != tc.wantFault {
				t.Errorf("side_effect requests = %+v, want the second reset (%s) and no retry", calls, tc.wantFault)
			}
			st := h.pool.Stat()
			if st.Redials != 0 || st.Failures[spans.ErrTypeTransport] != 1 || st.IdleSessions != 0 || st.InUseSessions != 0 {
				t.Errorf("stat = %+v, want no redial and the session dropped as a transport failure", st)
			}
			inv := h.lastInvocation()
			if len(inv.acquires) != 1 || len(inv.calls) != 1 {
				t.Fatalf("invocation has %d acquires and %d calls, want 1 and 1", len(inv.acquires), len(inv.calls))
			}
			wantAttr(t, "call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeTransport)
			h.wantFreshSessionNext(fmt.Sprintf("count:%d", tc.wantRuns+1))
		})
	}
}

func TestFaultMatrix_HandshakeSlowerThanTheDeadline(t *testing.T) {
	cases := []struct {
		name   string
		method string // the JSON-RPC method the fixture holds
		// issued: the initialize was answered, so a half-made session
		// exists that the client must close.
		issued bool
	}{
		{"initialize held", "initialize", false},
		{"initialized notification held", "notifications/initialized", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			h.srv.SetMethodLatency(tc.method, time.Hour)
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			defer cancel()

			done := make(chan error, 1)
			go func() {
				_, err := h.call(ctx, fixtures.ToolSideEffect, nil)
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(waitBound):
				t.Fatal("the caller's deadline was not honoured: the call is still waiting on the handshake")
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want context.DeadlineExceeded", err)
			}
			if got := h.srv.SideEffects(); got != 0 {
				t.Errorf("side_effect ran %d times, want 0", got)
			}
			st := h.pool.Stat()
			if st.Dials != 1 || st.DialFailures != 1 || st.IdleSessions != 0 || st.InUseSessions != 0 {
				t.Errorf("stat = %+v, want one failed dial and nothing held", st)
			}
			inv := h.lastInvocation()
			if len(inv.acquires) != 1 || len(inv.handshakes) != 1 || len(inv.calls) != 0 {
				t.Fatalf("invocation has %d acquires, %d handshakes, %d calls; want 1, 1, 0", len(inv.acquires), len(inv.handshakes), len(inv.calls))
			}
			wantAttr(t, "handshake", inv.handshakes[0], spans.AttrErrorType, spans.ErrTypeCanceled)
			wantAttr(t, "acquire", inv.acquires[0], spans.AttrErrorType, spans.ErrTypeCanceled)
			wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeCanceled)

			ids := h.srv.SessionIDs()
			if !tc.issued {
				if len(ids) != 0 || h.srv.Initializes() != 0 {
					t.Errorf("session ids %v, initializes %d: want none, the initialize never reached the server", ids, h.srv.Initializes())
				}
			} else {
				if len(ids) != 1 {
					t.Fatalf("session ids = %v, want the one issued by the answered initialize", ids)
				}
				// The SDK closes the half-made session before Connect
				// returns: its DELETE is in the ledger already.
				if got := httpCount(h.srv, http.MethodDelete, ids[0]); got != 1 {
					t.Errorf("DELETE of the half-made session %s = %d, want 1", ids[0], got)
				}
			}

			h.srv.SetMethodLatency(tc.method, 0)
			if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
				t.Errorf("call once the handshake is quick again = %q, want count:1", got)
			}
		})
	}
}

func TestFaultMatrix_CancellationWhileWaitingToDial(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{BreakerThreshold: 2}})
	h.srv.SetMethodLatency("initialize", time.Hour)
	for i := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := h.call(ctx, fixtures.ToolSideEffect, nil)
			done <- err
		}()
		if err := h.srv.WaitRequests(boundedContext(t), i+1); err != nil {
			t.Fatalf("the dial never reached the server: %v", err)
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("dial %d: err = %v, want context.Canceled", i, err)
		}
		inv := h.lastInvocation()
		if len(inv.handshakes) != 1 {
			t.Fatalf("dial %d: %d handshake spans, want 1", i, len(inv.handshakes))
		}
		wantAttr(t, "handshake", inv.handshakes[0], spans.AttrErrorType, spans.ErrTypeCanceled)
		wantAttr(t, "acquire", inv.acquires[0], spans.AttrErrorType, spans.ErrTypeCanceled)
	}
	st := h.pool.Stat()
	if st.Dials != 2 || st.DialFailures != 2 || st.InUseSessions != 0 || st.IdleSessions != 0 {
		t.Errorf("stat = %+v, want two failed dials and nothing held", st)
	}
	if st.BreakerOpens != 0 || st.OpenBreakers != 0 {
		t.Errorf("stat = %+v: dials the caller cancelled opened the breaker", st)
	}
	if h.srv.Initializes() != 0 || h.srv.SideEffects() != 0 {
		t.Errorf("initializes %d, side effects %d; want 0 and 0", h.srv.Initializes(), h.srv.SideEffects())
	}
	h.srv.SetMethodLatency("initialize", 0)
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
		t.Errorf("call after the cancellations = %q, want count:1", got)
	}
	wantAttr(t, "recovering acquire", h.lastInvocation().acquires[0], spans.AttrMissReason, spans.MissAfterFailure)
}

func TestFaultMatrix_ContextDoneBeforeAcquire_KeepsTheIdleSession(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.warm()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.call(ctx, fixtures.ToolSideEffect, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := len(toolCalls(h.srv, fixtures.ToolSideEffect)); got != 1 {
		t.Errorf("side_effect requests = %d, want 1: nothing may be sent on a dead context", got)
	}
	st := h.pool.Stat()
	if st.IdleSessions != 1 || st.Failures[spans.ErrTypeCanceled] != 0 || st.Dials != 1 {
		t.Errorf("stat = %+v, want the healthy idle session kept and no dial", st)
	}
	if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:2" {
		t.Errorf("next call = %q, want count:2", got)
	}
	if st := h.pool.Stat(); st.Hits != 2 || st.Dials != 1 {
		t.Errorf("stat = %+v, want the kept session reused (two hits, one dial)", st)
	}
}

func TestFaultMatrix_CancellationWhileCallInFlight(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	old := h.warm()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.call(ctx, fixtures.ToolSlow, map[string]any{"ms": 60_000})
		done <- err
	}()
	if err := h.srv.WaitInFlight(boundedContext(t), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	st := h.pool.Stat()
	if st.Failures[spans.ErrTypeCanceled] != 1 || st.IdleSessions != 0 || st.InUseSessions != 0 || st.Redials != 0 {
		t.Errorf("stat = %+v, want the cancelled session dropped, not retried", st)
	}
	if got := len(toolCalls(h.srv, fixtures.ToolSlow)); got != 1 {
		t.Errorf("slow requests = %d, want 1", got)
	}
	inv := h.lastInvocation()
	if len(inv.calls) != 1 {
		t.Fatalf("%d call spans, want 1", len(inv.calls))
	}
	wantAttr(t, "call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeCanceled)
	wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeCanceled)
	h.wantFreshSessionNext("count:2")
	// Close waits for the dropped session's close: the server saw it ended.
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	if got := httpCount(h.srv, http.MethodDelete, old); got != 1 {
		t.Errorf("DELETE of the cancelled session = %d, want 1", got)
	}
}

func TestFaultMatrix_HTTPErrorStatusesAreSurfacedWithRetryAfter(t *testing.T) {
	cases := []struct {
		status     int
		retryAfter time.Duration
	}{
		{http.StatusInternalServerError, 0},
		{http.StatusBadGateway, 0},
		{http.StatusServiceUnavailable, 7 * time.Second},
		{http.StatusTooManyRequests, 2 * time.Second},
	}
	for _, tc := range cases {
		t.Run(http.StatusText(tc.status)+" on a call", func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			h.warm()
			h.srv.RejectNext(fixtures.Reject{Status: tc.status, RetryAfter: tc.retryAfter, Method: "tools/call"})
			_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
			var hs *pool.HTTPStatusError
			if !errors.As(err, &hs) || hs.Status != tc.status || hs.RetryAfter != tc.retryAfter || !hs.SessionBound {
				t.Fatalf("err = %v (%+v), want *HTTPStatusError{Status: %d, RetryAfter: %s, SessionBound: true}", err, hs, tc.status, tc.retryAfter)
			}
			if tc.retryAfter > 0 && !contains(err.Error(), "retry after "+tc.retryAfter.String()) {
				t.Errorf("err = %q, want it to say the delay", err)
			}
			if got := h.srv.SideEffects(); got != 1 {
				t.Errorf("side_effect ran %d times, want 1", got)
			}
			calls := toolCalls(h.srv, fixtures.ToolSideEffect)
			if len(calls) != 2 || calls[1].Status != tc.status || calls[1].Fault != fixtures.FaultReject {
				t.Errorf("side_effect requests = %+v, want the second rejected and no retry", calls)
			}
			st := h.pool.Stat()
			if st.Redials != 0 || st.Failures[spans.ErrTypeHTTPStatus] != 1 || st.IdleSessions != 0 {
				t.Errorf("stat = %+v, want no redial and one http_status drop", st)
			}
			inv := h.lastInvocation()
			if len(inv.calls) != 1 {
				t.Fatalf("%d call spans, want 1", len(inv.calls))
			}
			wantAttr(t, "call", inv.calls[0], spans.AttrErrorType, spans.ErrTypeHTTPStatus)
			wantAttr(t, "invoke", inv.invoke, spans.AttrErrorType, spans.ErrTypeHTTPStatus)
			h.wantFreshSessionNext("count:2")
		})
	}
	t.Run("503 during the handshake", func(t *testing.T) {
		h := newHarness(t, harnessOpts{})
		// The first session-bearing request of a dial is the initialized
		// notification.
		h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, RetryAfter: 3 * time.Second, Method: "notifications/initialized"})
		_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
		var hs *pool.HTTPStatusError
		if !errors.As(err, &hs) || hs.Status != http.StatusServiceUnavailable || hs.RetryAfter != 3*time.Second {
			t.Fatalf("err = %v, want *HTTPStatusError 503 with RetryAfter 3s", err)
		}
		if h.srv.SideEffects() != 0 || rpcCount(h.srv, "initialize") != 1 {
			t.Errorf("side effects %d, initializes sent %d; want 0 and 1 (no retry)", h.srv.SideEffects(), rpcCount(h.srv, "initialize"))
		}
		st := h.pool.Stat()
		if st.Dials != 1 || st.DialFailures != 1 || st.Redials != 0 {
			t.Errorf("stat = %+v, want one failed dial and no retry", st)
		}
		inv := h.lastInvocation()
		if len(inv.handshakes) != 1 {
			t.Fatalf("%d handshake spans, want 1", len(inv.handshakes))
		}
		wantAttr(t, "handshake", inv.handshakes[0], spans.AttrErrorType, spans.ErrTypeHTTPStatus)
		wantAttr(t, "acquire", inv.acquires[0], spans.AttrErrorType, spans.ErrTypeHTTPStatus)
	})
}

func TestFaultMatrix_CloseWhileCallsInFlight(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	const n = 3
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := h.call(context.Background(), fixtures.ToolSlow, map[string]any{"ms": 300})
			errs <- err
		})
	}
	if err := h.srv.WaitInFlight(boundedContext(t), n); err != nil {
		t.Fatal(err)
	}
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.call(context.Background(), fixtures.ToolSideEffect, nil); !errors.Is(err, pool.ErrPoolClosed) {
		t.Errorf("call after Close: err = %v, want ErrPoolClosed", err)
	}
	wantAttr(t, "acquire after Close", h.lastInvocation().acquires[0], spans.AttrErrorType, spans.ErrTypePoolClosed)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a call in flight at Close failed: %v", err)
		}
	}
	if h.srv.SideEffects() != 0 {
		t.Error("the tool of the refused call ran")
	}
	st := h.pool.Stat()
	if st.InUseSessions != 0 || st.IdleSessions != 0 || st.Evictions[spans.EvictPoolClosed] != n || st.Acquires != n {
		t.Errorf("stat = %+v, want the %d leases closed as they came back and nothing held", st, n)
	}
	ids := h.srv.SessionIDs()
	if len(ids) != n {
		t.Fatalf("session ids = %v, want %d", ids, n)
	}
	for _, id := range ids {
		if got := httpCount(h.srv, http.MethodDelete, id); got != 1 {
			t.Errorf("DELETE of %s = %d, want 1", id, got)
		}
	}
}

func TestSessionForgottenRightAfterInitializeIsRedialedOnce(t *testing.T) {
	bodies := []string{fixtures.UnknownSessionBodyText, fixtures.UnknownSessionBodyNullID, fixtures.UnknownSessionBodyRequestID}
	for _, body := range bodies {
		t.Run(body+"/fresh session forgotten: one redial succeeds", func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: fixtures.Options{UnknownSessionBody: body}})
			h.srv.ForgetNextSessions(1)
			if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
				t.Fatalf("call = %q, want count:1 on the redialed session", got)
			}
			st := h.pool.Stat()
			if st.Redials != 1 || st.Dials != 2 || st.MissReasons[spans.MissRedial] != 1 {
				t.Errorf("stat = %+v, want 1 redial after 2 dials", st)
			}
			calls := toolCalls(h.srv, fixtures.ToolSideEffect)
			if len(calls) != 2 || calls[0].Status != http.StatusNotFound || calls[1].Status != http.StatusOK {
				t.Errorf("side_effect requests = %+v, want 404 then 200", calls)
			}
			acq := h.spansNamed(spans.SpanAcquire)
			if len(acq) != 2 || attr(acq[1], spans.AttrAttempt) != "2" || attr(acq[1], spans.AttrMissReason) != spans.MissRedial {
				t.Errorf("acquire spans = %d, want the second attempt 2 with miss_reason redial", len(acq))
			}
		})
		t.Run(body+"/redial forgotten too: no second redial", func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: fixtures.Options{UnknownSessionBody: body}})
			h.srv.ForgetNextSessions(2)
			_, err := h.call(context.Background(), fixtures.ToolSideEffect, nil)
			if !errors.Is(err, pool.ErrSessionExpired) {
				t.Fatalf("err = %v, want ErrSessionExpired after the one redial", err)
			}
			if st := h.pool.Stat(); st.Redials != 1 || st.Dials != 2 {
				t.Errorf("stat = %+v, want exactly one redial", st)
			}
			if n := h.srv.SideEffects(); n != 0 {
				t.Errorf("SideEffects() = %d, want 0", n)
			}
		})
	}
}
