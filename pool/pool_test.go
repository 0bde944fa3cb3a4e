package pool_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

func TestSequentialCallsReuseOneSession(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	const n = 5
	for i := range n {
		if got := h.mustCall("echo", map[string]any{"text": "hi"}); got != "hi" {
			t.Fatalf("call %d: got %q, want %q", i, got, "hi")
		}
	}
	if ids := h.srv.SessionIDs(); len(ids) != 1 {
		t.Errorf("ledger session ids = %v, want exactly one", ids)
	}
	if got := h.srv.Initializes(); got != 1 {
		t.Errorf("initializes = %d, want 1", got)
	}
	st := h.pool.Stat()
	if st.Acquires != n || st.Hits != n-1 || st.Misses != 1 || st.MissReasons[spans.MissCold] != 1 {
		t.Errorf("stat = %+v, want %d acquires, %d hits, 1 cold miss", st, n, n-1)
	}
	if st.IdleSessions != 1 || st.InUseSessions != 0 {
		t.Errorf("gauges idle=%d inUse=%d, want 1 and 0", st.IdleSessions, st.InUseSessions)
	}
}

func TestConcurrentLeasesDialTheirOwnSessions(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	a, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if a.SessionID() == b.SessionID() {
		t.Fatalf("two concurrent leases share session %s", a.SessionID())
	}
	// Both calls must be in flight at once: the pool does not serialize.
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, l := range []pool.Lease{a, b} {
		wg.Go(func() {
			_, err := l.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 200}})
			errs <- err
		})
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := h.srv.WaitInFlight(waitCtx, 2); err != nil {
		t.Fatalf("two slow calls never ran at once: %v", err)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	a.Release(nil)
	b.Release(nil)
	if got := h.srv.PeakInFlight(); got != 2 {
		t.Errorf("peak in flight = %d, want 2", got)
	}
	st := h.pool.Stat()
	if st.MissReasons[spans.MissCold] != 1 || st.MissReasons[spans.MissConcurrent] != 1 {
		t.Errorf("miss reasons = %v, want one cold and one concurrent", st.MissReasons)
	}
	// The key needed two sessions at once: it keeps both for the next
	// burst (its recent in-use peak), closing none.
	if st.IdleSessions != 2 || st.Evictions[spans.EvictIdleLimit] != 0 || st.PeakInUse != 2 {
		t.Errorf("idle=%d evictions=%v peak=%d, want 2 idle, no idle_limit eviction, peak 2", st.IdleSessions, st.Evictions, st.PeakInUse)
	}
}

func TestSelectThenGetInOneExecutionSeesTheSelection(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	if got := h.mustCall("select_workspace", nil); got != "selected:ws-e2e" {
		t.Fatalf("select_workspace = %q", got)
	}
	if got := h.mustCall("get_workspace", nil); got != "workspace:ws-e2e" {
		t.Fatalf("get_workspace = %q, want the selection made by the previous call", got)
	}
	if ids := h.srv.SessionIDs(); len(ids) != 1 {
		t.Errorf("ledger session ids = %v, want exactly one", ids)
	}
}

func TestPerCallDialLosesSessionState(t *testing.T) {
	// The regression the pool exists for, pinned so the fixture keeps
	// proving it: with no idle sessions every call lands in a new session.
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdlePerKey: -1}})
	h.mustCall("select_workspace", nil)
	if got := h.mustCall("get_workspace", nil); got != "no workspace selected" {
		t.Fatalf("get_workspace = %q, want no selection in a fresh session", got)
	}
	if ids := h.srv.SessionIDs(); len(ids) != 2 {
		t.Errorf("ledger session ids = %v, want two", ids)
	}
}

func TestForgottenReusedSessionIsRedialedOnceAndToolRunsOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall("side_effect", nil)
	h.srv.ForgetSessions()
	if got := h.mustCall("side_effect", nil); got != "count:2" {
		t.Fatalf("side_effect after redial = %q, want count:2", got)
	}
	if got := h.srv.SideEffects(); got != 2 {
		t.Errorf("side_effect ran %d times, want 2 (once per call)", got)
	}
	st := h.pool.Stat()
	if st.Redials != 1 || st.MissReasons[spans.MissRedial] != 1 || st.Failures[spans.ErrTypeSessionExpired] != 1 {
		t.Errorf("stat = %+v, want one redial after one session_expired drop", st)
	}
	if got := h.srv.Initializes(); got != 2 {
		t.Errorf("initializes = %d, want 2", got)
	}
	acq := h.spansNamed(spans.SpanAcquire)
	last := acq[len(acq)-1]
	if attr(last, spans.AttrAttempt) != "2" || attr(last, spans.AttrMissReason) != spans.MissRedial || attr(last, spans.AttrCacheHit) != "false" {
		t.Errorf("redial acquire attrs = %v", last.Attributes())
	}
	invokes := h.spansNamed(spans.SpanInvoke)
	if got := invokes[len(invokes)-1].Status().Code.String(); got != "Unset" {
		t.Errorf("invoke status after a successful redial = %s, want Unset", got)
	}
}

func TestFailuresDropTheSessionWithoutRetry(t *testing.T) {
	cases := []struct {
		name     string
		fixture  fixtures.Options
		fault    func(*fixtures.Server)
		wantErr  func(error) bool
		wantType string
	}{
		{
			name: "forced 500",
			fault: func(s *fixtures.Server) {
				s.RejectNext(fixtures.Reject{Status: http.StatusInternalServerError, Method: "tools/call"})
			},
			wantErr:  func(err error) bool { var hs *pool.HTTPStatusError; return errors.As(err, &hs) && hs.Status == 500 },
			wantType: spans.ErrTypeHTTPStatus,
		},
		{
			name: "503 with Retry-After",
			fault: func(s *fixtures.Server) {
				s.RejectNext(fixtures.Reject{Status: 503, RetryAfter: 7 * time.Second, Method: "tools/call"})
			},
			wantErr: func(err error) bool {
				var hs *pool.HTTPStatusError
				return errors.As(err, &hs) && hs.Status == 503 && hs.RetryAfter == 7*time.Second
			},
			wantType: spans.ErrTypeHTTPStatus,
		},
		{
			name:     "server answering 400 for an unknown session",
			fixture:  fixtures.Options{UnknownSessionStatus: http.StatusBadRequest},
			fault:    func(s *fixtures.Server) { s.ForgetSessions() },
			wantErr:  func(err error) bool { return errors.Is(err, pool.ErrSessionRejected) },
			wantType: spans.ErrTypeBadSession,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: tc.fixture})
			h.mustCall("side_effect", nil)
			tc.fault(h.srv)
			_, err := h.call(context.Background(), "side_effect", nil)
			if err == nil || !tc.wantErr(err) {
				t.Fatalf("call after fault: err = %v, want the classified failure", err)
			}
			if got := h.srv.SideEffects(); got != 1 {
				t.Errorf("side_effect ran %d times, want 1 (the rejected call never ran and was not retried)", got)
			}
			st := h.pool.Stat()
			if st.Redials != 0 || st.Failures[tc.wantType] != 1 || st.IdleSessions != 0 {
				t.Errorf("stat = %+v, want no redial, one %s failure, nothing idle", st, tc.wantType)
			}
			if got := h.mustCall("side_effect", nil); got != "count:2" {
				t.Errorf("next call = %q, want count:2 on a fresh session", got)
			}
			if st := h.pool.Stat(); st.MissReasons[spans.MissAfterFailure] != 1 {
				t.Errorf("miss reasons = %v, want one after_failure", st.MissReasons)
			}
			if got := h.srv.Initializes(); got != 2 {
				t.Errorf("initializes = %d, want 2", got)
			}
		})
	}
}

func TestFreshDialAnswered404IsNotRetried(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	// The first session-bound request of a dial is the initialized
	// notification: rejecting it fails the handshake itself.
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusNotFound, Method: "notifications/initialized"})
	_, err := h.call(context.Background(), "side_effect", nil)
	if err == nil {
		t.Fatal("call succeeded, want the dial failure")
	}
	if errors.Is(err, pool.ErrSessionExpired) {
		t.Errorf("a fresh dial was reported as an expired session: %v", err)
	}
	st := h.pool.Stat()
	if st.Dials != 1 || st.DialFailures != 1 || st.Redials != 0 {
		t.Errorf("stat = %+v, want one failed dial and no retry", st)
	}
	if h.srv.SideEffects() != 0 {
		t.Error("the tool ran although the dial failed")
	}
	if got := rpcCount(h.srv, "initialize"); got != 1 {
		t.Errorf("initialize requests = %d, want 1 (no retry)", got)
	}
}

func TestNewSessionExpiredOnFirstCallIsNotRetried(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	l, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.ExpireSession(l.SessionID())
	_, err = l.CallTool(ctx, &mcp.CallToolParams{Name: "side_effect"})
	if !errors.Is(err, pool.ErrSessionExpired) {
		t.Fatalf("err = %v, want ErrSessionExpired", err)
	}
	l.Release(err)
	if st := h.pool.Stat(); st.IdleSessions != 0 || st.Redials != 0 {
		t.Errorf("stat = %+v, want the expired session dropped and no redial", st)
	}
}

func TestToolErrorIsACleanRelease(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	res, err := h.pool.CallTool(context.Background(), h.target, &mcp.CallToolParams{Name: "fail"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatal("fail tool result has IsError unset")
	}
	h.mustCall("echo", map[string]any{"text": "x"})
	if st := h.pool.Stat(); st.Hits != 1 || st.Misses != 1 {
		t.Errorf("stat = %+v, want the session kept after a tool error", st)
	}
	call := h.spansNamed(spans.SpanCallTool)[0]
	if attr(call, spans.AttrErrorType) != spans.ErrTypeToolError {
		t.Errorf("call span error.type = %q, want tool_error", attr(call, spans.AttrErrorType))
	}
}

func TestCancellationMidCallDropsTheSession(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall("echo", map[string]any{"text": "warm"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.call(ctx, "slow", map[string]any{"ms": 3000})
		done <- err
	}()
	waitCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := h.srv.WaitInFlight(waitCtx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	st := h.pool.Stat()
	if st.Failures[spans.ErrTypeCanceled] != 1 || st.IdleSessions != 0 {
		t.Errorf("stat = %+v, want the cancelled session dropped", st)
	}
	h.mustCall("echo", map[string]any{"text": "again"})
	if got := h.srv.Initializes(); got != 2 {
		t.Errorf("initializes = %d, want a fresh dial after the cancellation", got)
	}
}

func TestIdleTTLExpiresLazilyAndBySweep(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true})
	h.mustCall("echo", map[string]any{"text": "a"})
	h.clock.Advance(pool.DefaultIdleTTL - time.Second)
	h.mustCall("echo", map[string]any{"text": "b"})
	if st := h.pool.Stat(); st.Hits != 1 {
		t.Fatalf("hits = %d, want a hit just inside the TTL", st.Hits)
	}
	h.clock.Advance(pool.DefaultIdleTTL + time.Second)
	h.mustCall("echo", map[string]any{"text": "c"})
	st := h.pool.Stat()
	if st.MissReasons[spans.MissTTL] != 1 || st.Evictions[spans.EvictTTL] != 1 {
		t.Fatalf("stat = %+v, want one ttl miss and one ttl eviction", st)
	}
	first := h.srv.SessionIDs()[0]
	if got := httpCount(h.srv, http.MethodDelete, first); got != 1 {
		t.Errorf("DELETE for the expired session = %d, want 1", got)
	}

	// An abandoned key is swept when another key is acquired, once it is
	// older than twice the TTL plus one sweep interval (the TTL here: the
	// harness sweeps on acquire only).
	other, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(3*pool.DefaultIdleTTL + time.Second)
	if _, err := h.pool.CallTool(context.Background(), other, &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	st = h.pool.Stat()
	if st.Evictions[spans.EvictTTL] != 2 || st.IdleSessions != 1 {
		t.Errorf("stat = %+v, want the abandoned key's session swept", st)
	}
	if st.Keys != 1 {
		t.Errorf("keys = %d, want the abandoned key forgotten", st.Keys)
	}
}

func TestHealthCheckBeforeReusingALongIdleSession(t *testing.T) {
	h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{HealthCheckAfter: time.Minute}})
	h.mustCall("side_effect", nil)
	h.clock.Advance(2 * time.Minute)
	h.mustCall("side_effect", nil)
	if got := rpcCount(h.srv, "ping"); got != 1 {
		t.Fatalf("pings = %d, want 1 before reusing a session idle 2m", got)
	}
	if st := h.pool.Stat(); st.Hits != 1 {
		t.Fatalf("hits = %d, want the healthy session reused", st.Hits)
	}
	h.srv.ForgetSessions()
	h.clock.Advance(2 * time.Minute)
	if got := h.mustCall("side_effect", nil); got != "count:3" {
		t.Fatalf("call after failed ping = %q", got)
	}
	st := h.pool.Stat()
	if st.MissReasons[spans.MissHealthCheck] != 1 || st.Evictions[spans.EvictHealthCheck] != 1 || st.Redials != 0 {
		t.Errorf("stat = %+v, want one health_check miss and eviction, no redial", st)
	}
}

func TestIdentitiesNeverShareASession(t *testing.T) {
	h := newHarness(t, harnessOpts{target: pool.TargetConfig{BearerToken: "token-alice"}})
	bob, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), BearerToken: "token-bob"})
	if err != nil {
		t.Fatal(err)
	}
	if bob.Key() == h.target.Key() {
		t.Fatal("two credentials produced one key")
	}
	h.mustCall("select_workspace", map[string]any{"workspace": "alice"})
	res, err := h.pool.CallTool(context.Background(), bob, &mcp.CallToolParams{Name: "get_workspace"})
	if err != nil {
		t.Fatal(err)
	}
	if got := resultText(res); got != "no workspace selected" {
		t.Errorf("bob sees %q, want no selection (alice's session must not be shared)", got)
	}
	if got := len(h.srv.SessionIDs()); got != 2 {
		t.Errorf("sessions = %d, want 2", got)
	}
}

func TestCloseWithLeasesOut(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	h.mustCall("echo", map[string]any{"text": "idle"})
	idleID := h.srv.SessionIDs()[0]
	out, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if !out.CacheHit() {
		t.Fatal("expected the idle session to be leased")
	}
	second, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.pool.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, pool.ErrPoolClosed) {
		t.Fatalf("acquire after Close: %v, want ErrPoolClosed", err)
	}
	if _, err := h.call(ctx, "echo", nil); !errors.Is(err, pool.ErrPoolClosed) {
		t.Fatalf("CallTool after Close: %v, want ErrPoolClosed", err)
	}
	// Leases still work until released, then are closed.
	if _, err := out.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "late"}}); err != nil {
		t.Fatalf("call on a lease after Close: %v", err)
	}
	out.Release(nil)
	second.Release(nil)
	if got := httpCount(h.srv, http.MethodDelete, idleID); got != 1 {
		t.Errorf("DELETE of the released session = %d, want 1", got)
	}
	if got := httpCount(h.srv, http.MethodDelete, second.SessionID()); got != 1 {
		t.Errorf("DELETE of the second lease = %d, want 1", got)
	}
	st := h.pool.Stat()
	if st.IdleSessions != 0 || st.InUseSessions != 0 || st.Evictions[spans.EvictPoolClosed] != 2 {
		t.Errorf("stat = %+v, want nothing held and two pool_closed evictions", st)
	}
}

func TestCloseClosesIdleSessions(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall("echo", map[string]any{"text": "x"})
	id := h.srv.SessionIDs()[0]
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	if got := httpCount(h.srv, http.MethodDelete, id); got != 1 {
		t.Errorf("DELETE on Close = %d, want 1", got)
	}
}

func TestReleasingTwicePanics(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	l, err := h.pool.Acquire(context.Background(), h.target)
	if err != nil {
		t.Fatal(err)
	}
	l.Release(nil)
	defer func() {
		if recover() == nil {
			t.Error("second Release did not panic")
		}
	}()
	l.Release(nil)
}

func TestGlobalIdleCapClosesLeastRecentlyUsed(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdle: 1}})
	other, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {"other"}}})
	if err != nil {
		t.Fatal(err)
	}
	h.mustCall("echo", map[string]any{"text": "a"})
	if _, err := h.pool.CallTool(context.Background(), other, &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	st := h.pool.Stat()
	if st.IdleSessions != 1 || st.Evictions[spans.EvictLRU] != 1 {
		t.Fatalf("stat = %+v, want one idle and one lru eviction", st)
	}
	h.mustCall("echo", map[string]any{"text": "a again"})
	if st := h.pool.Stat(); st.MissReasons[spans.MissEvicted] != 1 {
		t.Errorf("miss reasons = %v, want an evicted miss for the first key", st.MissReasons)
	}
}

func TestSessionlessServerIsPooledWithoutSessionIDs(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{Sessionless: true}})
	for range 3 {
		h.mustCall("echo", map[string]any{"text": "x"})
	}
	if ids := h.srv.SessionIDs(); len(ids) != 0 {
		t.Errorf("session ids = %v, want none", ids)
	}
	st := h.pool.Stat()
	if st.Hits != 2 || st.Misses != 1 {
		t.Errorf("stat = %+v, want the sessionless connection reused", st)
	}
	for _, s := range h.spansNamed(spans.SpanCallTool) {
		if hasAttr(s, spans.AttrSessionID) {
			t.Errorf("call span carries %s on a sessionless server", spans.AttrSessionID)
		}
	}
}

func TestSessionlessServer404IsNotSessionExpiry(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{Sessionless: true}})
	h.mustCall("echo", map[string]any{"text": "x"})
	// A sessionless server's 404 means "not found", not "session gone": a
	// request to a missing path must not be treated as an expiry.
	missing, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL() + "/missing"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.pool.CallTool(context.Background(), missing, &mcp.CallToolParams{Name: "echo"})
	if err == nil || errors.Is(err, pool.ErrSessionExpired) {
		t.Fatalf("err = %v, want an HTTP error that is not ErrSessionExpired", err)
	}
	if st := h.pool.Stat(); st.Redials != 0 {
		t.Errorf("redials = %d, want 0", st.Redials)
	}
}

func TestInvalidOptionsAndTargets(t *testing.T) {
	if _, err := pool.New(pool.Options{IdleTTL: -time.Second}); err == nil {
		t.Error("negative IdleTTL accepted")
	}
	for _, ep := range []string{"ftp://x/mcp", "http:///nohost", "http://user:pw@host/mcp", "::"} {
		_, err := pool.NewTarget(pool.TargetConfig{Endpoint: ep})
		if err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
	_, err := pool.NewTarget(pool.TargetConfig{Endpoint: "http://user:hunter2@host/mcp"})
	if err != nil && contains(err.Error(), "hunter2") {
		t.Errorf("error quotes the password: %v", err)
	}
}

func TestJSONRPCProtocolErrorKeepsTheSession(t *testing.T) {
	// The server answers an unknown tool with a JSON-RPC error over a 200:
	// the session worked, so it stays pooled (a clean release), and the
	// call says protocol_error.
	h := newHarness(t, harnessOpts{})
	h.mustCall(fixtures.ToolSelectWorkspace, map[string]any{"workspace": "kept"})
	_, err := h.call(context.Background(), "no_such_tool", nil)
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatalf("err = %v, want a *jsonrpc.Error", err)
	}
	if got := h.mustCall(fixtures.ToolGetWorkspace, nil); got != "workspace:kept" {
		t.Errorf("after the protocol error get_workspace = %q, want workspace:kept on the same session", got)
	}
	st := h.pool.Stat()
	if st.Dials != 1 || st.Hits != 2 || len(h.srv.SessionIDs()) != 1 {
		t.Errorf("dials = %d hits = %d sessions = %v, want the session kept: 1 dial, 2 hits", st.Dials, st.Hits, h.srv.SessionIDs())
	}
	if n := st.Failures[spans.ErrTypeProtocol]; n != 0 {
		t.Errorf("Failures[%s] = %d, want 0: the session was not dropped", spans.ErrTypeProtocol, n)
	}
	calls := h.spansNamed(spans.SpanCallTool)
	if got := attr(calls[1], spans.AttrErrorType); got != spans.ErrTypeProtocol {
		t.Errorf("call span error.type = %q, want %q", got, spans.ErrTypeProtocol)
	}
}
