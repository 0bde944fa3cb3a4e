package pool_test

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// prewarmEnv is a fixture, a recorder and the targets of two tenants on
// the fixture, for a pool the test builds itself (pre-warm happens in New).
type prewarmEnv struct {
	srv  *fixtures.Server
	rec  *telemetry.Recorder
	tp   *sdktrace.TracerProvider
	a, b *pool.Target
}

func newPrewarmEnv(t *testing.T) *prewarmEnv {
	t.Helper()
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	e := &prewarmEnv{srv: srv, rec: telemetry.NewRecorder()}
	e.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(e.rec))
	t.Cleanup(func() { _ = e.tp.Shutdown(context.Background()) })
	e.a = tenantTarget(t, srv.URL(), "a")
	e.b = tenantTarget(t, srv.URL(), "b")
	return e
}

func tenantTarget(t *testing.T, endpoint, tenant string) *pool.Target {
	t.Helper()
	tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: endpoint, Header: http.Header{"X-Tenant": {tenant}}})
	if err != nil {
		t.Fatalf("NewTarget: %v", err)
	}
	return tg
}

// newPool builds a pool on e's tracer with opts, closed at cleanup.
func (e *prewarmEnv) newPool(t *testing.T, opts pool.Options) *pool.Pool {
	t.Helper()
	opts.TracerProvider = e.tp
	opts.SweepInterval = -1
	p, err := pool.New(opts)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// prewarmHandshakes returns the recorded handshake spans marked pre-warm.
func (e *prewarmEnv) prewarmHandshakes() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range recordedNamed(e.rec, spans.SpanHandshake) {
		if attr(s, spans.AttrPrewarm) == "true" {
			out = append(out, s)
		}
	}
	return out
}

// TestPrewarmedKeyIsAHitWithNoSecondHandshake: New dials the pre-warm
// targets (a repeated key once), the server's ledger shows one initialize
// per key before any acquire, and the first acquire of each key takes the
// pre-warmed session: a hit, with no handshake of its own.
func TestPrewarmedKeyIsAHitWithNoSecondHandshake(t *testing.T) {
	e := newPrewarmEnv(t)
	again := tenantTarget(t, e.srv.URL(), "a") // the key of e.a
	p := e.newPool(t, pool.Options{Prewarm: []*pool.Target{e.a, again, e.b}})
	if got := e.srv.Initializes(); got != 2 {
		t.Fatalf("after New the server saw %d initializes, want 2 (one per distinct pre-warm key)", got)
	}
	st := p.Stat()
	if st.PrewarmDials != 2 || st.Dials != 2 || st.IdleSessions != 2 || st.Acquires != 0 {
		t.Fatalf("after New: PrewarmDials %d, Dials %d, IdleSessions %d, Acquires %d; want 2, 2, 2, 0", st.PrewarmDials, st.Dials, st.IdleSessions, st.Acquires)
	}
	for _, tg := range []*pool.Target{e.a, e.b, e.a} {
		l, err := p.Acquire(context.Background(), tg)
		if err != nil {
			t.Fatalf("acquire: %v", err)
		}
		if !l.CacheHit() {
			t.Errorf("acquire of a pre-warmed key missed")
		}
		if _, err := l.CallTool(context.Background(), &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}}); err != nil {
			t.Fatalf("call: %v", err)
		}
		l.Release(nil)
	}
	if got := e.srv.Initializes(); got != 2 {
		t.Errorf("after the acquires the server saw %d initializes, want still 2", got)
	}
	if st := p.Stat(); st.Hits != 3 || st.Misses != 0 {
		t.Errorf("Stat: %d hits, %d misses; want 3, 0", st.Hits, st.Misses)
	}
	hs := e.prewarmHandshakes()
	if len(hs) != 2 || len(recordedNamed(e.rec, spans.SpanHandshake)) != 2 {
		t.Fatalf("%d pre-warm handshake spans of %d; want 2 of 2", len(hs), len(recordedNamed(e.rec, spans.SpanHandshake)))
	}
	for _, s := range hs {
		if s.Parent().IsValid() {
			t.Errorf("a pre-warm handshake has a parent span %s: no acquire paid for it", s.Parent().SpanID())
		}
		if attr(s, spans.AttrPoolID) != p.ID() || attr(s, spans.AttrCacheKey) == "" || attr(s, spans.AttrSessionID) == "" {
			t.Errorf("pre-warm handshake attrs = %v: want the pool id, cache key and session id", s.Attributes())
		}
	}
	for _, a := range recordedNamed(e.rec, spans.SpanAcquire) {
		if attr(a, spans.AttrCacheHit) != "true" {
			t.Errorf("acquire span cache_hit = %s, want true", attr(a, spans.AttrCacheHit))
		}
	}
}

// TestFailedPrewarmDialDoesNotFailNew: a pre-warm target whose server is
// down fails its dial, New still returns a working pool with the other
// target warm, the failure shows on its handshake span and in Stat, and
// the failed key's first acquire is a cold miss, as without the pre-warm.
func TestFailedPrewarmDialDoesNotFailNew(t *testing.T) {
	e := newPrewarmEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := tenantTarget(t, "http://"+ln.Addr().String()+"/mcp", "down")
	ln.Close() // nothing listens there now: the dial is refused
	p := e.newPool(t, pool.Options{Prewarm: []*pool.Target{down, e.a}})
	st := p.Stat()
	if st.PrewarmDials != 2 || st.PrewarmFailures != 1 || st.DialFailures != 1 || st.IdleSessions != 1 || st.Keys != 1 {
		t.Fatalf("after New: PrewarmDials %d, PrewarmFailures %d, DialFailures %d, IdleSessions %d, Keys %d; want 2, 1, 1, 1, 1",
			st.PrewarmDials, st.PrewarmFailures, st.DialFailures, st.IdleSessions, st.Keys)
	}
	var failed int
	for _, s := range e.prewarmHandshakes() {
		if s.Status().Code == codes.Error {
			failed++
			if attr(s, spans.AttrErrorType) == "" || attr(s, spans.AttrCacheKey) != down.Key() {
				t.Errorf("failed pre-warm handshake attrs = %v: want error.type and the down key", s.Attributes())
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d failed pre-warm handshake spans, want 1", failed)
	}
	l, err := p.Acquire(context.Background(), e.a)
	if err != nil || !l.CacheHit() {
		t.Fatalf("acquire of the warm key: hit %v, err %v; want a hit", l.CacheHit(), err)
	}
	l.Release(nil)
	if _, err := p.Acquire(context.Background(), down); err == nil {
		t.Fatal("acquire of the down key succeeded")
	}
	if got := p.Stat().MissReasons[spans.MissCold]; got != 1 {
		t.Errorf("the down key's first acquire: %d cold misses, want 1 (reasons %v)", got, p.Stat().MissReasons)
	}
}

// TestCloseClosesPrewarmedSessions: sessions pre-warmed and never
// acquired are closed by Close (an HTTP DELETE each), and no goroutine
// outlives the pool (goleak in TestMain).
func TestCloseClosesPrewarmedSessions(t *testing.T) {
	e := newPrewarmEnv(t)
	p := e.newPool(t, pool.Options{Prewarm: []*pool.Target{e.a, e.b}})
	ids := e.srv.SessionIDs()
	if len(ids) != 2 {
		t.Fatalf("server sessions after New: %v, want 2", ids)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if n := httpCount(e.srv, http.MethodDelete, id); n != 1 {
			t.Errorf("session %s: %d DELETEs after Close, want 1", id, n)
		}
	}
	if st := p.Stat(); st.IdleSessions != 0 || st.Evictions[spans.EvictPoolClosed] != 2 {
		t.Errorf("after Close: %d idle, %d pool_closed evictions; want 0, 2", st.IdleSessions, st.Evictions[spans.EvictPoolClosed])
	}
}

// TestPrewarmIsSkippedWhenThePoolKeepsNoIdleSession: a per-call pool
// (MaxIdlePerKey negative) would close a pre-warmed session at once, so it
// dials none.
func TestPrewarmIsSkippedWhenThePoolKeepsNoIdleSession(t *testing.T) {
	e := newPrewarmEnv(t)
	p := e.newPool(t, pool.Options{MaxIdlePerKey: -1, Prewarm: []*pool.Target{e.a}})
	if st := p.Stat(); st.PrewarmDials != 0 || e.srv.Initializes() != 0 {
		t.Errorf("per-call pool pre-warmed: %d pre-warm dials, %d initializes; want 0, 0", st.PrewarmDials, e.srv.Initializes())
	}
}

// TestPrewarmOptionsAreValidated: a nil pre-warm target and a negative
// timeout are refused by New, naming the field.
func TestPrewarmOptionsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts pool.Options
		want string
	}{
		{"nil target", pool.Options{Prewarm: []*pool.Target{nil}}, "Options.Prewarm[0] is nil"},
		{"negative timeout", pool.Options{PrewarmTimeout: -1}, "Options.PrewarmTimeout is -1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := pool.New(tc.opts)
			if err == nil {
				p.Close()
				t.Fatal("New accepted the options")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// TestPrewarmCountsOnlyFallbackHandshakesAsFallbacks pins
// Stat.NegotiationFallbacks for the sessions New opens (Options.Prewarm),
// as for an acquire's: a handshake that negotiated down to 2025-11-25 (the
// fixture answers no server/discover) counts, one whose revision the
// target pins does not.
func TestPrewarmCountsOnlyFallbackHandshakesAsFallbacks(t *testing.T) {
	for _, tc := range []struct {
		name          string
		pinned        string
		wantFallbacks int64
	}{
		{"negotiated: a fallback", "", 1},
		{"pinned: none", spans.ProtocolLegacy, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := fixtures.Start(fixtures.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), ProtocolVersion: tc.pinned})
			if err != nil {
				t.Fatal(err)
			}
			p, err := pool.New(pool.Options{Prewarm: []*pool.Target{tg}, SweepInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = p.Close() })
			if st := p.Stat(); st.PrewarmDials != 1 || st.PrewarmFailures != 0 || st.NegotiationFallbacks != tc.wantFallbacks {
				t.Errorf("stat = %+v; want 1 pre-warm dial and %d negotiation fallbacks", st, tc.wantFallbacks)
			}
		})
	}
}
