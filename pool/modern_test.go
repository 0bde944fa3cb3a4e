package pool_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// startFixture starts a second fixture next to a harness's, closed when the
// test ends.
func startSideFixture(t *testing.T, o fixtures.Options) *fixtures.Server {
	t.Helper()
	srv, err := fixtures.Start(o)
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

func mustTarget(t *testing.T, endpoint string) *pool.Target {
	t.Helper()
	tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func callOn(t *testing.T, p *pool.Pool, tg *pool.Target, tool string, args map[string]any) string {
	t.Helper()
	res, err := p.CallTool(context.Background(), tg, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s on %s: %v", tool, tg, err)
	}
	return resultText(res)
}

// spansWithKey returns the recorded spans named name whose cache key is key.
func (h *harness) spansWithKey(name, key string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range h.spansNamed(name) {
		if attr(s, spans.AttrCacheKey) == key {
			out = append(out, s)
		}
	}
	return out
}

// handshakeEvents lists the JSON-RPC method and HTTP status of each request
// a handshake span recorded as an event.
func handshakeEvents(s sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, ev := range s.Events() {
		if ev.Name != spans.EventHandshakeRequest {
			continue
		}
		var method, status string
		for _, kv := range ev.Attributes {
			switch string(kv.Key) {
			case spans.AttrMethodName:
				method = kv.Value.String()
			case spans.AttrHTTPStatusCode:
				status = kv.Value.String()
			}
		}
		out = append(out, method+" "+status)
	}
	return out
}

func TestDefaultOptionsSpeakBothRevisions(t *testing.T) {
	// One pool, default options: a modern-only server (2026-07-28, like a
	// TypeScript SDK v2 server) and a stateful 2025-11-25 one, side by side.
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{ModernOnly: true}})
	modern := h.target
	legacySrv := startSideFixture(t, fixtures.Options{})
	legacy := mustTarget(t, legacySrv.URL())

	const n = 10
	for i := range n {
		if got := callOn(t, h.pool, modern, fixtures.ToolEcho, map[string]any{"text": "m"}); got != "m" {
			t.Fatalf("modern call %d = %q", i, got)
		}
		if got := callOn(t, h.pool, legacy, fixtures.ToolEcho, map[string]any{"text": "l"}); got != "l" {
			t.Fatalf("legacy call %d = %q", i, got)
		}
	}
	// Session state still works on the stateful server.
	callOn(t, h.pool, legacy, fixtures.ToolSelectWorkspace, map[string]any{"workspace": "ws-l"})
	if got := callOn(t, h.pool, legacy, fixtures.ToolGetWorkspace, nil); got != "workspace:ws-l" {
		t.Errorf("legacy get_workspace = %q, want workspace:ws-l", got)
	}

	// The wire: the modern server saw one discover and no initialize; the
	// legacy one a refused discover, then one initialize.
	if got := rpcCount(h.srv, "server/discover"); got != 1 {
		t.Errorf("modern server discovers = %d, want 1", got)
	}
	if got := rpcCount(h.srv, "initialize"); got != 0 {
		t.Errorf("modern server initializes = %d, want 0", got)
	}
	if ids := h.srv.SessionIDs(); len(ids) != 0 {
		t.Errorf("modern server saw session ids %v", ids)
	}
	if got, init := rpcCount(legacySrv, "server/discover"), legacySrv.Initializes(); got != 1 || init != 1 {
		t.Errorf("legacy server discovers = %d initializes = %d, want 1 and 1", got, init)
	}

	st := h.pool.Stat()
	if st.KeyProtocols[modern.Key()] != spans.ProtocolModern || st.KeyProtocols[legacy.Key()] != spans.ProtocolLegacy {
		t.Errorf("KeyProtocols = %v, want modern key %s and legacy key %s", st.KeyProtocols, spans.ProtocolModern, spans.ProtocolLegacy)
	}
	if st.Dials != 2 || st.Protocols[spans.ProtocolModern] != 1 || st.Protocols[spans.ProtocolLegacy] != 1 {
		t.Errorf("dials = %d protocols = %v, want one handshake of each revision", st.Dials, st.Protocols)
	}
	if st.SharedKeys != 1 {
		t.Errorf("SharedKeys = %d, want the modern key", st.SharedKeys)
	}
	// Cost: discover (1) for modern; discover 400 + initialize +
	// initialized (3) for legacy, one fallback.
	if st.HandshakeRequests != 4 || st.NegotiationFallbacks != 1 {
		t.Errorf("HandshakeRequests = %d NegotiationFallbacks = %d, want 4 and 1", st.HandshakeRequests, st.NegotiationFallbacks)
	}

	// Spans: every acquire and call span names its revision.
	for _, tc := range []struct {
		name string
		tg   *pool.Target
		want string
	}{{"modern", modern, spans.ProtocolModern}, {"legacy", legacy, spans.ProtocolLegacy}} {
		for _, name := range []string{spans.SpanAcquire, spans.SpanCallTool, spans.SpanHandshake} {
			ss := h.spansWithKey(name, tc.tg.Key())
			if len(ss) == 0 {
				t.Errorf("%s: no %s spans", tc.name, name)
			}
			for _, s := range ss {
				if got := attr(s, spans.AttrProtocolVersion); got != tc.want {
					t.Errorf("%s: %s span has %s=%q, want %q", tc.name, name, spans.AttrProtocolVersion, got, tc.want)
				}
			}
		}
		hits := 0
		for _, s := range h.spansWithKey(spans.SpanAcquire, tc.tg.Key()) {
			if attr(s, spans.AttrCacheHit) == "true" {
				hits++
			}
		}
		if want := len(h.spansWithKey(spans.SpanAcquire, tc.tg.Key())) - 1; hits != want {
			t.Errorf("%s: %d hits, want all but the cold acquire (%d)", tc.name, hits, want)
		}
	}
	mh := h.spansWithKey(spans.SpanHandshake, modern.Key())[0]
	if got := attr(mh, spans.AttrNegotiation); got != spans.NegotiationProbed {
		t.Errorf("modern handshake negotiation = %q, want %q", got, spans.NegotiationProbed)
	}
	if got := handshakeEvents(mh); len(got) != 1 || got[0] != "server/discover 200" {
		t.Errorf("modern handshake requests = %v, want [server/discover 200]", got)
	}
	lh := h.spansWithKey(spans.SpanHandshake, legacy.Key())[0]
	if got := attr(lh, spans.AttrNegotiation); got != spans.NegotiationFallback {
		t.Errorf("legacy handshake negotiation = %q, want %q", got, spans.NegotiationFallback)
	}
	// The Go SDK's stateful server answers discover 200 with only legacy
	// revisions listed (a TypeScript one answers 400); either way the
	// client falls back to initialize.
	want := []string{"server/discover 200", "initialize 200", "notifications/initialized 202"}
	if got := handshakeEvents(lh); len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("legacy handshake requests = %v, want %v", got, want)
	}
	for _, s := range h.spansWithKey(spans.SpanAcquire, modern.Key()) {
		if attr(s, spans.AttrSessionless) != "true" {
			t.Errorf("modern acquire span without %s=true", spans.AttrSessionless)
		}
	}
	for _, s := range h.spansWithKey(spans.SpanAcquire, legacy.Key()) {
		if hasAttr(s, spans.AttrSessionless) {
			t.Errorf("legacy acquire span with %s", spans.AttrSessionless)
		}
	}
}

func TestNegotiatedRevisionIsRememberedPerKey(t *testing.T) {
	// No idle sessions: every call dials, so each handshake shows what it
	// cost once the key's revision is known.
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdlePerKey: -1}})
	for range 3 {
		h.mustCall(fixtures.ToolEcho, map[string]any{"text": "x"})
	}
	if got := rpcCount(h.srv, "server/discover"); got != 1 {
		t.Errorf("discovers = %d, want 1: the refused probe is paid once per key", got)
	}
	if got := h.srv.Initializes(); got != 3 {
		t.Errorf("initializes = %d, want 3", got)
	}
	var how []string
	for _, s := range h.spansNamed(spans.SpanHandshake) {
		how = append(how, attr(s, spans.AttrNegotiation))
	}
	if len(how) != 3 || how[0] != spans.NegotiationFallback || how[1] != spans.NegotiationRemembered || how[2] != spans.NegotiationRemembered {
		t.Errorf("negotiations = %v, want fallback then remembered twice", how)
	}
	if st := h.pool.Stat(); st.HandshakeRequests != 3+2+2 || st.NegotiationFallbacks != 1 {
		t.Errorf("HandshakeRequests = %d NegotiationFallbacks = %d, want 7 and 1", st.HandshakeRequests, st.NegotiationFallbacks)
	}
}

func TestPinnedRevisionIsNeverRenegotiated(t *testing.T) {
	h := newHarness(t, harnessOpts{
		fixture: fixtures.Options{ModernOnly: true},
		pool:    pool.Options{ProtocolVersion: spans.ProtocolLegacy},
	})
	if _, err := h.call(context.Background(), fixtures.ToolEcho, nil); err == nil {
		t.Fatal("a 2025-11-25 pin reached a modern-only server")
	}
	if got := rpcCount(h.srv, "initialize"); got != 1 {
		t.Errorf("initializes = %d, want the one refused", got)
	}
	if got := rpcCount(h.srv, "server/discover"); got != 0 {
		t.Errorf("discovers = %d, want 0: a pin is not renegotiated", got)
	}
	acq := h.spansNamed(spans.SpanAcquire)
	if len(acq) != 1 || attr(acq[0], spans.AttrMissReason) != spans.MissCold || attr(acq[0], spans.AttrProtocolVersion) != spans.ProtocolLegacy {
		t.Errorf("failed acquire span attrs = %v, want miss_reason cold and the pinned version", acq[0].Attributes())
	}
}

// switchProxy is a reverse proxy on 127.0.0.1 whose backend a test swaps:
// a server upgraded (or downgraded) behind the same URL.
type switchProxy struct {
	backend atomic.Pointer[url.URL]
	srv     *http.Server
	url     string
}

func startSwitchProxy(t *testing.T, to string) *switchProxy {
	t.Helper()
	sp := &switchProxy{}
	sp.set(t, to)
	tr := &http.Transport{}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(sp.backend.Load())
			r.Out.URL.Path = r.In.URL.Path
			r.Out.Host = r.Out.URL.Host
		},
		Transport: tr,
	}
	h := newListener(t)
	sp.srv = &http.Server{Handler: rp}
	go func() { _ = sp.srv.Serve(h) }()
	sp.url = "http://" + h.Addr().String() + fixtures.MCPPath
	t.Cleanup(func() {
		_ = sp.srv.Close()
		tr.CloseIdleConnections()
	})
	return sp
}

func (sp *switchProxy) set(t *testing.T, to string) {
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = ""
	sp.backend.Store(u)
}

func TestRevisionIsRenegotiatedWhenTheServerChanges(t *testing.T) {
	legacySrv := startSideFixture(t, fixtures.Options{})
	modernSrv := startSideFixture(t, fixtures.Options{ModernOnly: true})
	tests := []struct {
		name          string
		from, to      *fixtures.Server
		before, after string
		wantRefused   string
	}{
		{"upgraded: initialize refused with -32022, retried with a listed version", legacySrv, modernSrv, spans.ProtocolLegacy, spans.ProtocolModern, "initialize 400"},
		{"downgraded: discover answered with legacy revisions only, initialize", modernSrv, legacySrv, spans.ProtocolModern, spans.ProtocolLegacy, "server/discover 200"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			proxy := startSwitchProxy(t, tc.from.URL())
			h := newHarness(t, harnessOpts{pool: pool.Options{MaxIdlePerKey: -1}, target: pool.TargetConfig{Endpoint: proxy.url}})
			h.mustCall(fixtures.ToolEcho, map[string]any{"text": "before"})
			if got := h.pool.Stat().KeyProtocols[h.target.Key()]; got != tc.before {
				t.Fatalf("before the switch the key speaks %q, want %q", got, tc.before)
			}
			proxy.set(t, tc.to.URL())
			if got := h.mustCall(fixtures.ToolEcho, map[string]any{"text": "after"}); got != "after" {
				t.Fatalf("call after the switch = %q", got)
			}
			if got := h.pool.Stat().KeyProtocols[h.target.Key()]; got != tc.after {
				t.Errorf("after the switch the key speaks %q, want %q", got, tc.after)
			}
			hs := h.spansNamed(spans.SpanHandshake)
			last := hs[len(hs)-1]
			if got := attr(last, spans.AttrNegotiation); got != spans.NegotiationFallback {
				t.Errorf("renegotiating handshake = %q, want %q", got, spans.NegotiationFallback)
			}
			if ev := handshakeEvents(last); len(ev) < 2 || ev[0] != tc.wantRefused {
				t.Errorf("renegotiating handshake requests = %v, want %q first", ev, tc.wantRefused)
			}
		})
	}
}

func TestHealthCheckOnlyWhereTheRevisionHasOne(t *testing.T) {
	// A modern server has no ping (and no session to lose): a long idle
	// client is reused as a hit. The stateful server still gets its ping.
	h := newHarness(t, harnessOpts{clock: true, fixture: fixtures.Options{ModernOnly: true}, pool: pool.Options{HealthCheckAfter: time.Minute}})
	legacySrv := startSideFixture(t, fixtures.Options{})
	legacy := mustTarget(t, legacySrv.URL())
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "1"})
	callOn(t, h.pool, legacy, fixtures.ToolEcho, map[string]any{"text": "1"})
	h.clock.Advance(2 * time.Minute)
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "2"})
	callOn(t, h.pool, legacy, fixtures.ToolEcho, map[string]any{"text": "2"})
	if got := rpcCount(h.srv, "ping"); got != 0 {
		t.Errorf("modern server pings = %d, want 0", got)
	}
	if got := rpcCount(h.srv, "server/discover"); got != 1 {
		t.Errorf("modern server discovers = %d, want 1 (no health_check miss)", got)
	}
	if got := rpcCount(legacySrv, "ping"); got != 1 {
		t.Errorf("legacy server pings = %d, want 1", got)
	}
	st := h.pool.Stat()
	if st.Hits != 2 || st.MissReasons[spans.MissHealthCheck] != 0 {
		t.Errorf("hits = %d health_check misses = %d, want 2 hits and none", st.Hits, st.MissReasons[spans.MissHealthCheck])
	}
}

func TestSessionlessKeyShareOneClientAcrossConcurrentCallers(t *testing.T) {
	// 20 concurrent callers x 5 calls on a modern server with default
	// options: one handshake, and the shared client's connections.
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{ModernOnly: true}})
	legacySrv := startSideFixture(t, fixtures.Options{})
	legacy := mustTarget(t, legacySrv.URL())
	const callers, calls = 20, 5
	var wg sync.WaitGroup
	errs := make(chan error, callers*calls*2)
	start := make(chan struct{})
	for range callers {
		wg.Go(func() {
			<-start
			for range calls {
				if _, err := h.pool.CallTool(context.Background(), h.target, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "x"}}); err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			<-start
			for range calls {
				if _, err := h.pool.CallTool(context.Background(), legacy, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "y"}}); err != nil {
					errs <- err
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := rpcCount(h.srv, "server/discover"); got != 1 {
		t.Errorf("modern server discovers = %d, want 1", got)
	}
	if got := rpcCount(h.srv, "tools/call"); got != callers*calls {
		t.Errorf("modern server calls = %d, want %d", got, callers*calls)
	}
	conns := h.srv.Connections()
	t.Logf("modern server: %d TCP connections for %d calls by %d concurrent callers", conns, callers*calls, callers)
	// Each of the MaxSharedCalls slots holds one connection; net/http may
	// dial one more for a slot while another connection is being returned
	// (it races a dial against the idle list), and keeps it for later.
	if limit := int64(2 * pool.DefaultMaxSharedCalls); conns > limit {
		t.Errorf("modern server connections = %d, want at most %d (twice MaxSharedCalls)", conns, limit)
	}
	var hits, misses int
	for _, s := range h.spansWithKey(spans.SpanAcquire, h.target.Key()) {
		switch attr(s, spans.AttrCacheHit) {
		case "true":
			hits++
		case "false":
			misses++
		default:
			t.Errorf("acquire span without %s", spans.AttrCacheHit)
		}
	}
	if misses != 1 || hits != callers*calls-1 {
		t.Errorf("modern acquire spans: %d misses %d hits, want 1 and %d", misses, hits, callers*calls-1)
	}
	// The stateful server still gets exclusive sessions: concurrent callers
	// never share one.
	if got := legacySrv.Initializes(); got < 2 {
		t.Errorf("legacy initializes = %d: concurrent callers must dial their own sessions", got)
	}
	st := h.pool.Stat()
	if st.InUseSessions != 0 {
		t.Errorf("in-use sessions = %d after every caller returned", st.InUseSessions)
	}
}

func TestSharedClientLeaseReleasedTwicePanics(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{ModernOnly: true}})
	a, err := h.pool.Acquire(context.Background(), h.target)
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.pool.Acquire(context.Background(), h.target)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Shared() || !b.Shared() || !b.CacheHit() || a.Session() != b.Session() {
		t.Fatalf("two leases of a sessionless key: shared=%v,%v hit=%v same client=%v; want one shared client", a.Shared(), b.Shared(), b.CacheHit(), a.Session() == b.Session())
	}
	a.Release(nil)
	defer func() {
		if recover() == nil {
			t.Error("second Release of a shared lease did not panic")
		}
		b.Release(nil)
		if st := h.pool.Stat(); st.InUseSessions != 0 || st.IdleSessions != 1 {
			t.Errorf("gauges in use %d idle %d, want 0 and 1", st.InUseSessions, st.IdleSessions)
		}
	}()
	a.Release(nil)
}

func newListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}
