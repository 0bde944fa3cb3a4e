package pool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// A lease begins clean (DESIGN.md): against a server that refuses the
// version probe the way a TypeScript SDK 1.x server does (HTTP 400 and a
// JSON-RPC error), with the pool's default options, the refusal belongs to
// the handshake, never to the first lease of the session it opened.

// ts1 is the fixture of a session-stateful TypeScript SDK 1.x server.
var ts1 = fixtures.Options{Discover: fixtures.DiscoverTypeScriptV1}

// selectThenGet sets the workspace with one call and reads it back with the
// next: continuity is the second call answering what the first one set.
type caller func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error)

func selectThenGet(ctx context.Context, call caller, ws string) error {
	if _, err := call(ctx, &mcp.CallToolParams{Name: fixtures.ToolSelectWorkspace, Arguments: map[string]any{"workspace": ws}}); err != nil {
		return fmt.Errorf("select %s: %w", ws, err)
	}
	res, err := call(ctx, &mcp.CallToolParams{Name: fixtures.ToolGetWorkspace})
	if err != nil {
		return fmt.Errorf("get %s: %w", ws, err)
	}
	if got := resultText(res); got != "workspace:"+ws {
		return fmt.Errorf("get_workspace = %q after selecting %s: the calls did not share a session", got, ws)
	}
	return nil
}

// wantNoFailureMisses checks that nothing was counted as failed: no session
// dropped on release and no miss blamed on a failure.
func wantNoFailureMisses(t *testing.T, st pool.Stat) {
	t.Helper()
	if n := st.MissReasons[spans.MissAfterFailure]; n != 0 {
		t.Errorf("MissReasons[after_failure] = %d, want 0: no request failed", n)
	}
	if f := nonZero(st.Failures); len(f) != 0 {
		t.Errorf("Failures = %v, want none: no request failed", f)
	}
}

// wantTheProbeInTheHandshake checks that the refused probe is where it
// belongs: in the first handshake span's events and Stat's fallback counter.
func wantTheProbeInTheHandshake(t *testing.T, h *harness) {
	t.Helper()
	if st := h.pool.Stat(); st.NegotiationFallbacks != 1 {
		t.Errorf("NegotiationFallbacks = %d, want 1: the refused probe is the handshake's", st.NegotiationFallbacks)
	}
	hs := h.spansNamed(spans.SpanHandshake)
	if len(hs) == 0 {
		t.Fatal("no handshake span")
	}
	want := []string{"server/discover 400", "initialize 200", "notifications/initialized 202"}
	if got := handshakeEvents(hs[0]); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("first handshake requests = %v, want %v", got, want)
	}
	if got := attr(hs[0], spans.AttrNegotiation); got != spans.NegotiationFallback {
		t.Errorf("first handshake negotiation = %q, want %q", got, spans.NegotiationFallback)
	}
}

func TestALeaseBeginsClean_TheRefusedProbeNeverTouchesTheFirstSession(t *testing.T) {
	const executions = 4
	tests := []struct {
		name string
		// run does one execution i: select a workspace, read it back.
		run func(ctx context.Context, p *pool.Pool, tg *pool.Target, i int) error
	}{
		{"Execution: every execution's calls share its session, the first included", func(ctx context.Context, p *pool.Pool, tg *pool.Target, i int) error {
			e := p.Execution()
			defer e.Close()
			return selectThenGet(ctx, func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				return e.CallTool(ctx, tg, params)
			}, fmt.Sprintf("ws-%d", i))
		}},
		{"held lease: released clean, the next acquire reuses it", func(ctx context.Context, p *pool.Pool, tg *pool.Target, i int) (err error) {
			l, err := p.Acquire(ctx, tg)
			if err != nil {
				return err
			}
			defer func() { l.Release(err) }()
			if i > 0 && !l.CacheHit() {
				return fmt.Errorf("execution %d dialed: the first session was not kept", i)
			}
			return selectThenGet(ctx, l.CallTool, fmt.Sprintf("ws-%d", i))
		}},
		{"Pool.CallTool: sequential calls stay on the key's one session", func(ctx context.Context, p *pool.Pool, tg *pool.Target, i int) error {
			return selectThenGet(ctx, func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				return p.CallTool(ctx, tg, params)
			}, fmt.Sprintf("ws-%d", i))
		}},
		{"isError on the first session is a clean release", func(ctx context.Context, p *pool.Pool, tg *pool.Target, i int) error {
			if i == 0 {
				res, err := p.CallTool(ctx, tg, &mcp.CallToolParams{Name: fixtures.ToolFail})
				if err != nil {
					return fmt.Errorf("fail tool: %w", err)
				}
				if !res.IsError {
					return errors.New("fail tool answered without isError")
				}
				return nil
			}
			return selectThenGet(ctx, func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				return p.CallTool(ctx, tg, params)
			}, fmt.Sprintf("ws-%d", i))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: ts1})
			ctx := context.Background()
			for i := range executions {
				if err := tc.run(ctx, h.pool, h.target, i); err != nil {
					t.Fatalf("execution %d: %v", i, err)
				}
			}
			if got := h.srv.Initializes(); got != 1 {
				t.Errorf("fixture initializes = %d, want 1 for the key", got)
			}
			if got := rpcCount(h.srv, "initialize"); got != 1 {
				t.Errorf("initialize requests in the ledger = %d, want 1", got)
			}
			if ids := h.srv.SessionIDs(); len(ids) != 1 {
				t.Errorf("session ids = %v, want one", ids)
			}
			st := h.pool.Stat()
			if st.Dials != 1 || st.MissReasons[spans.MissCold] != 1 || st.Misses != 1 {
				t.Errorf("dials = %d misses = %d (%v), want the one cold dial", st.Dials, st.Misses, nonZero(st.MissReasons))
			}
			wantNoFailureMisses(t, st)
			wantTheProbeInTheHandshake(t, h)
			for _, s := range h.spansNamed(spans.SpanCallTool) {
				if got := attr(s, spans.AttrErrorType); got != "" && got != spans.ErrTypeToolError {
					t.Errorf("call span %s has error.type %q", attr(s, spans.AttrToolName), got)
				}
			}
		})
	}
}

// The upstream conformance "session-renegotiation-404" shape: the server
// forgets a session right after its handshake, so the first call on the
// freshly dialed session is answered 404. The call's own 404 decides: one
// transparent redial, never a second, on both redial paths.
func TestALeaseBeginsClean_AFreshSessionForgottenIsRedialedOnceThroughTheProbe(t *testing.T) {
	paths := []struct {
		name string
		call func(ctx context.Context, p *pool.Pool, tg *pool.Target) (*mcp.CallToolResult, error)
	}{
		{"Pool.CallTool", func(ctx context.Context, p *pool.Pool, tg *pool.Target) (*mcp.CallToolResult, error) {
			return p.CallTool(ctx, tg, &mcp.CallToolParams{Name: fixtures.ToolSideEffect})
		}},
		{"Execution", func(ctx context.Context, p *pool.Pool, tg *pool.Target) (*mcp.CallToolResult, error) {
			e := p.Execution()
			defer e.Close()
			return e.CallTool(ctx, tg, &mcp.CallToolParams{Name: fixtures.ToolSideEffect})
		}},
	}
	bodies := []string{fixtures.UnknownSessionBodyNullID, fixtures.UnknownSessionBodyRequestID, fixtures.UnknownSessionBodyText}
	for _, path := range paths {
		for _, body := range bodies {
			t.Run(path.name+"/"+body+"/forgotten once: one redial succeeds", func(t *testing.T) {
				h := newHarness(t, harnessOpts{fixture: fixtures.Options{Discover: fixtures.DiscoverTypeScriptV1, UnknownSessionBody: body}})
				h.srv.ForgetNextSessions(1)
				res, err := path.call(context.Background(), h.pool, h.target)
				if err != nil {
					t.Fatalf("call: %v, want one transparent redial", err)
				}
				if got := resultText(res); got != "count:1" {
					t.Fatalf("call = %q, want count:1 on the redialed session", got)
				}
				st := h.pool.Stat()
				if st.Redials != 1 || st.Dials != 2 || st.MissReasons[spans.MissRedial] != 1 {
					t.Errorf("redials = %d dials = %d misses %v, want 1 redial after 2 dials", st.Redials, st.Dials, nonZero(st.MissReasons))
				}
				if st.Failures[spans.ErrTypeSessionExpired] != 1 || len(nonZero(st.Failures)) != 1 {
					t.Errorf("Failures = %v, want the one expired session", nonZero(st.Failures))
				}
				calls := toolCalls(h.srv, fixtures.ToolSideEffect)
				if len(calls) != 2 || calls[0].Status != http.StatusNotFound || calls[1].Status != http.StatusOK {
					t.Errorf("side_effect requests = %+v, want 404 then 200", calls)
				}
				if got := h.srv.Initializes(); got != 2 {
					t.Errorf("initializes = %d, want 2 (the cold dial and the one redial)", got)
				}
				wantTheProbeInTheHandshake(t, h)
			})
			t.Run(path.name+"/"+body+"/redial forgotten too: no second redial", func(t *testing.T) {
				h := newHarness(t, harnessOpts{fixture: fixtures.Options{Discover: fixtures.DiscoverTypeScriptV1, UnknownSessionBody: body}})
				h.srv.ForgetNextSessions(2)
				_, err := path.call(context.Background(), h.pool, h.target)
				if !errors.Is(err, pool.ErrSessionExpired) {
					t.Fatalf("err = %v, want ErrSessionExpired: the call's own 404, not the probe's 400", err)
				}
				var hs *pool.HTTPStatusError
				if errors.As(err, &hs) {
					t.Errorf("err carries HTTP %d: the probe's refusal leaked into the call", hs.Status)
				}
				if st := h.pool.Stat(); st.Redials != 1 || st.Dials != 2 {
					t.Errorf("redials = %d dials = %d, want exactly one redial", st.Redials, st.Dials)
				}
				if n := h.srv.SideEffects(); n != 0 {
					t.Errorf("SideEffects() = %d, want 0: the tool never ran", n)
				}
				if got := len(toolCalls(h.srv, fixtures.ToolSideEffect)); got != 2 {
					t.Errorf("side_effect requests = %d, want 2 (the call and its one redial)", got)
				}
			})
		}
	}
}

// A dial that fails after the refused probe is reported by the request that
// failed, not by the probe: here initialize is refused 503 with Retry-After.
func TestALeaseBeginsClean_AFailedDialReportsItsOwnRefusalNotTheProbes(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: ts1})
	h.srv.RejectNext(fixtures.Reject{Method: "initialize", Status: http.StatusServiceUnavailable, RetryAfter: 2 * time.Second})
	_, err := h.call(context.Background(), fixtures.ToolEcho, nil)
	var hs *pool.HTTPStatusError
	if !errors.As(err, &hs) {
		t.Fatalf("err = %v, want an *HTTPStatusError", err)
	}
	if hs.Status != http.StatusServiceUnavailable || hs.RetryAfter != 2*time.Second {
		t.Errorf("HTTPStatusError = %+v, want initialize's 503 with Retry-After 2s, not the probe's 400", *hs)
	}
	if st := h.pool.Stat(); st.DialFailures != 1 {
		t.Errorf("DialFailures = %d, want 1", st.DialFailures)
	}
}

// Fifty executions at a time on a key whose first dial took the fallback:
// every session opened is one more execution in flight, so sessions opened
// never exceed the peak (which implies the matrix's "peak + 5%").
func TestALeaseBeginsClean_ConcurrentExecutionsOpenNoMoreSessionsThanThePeak(t *testing.T) {
	const workers, executions = 50, 150
	h := newHarness(t, harnessOpts{fixture: ts1, pool: pool.Options{MaxIdlePerKey: workers, MaxIdle: workers}})
	ctx, cancel := context.WithTimeout(context.Background(), loadBound)
	defer cancel()
	var running, peak atomic.Int64
	slots := make(chan struct{}, workers)
	errs := make(chan error, executions)
	var wg sync.WaitGroup
	for i := range executions {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			n := running.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			defer running.Add(-1)
			e := h.pool.Execution()
			defer e.Close()
			if err := selectThenGet(ctx, func(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
				return e.CallTool(ctx, h.target, params)
			}, fmt.Sprintf("ws-%d", i)); err != nil {
				errs <- fmt.Errorf("execution %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	st := h.pool.Stat()
	if st.Dials > peak.Load() {
		t.Errorf("sessions opened = %d for a peak of %d executions in flight (misses %v)", st.Dials, peak.Load(), nonZero(st.MissReasons))
	}
	if got := int64(h.srv.Initializes()); got != st.Dials {
		t.Errorf("fixture initializes = %d, pool dials = %d", got, st.Dials)
	}
	wantNoFailureMisses(t, st)
	t.Logf("%d executions, %d workers, peak %d, sessions opened %d", executions, workers, peak.Load(), st.Dials)
}
