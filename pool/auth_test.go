//lint:file-ignore SA1019 TestOptions_BothSamplingHandlersAreRefused validates the deprecated sampling handlers

package pool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// authGate is a resource server in front of a fixture: a request whose
// bearer token is not the current one is answered 401 (or 403
// insufficient_scope once a step-up is asked for) with a challenge, and a
// request with it is proxied to the fixture. It records the Authorization
// header of every request.
type authGate struct {
	mu     sync.Mutex
	want   string // the token the gate accepts
	status int    // what a request without it gets: 401 or 403
	seen   []string
	srv    *httptest.Server
}

func newAuthGate(t *testing.T, backend string) *authGate {
	t.Helper()
	u, err := url.Parse(backend)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "" // the requests carry it
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // SSE
	g := &authGate{want: "tok-1", status: http.StatusUnauthorized}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		g.mu.Lock()
		g.seen = append(g.seen, got)
		ok, status := got == "Bearer "+g.want, g.status
		g.mu.Unlock()
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="more"`)
			http.Error(w, "unauthorized", status)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// stepUp makes the gate want tok-2 and answer 403 until it gets it.
func (g *authGate) stepUp() {
	g.mu.Lock()
	g.want, g.status = "tok-2", http.StatusForbidden
	g.mu.Unlock()
}

func (g *authGate) headers() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.seen...)
}

// countingHandler is an auth.OAuthHandler whose flow hands out tok-1, tok-2,
// … one per Authorize, and counts the calls and the statuses it was called
// for.
type countingHandler struct {
	mu        sync.Mutex
	tok       string
	authorize []int
}

var _ auth.OAuthHandler = (*countingHandler)(nil)

func (h *countingHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tok == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.tok}), nil
}

func (h *countingHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.authorize = append(h.authorize, resp.StatusCode)
	h.tok = fmt.Sprintf("tok-%d", len(h.authorize))
	return nil
}

func (h *countingHandler) calls() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.authorize...)
}

// newAuthPool is a pool with h as its OAuth handler and a target at the
// gate, pinned to version unless it is "".
func newAuthPool(t *testing.T, h auth.OAuthHandler, g *authGate, version string) (*pool.Pool, *pool.Target) {
	t.Helper()
	p, err := pool.New(pool.Options{OAuthHandler: h, SweepInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	target, err := pool.NewTarget(pool.TargetConfig{Endpoint: g.srv.URL + fixtures.MCPPath, ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	return p, target
}

// startAuthFixture starts a default fixture closed by t.Cleanup.
func startAuthFixture(t *testing.T) *fixtures.Server {
	t.Helper()
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// TestOAuthHandler_TheFirst401RunsTheFlowOnceAndEveryRequestCarriesTheToken:
// the handshake's 401 runs the handler's flow once, the refused request is
// sent again with its body, every later request carries the token, and the
// session the authorization healed is kept (one dial for two calls).
func TestOAuthHandler_TheFirst401RunsTheFlowOnceAndEveryRequestCarriesTheToken(t *testing.T) {
	srv := startAuthFixture(t)
	g := newAuthGate(t, srv.URL())
	h := &countingHandler{}
	p, target := newAuthPool(t, h, g, "")
	ctx := context.Background()
	for i := range 2 {
		if _, err := p.CallTool(ctx, target, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "x"}}); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	if got := h.calls(); len(got) != 1 || got[0] != http.StatusUnauthorized {
		t.Errorf("Authorize called for %v, want once for a 401", got)
	}
	hdrs := g.headers()
	if len(hdrs) < 3 || hdrs[0] != "" {
		t.Fatalf("requests' Authorization: %q, want the first without a token, then every one with it", hdrs)
	}
	for i, v := range hdrs[1:] {
		if v != "Bearer tok-1" {
			t.Errorf("request %d carried Authorization %q, want Bearer tok-1", i+2, v)
		}
	}
	if st := p.Stat(); st.Dials != 1 || st.Hits != 1 {
		t.Errorf("Stat: %d dials, %d hits; want 1 and 1 (the authorized session kept)", st.Dials, st.Hits)
	}
}

// TestOAuthHandler_AStepUpInTheMiddleOfALeaseIsNoFault: a 403
// insufficient_scope on a call of a leased session runs the flow again and
// the call succeeds; the 403 the handler healed is not the session's fault,
// so it goes back idle and the next call reuses it.
func TestOAuthHandler_AStepUpInTheMiddleOfALeaseIsNoFault(t *testing.T) {
	srv := startAuthFixture(t)
	g := newAuthGate(t, srv.URL())
	h := &countingHandler{}
	p, target := newAuthPool(t, h, g, "")
	ctx := context.Background()
	call := func(what string) {
		t.Helper()
		if _, err := p.CallTool(ctx, target, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": what}}); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	call("before the step-up")
	g.stepUp()
	call("the step-up")
	call("after the step-up")
	if got := h.calls(); len(got) != 2 || got[1] != http.StatusForbidden {
		t.Errorf("Authorize called for %v, want a 401 then a 403", got)
	}
	st := p.Stat()
	if st.Dials != 1 || st.Hits != 2 || len(srv.SessionIDs()) != 1 {
		t.Errorf("Stat: %d dials, %d hits, %d server sessions; want 1, 2, 1 (a healed 403 drops nothing)", st.Dials, st.Hits, len(srv.SessionIDs()))
	}
}

// TestOAuthHandler_ARequestRefusedAfterAuthorizationIsNotAuthorizedAgain:
// a server that refuses the new token too gets one Authorize per request,
// never a loop, and the dial fails with the refusal.
func TestOAuthHandler_ARequestRefusedAfterAuthorizationIsNotAuthorizedAgain(t *testing.T) {
	srv := startAuthFixture(t)
	g := newAuthGate(t, srv.URL())
	g.mu.Lock()
	g.want = "a token no flow hands out"
	g.mu.Unlock()
	h := &countingHandler{}
	// Pinned, so the handshake is one request (initialize), not a probe
	// and its fallback.
	p, target := newAuthPool(t, h, g, "2025-11-25")
	_, err := p.CallTool(context.Background(), target, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "x"}})
	if err == nil {
		t.Fatal("call through a gate that refuses every token succeeded")
	}
	var se *pool.HTTPStatusError
	if !errors.As(err, &se) && !strings.Contains(err.Error(), "401") {
		t.Errorf("error %v names no 401", err)
	}
	if got := h.calls(); len(got) != 1 {
		t.Errorf("Authorize called %d times (%v) for one refused request, want 1", len(got), got)
	}
	if n := len(g.headers()); n != 2 {
		t.Errorf("%d requests reached the gate, want 2 (the first and its one retry)", n)
	}
}

// sdkLikeHandler keeps its token in a plain field, as the Go SDK's
// handlers do (AuthorizationCodeHandler's tokenSource): it is safe only if
// whoever shares it never runs Authorize beside another Authorize or a
// TokenSource. It counts its flows.
type sdkLikeHandler struct {
	tok   string
	flows atomic.Int32
}

func (h *sdkLikeHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	if h.tok == "" {
		return nil, nil
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: h.tok}), nil
}

func (h *sdkLikeHandler) Authorize(_ context.Context, _ *http.Request, resp *http.Response) error {
	resp.Body.Close()
	h.tok = fmt.Sprintf("tok-%d", h.flows.Add(1))
	return nil
}

// TestOAuthHandler_ABurstOfColdDialsAuthorizesOnce: twenty concurrent first
// calls to twenty identities, each dialing its own session, all meet a 401;
// the shared handler's flow runs once and the others are sent again with
// its token.
func TestOAuthHandler_ABurstOfColdDialsAuthorizesOnce(t *testing.T) {
	srv := startAuthFixture(t)
	g := newAuthGate(t, srv.URL())
	h := &sdkLikeHandler{}
	p, _ := newAuthPool(t, h, g, "")
	const n = 20
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		// n identities (the query is part of the key), so n handshakes at
		// once: the first dials of one key would wait for one handshake.
		target, err := pool.NewTarget(pool.TargetConfig{Endpoint: fmt.Sprintf("%s%s?n=%d", g.srv.URL, fixtures.MCPPath, i)})
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			<-start
			_, err := p.CallTool(context.Background(), target, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": fmt.Sprint(i)}})
			errs <- err
		}()
	}
	close(start)
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if got := h.flows.Load(); got != 1 {
		t.Errorf("the flow ran %d times for a burst of %d cold dials, want 1", got, n)
	}
}

// TestOptions_BothSamplingHandlersAreRefused: the SDK panics on both
// sampling handlers; pool.New says which field is wrong instead.
func TestOptions_BothSamplingHandlersAreRefused(t *testing.T) {
	co := &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, nil
		},
		CreateMessageWithToolsHandler: func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			return nil, nil
		},
	}
	p, err := pool.New(pool.Options{ClientOptions: co})
	if err == nil {
		_ = p.Close()
		t.Fatal("pool.New with both sampling handlers succeeded")
	}
	if !strings.Contains(err.Error(), "Options.ClientOptions") || !strings.Contains(err.Error(), "CreateMessageWithToolsHandler") {
		t.Errorf("error %q does not name the field", err)
	}
}
