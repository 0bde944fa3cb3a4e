package pool_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

func TestMain(m *testing.M) {
	if os.Getenv(fixtureChildEnv) != "" {
		os.Exit(serveFixtureChild())
	}
	goleak.VerifyTestMain(m)
}

// harness is one fixture server and one instrumented pool on it.
type harness struct {
	t       *testing.T
	srv     *fixtures.Server
	pool    *pool.Pool
	target  *pool.Target
	rec     *telemetry.Recorder
	reader  *sdkmetric.ManualReader
	clock   *fakeClock
	logs    *syncBuffer
	tracerP *sdktrace.TracerProvider
}

type harnessOpts struct {
	fixture fixtures.Options
	pool    pool.Options
	target  pool.TargetConfig
	clock   bool
}

func newHarness(t *testing.T, o harnessOpts) *harness {
	t.Helper()
	srv, err := fixtures.Start(o.fixture)
	if err != nil {
		t.Fatalf("start fixture: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	h := &harness{t: t, srv: srv, rec: telemetry.NewRecorder(), reader: sdkmetric.NewManualReader(), logs: &syncBuffer{}}
	h.tracerP = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(h.rec))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(h.reader))
	t.Cleanup(func() {
		_ = h.tracerP.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	opts := o.pool
	opts.TracerProvider = h.tracerP
	opts.MeterProvider = mp
	opts.Logger = slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.SweepInterval == 0 {
		opts.SweepInterval = -1
	}
	p, err := pool.New(opts)
	if err != nil {
		t.Fatalf("pool.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if o.clock {
		h.clock = &fakeClock{now: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
		pool.SetClock(p, h.clock.Now)
	}
	h.pool = p
	tc := o.target
	if tc.Endpoint == "" {
		tc.Endpoint = srv.URL()
	}
	h.target, err = pool.NewTarget(tc)
	if err != nil {
		t.Fatalf("NewTarget: %v", err)
	}
	return h
}

// call runs one tool call through the pool and returns its text.
func (h *harness) call(ctx context.Context, tool string, args map[string]any) (string, error) {
	res, err := h.pool.CallTool(ctx, h.target, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", err
	}
	return resultText(res), nil
}

// mustCall is call that fails the test on error.
func (h *harness) mustCall(tool string, args map[string]any) string {
	h.t.Helper()
	out, err := h.call(context.Background(), tool, args)
	if err != nil {
		h.t.Fatalf("call %s: %v", tool, err)
	}
	return out
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// rpcCount counts ledger entries with the JSON-RPC method.
func rpcCount(srv *fixtures.Server, method string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.RPCMethod == method {
			n++
		}
	}
	return n
}

// httpCount counts ledger entries with the HTTP method and session id.
func httpCount(srv *fixtures.Server, method, session string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.HTTPMethod == method && r.SessionID == session {
			n++
		}
	}
	return n
}

// spansNamed returns the recorded spans with the name, in end order.
func (h *harness) spansNamed(name string) []sdktrace.ReadOnlySpan { return recordedNamed(h.rec, name) }

// recordedNamed returns rec's spans with the name, in end order: every
// harness of the package reads its recorder so.
func recordedNamed(rec *telemetry.Recorder, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Spans() {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

// attr returns the string form of a span attribute, "" if absent.
func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.String()
		}
	}
	return ""
}

func hasAttr(s sdktrace.ReadOnlySpan, key string) bool {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return true
		}
	}
	return false
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ http.RoundTripper = (*http.Transport)(nil)
