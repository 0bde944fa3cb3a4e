package pool_test

// Benchmarks of the pool's speed: it is measured here, as ratios
// against baselines measured in the same run, never asserted in tests.
// scripts/bench-pool.sh runs them and writes the "## Pool" section of
// BENCHMARKS.md.
//
//   - BenchmarkHit, BenchmarkHitParallel: acquire+release of a prepared
//     target that always hits, against a plain mutex-and-slice free list;
//     BenchmarkClock: the clock reads the hit path cannot avoid.
//   - BenchmarkCallTool: one pooled loopback CallTool, untraced, with only
//     the trace context propagated, and traced by the real OTel SDK, so the
//     differences are the instrumentation cost; BenchmarkCallToolTracerCost
//     measures the same differences call by call.
//   - BenchmarkExecution, BenchmarkExecutionWithLatency: select_workspace
//     then get_workspace, pooled against a fresh dial per call.

import (
	"context"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// benchLatency is the round trip the fixture emulates in
// BenchmarkExecutionWithLatency: a nearby server over a real network.
const benchLatency = 20 * time.Millisecond

// freeList is the baseline of the hit path: the least a pool of reusable
// objects can do, a mutex around a slice. Get pops the most recently put
// item (or makes one when empty), Put appends.
type freeList struct {
	mu    sync.Mutex
	items []*freeItem
}

// freeItem stands for a session: a pointer-sized handle to something big.
type freeItem struct {
	id   string
	uses int
}

func (f *freeList) Get() *freeItem {
	f.mu.Lock()
	n := len(f.items)
	if n == 0 {
		f.mu.Unlock()
		return &freeItem{}
	}
	it := f.items[n-1]
	f.items[n-1] = nil
	f.items = f.items[:n-1]
	f.mu.Unlock()
	return it
}

func (f *freeList) Put(it *freeItem) {
	f.mu.Lock()
	f.items = append(f.items, it)
	f.mu.Unlock()
}

// newFreeList returns a free list holding n items, with room for them all so
// Put never grows the slice during the benchmark.
func newFreeList(n int) *freeList {
	f := &freeList{items: make([]*freeItem, 0, n)}
	for range n {
		f.items = append(f.items, &freeItem{id: "session"})
	}
	return f
}

// benchEnv is a fixture server and a pool on it, closed by b.Cleanup so a
// benchmark leaves no goroutine behind (TestMain runs goleak).
type benchEnv struct {
	srv    *fixtures.Server
	pool   *pool.Pool
	target *pool.Target
}

func newBenchEnv(b *testing.B, fo fixtures.Options, po pool.Options) *benchEnv {
	b.Helper()
	srv := startFixture(b, fo)
	t, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()})
	if err != nil {
		b.Fatalf("NewTarget: %v", err)
	}
	return &benchEnv{srv: srv, pool: newBenchPool(b, po), target: t}
}

// startFixture starts a fixture server closed by b.Cleanup.
func startFixture(b *testing.B, fo fixtures.Options) *fixtures.Server {
	b.Helper()
	srv, err := fixtures.Start(fo)
	if err != nil {
		b.Fatalf("start fixture: %v", err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	return srv
}

// newBenchPool returns a pool closed by b.Cleanup. Create it after the
// fixture it talks to: cleanups run last-in first-out, so the pool's DELETEs
// still reach a live server.
func newBenchPool(b *testing.B, po pool.Options) *pool.Pool {
	b.Helper()
	if po.SweepInterval == 0 {
		// No background sweeper: nothing to sweep, and one goroutine less
		// competing for the two cores.
		po.SweepInterval = -1
	}
	p, err := pool.New(po)
	if err != nil {
		b.Fatalf("pool.New: %v", err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return p
}

// warm dials n sessions for the target and returns them to idle, so that up
// to n concurrent acquires hit. The pool must keep n idle sessions per key.
func (e *benchEnv) warm(b *testing.B, n int) {
	b.Helper()
	ctx := context.Background()
	leases := make([]pool.Lease, 0, n)
	for range n {
		l, err := e.pool.Acquire(ctx, e.target)
		if err != nil {
			b.Fatalf("warm-up acquire: %v", err)
		}
		leases = append(leases, l)
	}
	for _, l := range leases {
		l.Release(nil)
	}
	if st := e.pool.Stat(); st.IdleSessions != n {
		b.Fatalf("after warm-up: %d idle sessions, want %d", st.IdleSessions, n)
	}
}

// checkAllHits fails the benchmark unless every acquire after the warm-up
// reused an idle session: a miss would make the "hit path" measure a dial.
func (e *benchEnv) checkAllHits(b *testing.B, warm int) {
	b.Helper()
	st := e.pool.Stat()
	if st.Misses != int64(warm) || st.Hits != st.Acquires-int64(warm) {
		b.Fatalf("hit path missed: %d acquires, %d hits, %d misses (want only the %d warm-up misses)", st.Acquires, st.Hits, st.Misses, warm)
	}
}

// discardExporter drops every span. Spans still go through the SDK's batch
// span processor, as in production, so the benchmark pays for recording,
// snapshotting and queueing, but not for an exporter's I/O.
type discardExporter struct{}

func (discardExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardExporter) Shutdown(context.Context) error                             { return nil }

// sdkTracer returns the real SDK tracer provider, sampling every span into a
// discarding exporter, shut down (stopping its goroutine) by b.Cleanup.
func sdkTracer(b *testing.B) trace.TracerProvider {
	b.Helper()
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithBatcher(discardExporter{}),
	)
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tp
}

// BenchmarkHit measures acquire+release of a prepared target whose key always
// has an idle session, with no telemetry (goal: 0 allocs, within 1.5x of
// freelist) and with the SDK tracer (the acquire span's cost).
func BenchmarkHit(b *testing.B) {
	b.Run("freelist", func(b *testing.B) {
		f := newFreeList(1)
		b.ReportAllocs()
		for b.Loop() {
			it := f.Get()
			it.uses++
			f.Put(it)
		}
	})
	for _, tc := range []struct {
		name string
		tp   func(*testing.B) trace.TracerProvider
	}{
		{"pool", func(*testing.B) trace.TracerProvider { return tracenoop.NewTracerProvider() }},
		{"pool-traced", sdkTracer},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchEnv(b, fixtures.Options{}, pool.Options{TracerProvider: tc.tp(b)})
			e.warm(b, 1)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l, err := e.pool.Acquire(ctx, e.target)
				if err != nil {
					b.Fatal(err)
				}
				l.Release(nil)
			}
			b.StopTimer()
			e.checkAllHits(b, 1)
		})
	}
}

// clockSink keeps the compiler from discarding clock reads.
var clockSink time.Time

// BenchmarkClock measures one read of the clock as the pool reads it (one
// monotonic read, the expression of the pool's monotonicNow) and time.Now,
// because the hit path cannot avoid two reads: acquire checks the idle TTL
// and release records when the session went idle. The script uses it to say
// how much of the hit path the clock takes.
func BenchmarkClock(b *testing.B) {
	b.Run("monotonic", func(b *testing.B) {
		base := time.Now()
		for b.Loop() {
			clockSink = base.Add(time.Since(base))
		}
	})
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			clockSink = time.Now()
		}
	})
}

// BenchmarkHitParallel is BenchmarkHit from GOMAXPROCS goroutines on one
// key. The pool keeps as many idle sessions as there are goroutines, so
// every acquire still hits and the benchmark measures contention on the
// pool's mutex, not dials.
func BenchmarkHitParallel(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	b.Run("freelist", func(b *testing.B) {
		f := newFreeList(n)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				it := f.Get()
				it.uses++
				f.Put(it)
			}
		})
	})
	b.Run("pool", func(b *testing.B) {
		e := newBenchEnv(b, fixtures.Options{}, pool.Options{TracerProvider: tracenoop.NewTracerProvider(), MaxIdlePerKey: n})
		e.warm(b, n)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				l, err := e.pool.Acquire(ctx, e.target)
				if err != nil {
					b.Error(err)
					return
				}
				l.Release(nil)
			}
		})
		b.StopTimer()
		e.checkAllHits(b, n)
	})
}

// BenchmarkCallTool measures one pooled CallTool of the echo tool on the
// loopback fixture: with no tracer, with no tracer under a remote parent span
// (the pool then only propagates the trace context in params._meta), and with
// the real SDK tracer, with the pool's names and with SemconvCallSpans (whose
// call span reads the JSON-RPC id from the request body's head). Time
// differences are what the instrumentation costs a call (goal: at most 5%);
// BenchmarkCallToolTracerCost measures them more robustly. B/op and
// allocs/op split the cost exactly.
func BenchmarkCallTool(b *testing.B) {
	for _, tc := range []struct {
		name    string
		tp      func(*testing.B) trace.TracerProvider
		parent  bool
		semconv bool
	}{
		{"untraced", func(*testing.B) trace.TracerProvider { return nil }, false, false},
		{"propagated", func(*testing.B) trace.TracerProvider { return nil }, true, false},
		{"traced", sdkTracer, false, false},
		{"traced-semconv", sdkTracer, false, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			e := newBenchEnv(b, fixtures.Options{}, pool.Options{TracerProvider: tc.tp(b), SemconvCallSpans: tc.semconv})
			e.warm(b, 1)
			ctx := context.Background()
			if tc.parent {
				ctx = remoteParent(ctx)
			}
			params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}}
			b.ReportAllocs()
			for b.Loop() {
				res, err := e.pool.CallTool(ctx, e.target, params)
				if err != nil {
					b.Fatal(err)
				}
				if got := resultText(res); got != "hi" {
					b.Fatalf("echo answered %q, want %q", got, "hi")
				}
			}
			b.StopTimer()
			e.checkAllHits(b, 1)
		})
	}
}

// remoteParent returns ctx under a sampled remote span, as a gateway's
// incoming request would be: the pool propagates it even without a tracer.
func remoteParent(ctx context.Context) context.Context {
	return trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	}))
}

// BenchmarkCallToolTracerCost measures the same cost as BenchmarkCallTool,
// but pairs the sides call by call on one fixture, rotating which goes first,
// so a burst of load on a shared machine lands on all of them alike instead
// of on one sub-benchmark. It reports each side's median wall time per call
// (a loopback call mostly waits for goroutine wake-ups, so a mean would be
// at the mercy of the few calls that waited for another process):
//
//   - untraced: a pool with no tracer, called with a bare context;
//   - propagated: the same pool, called under a remote parent span, so the
//     only difference is the W3C trace context the pool puts in
//     params._meta and what the SDK does with it on both ends;
//   - traced: a pool with the real SDK tracer, so three spans as well.
//
// overhead-% is traced/untraced - 1, the instrumentation cost as a whole;
// propagation-% is propagated/untraced - 1, the part that is not spans.
func BenchmarkCallToolTracerCost(b *testing.B) {
	srv := startFixture(b, fixtures.Options{})
	target, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()})
	if err != nil {
		b.Fatalf("NewTarget: %v", err)
	}
	untraced := newBenchPool(b, pool.Options{})
	traced := newBenchPool(b, pool.Options{TracerProvider: sdkTracer(b)})
	bare := context.Background()
	parent := remoteParent(bare)
	sides := [3]struct {
		p   *pool.Pool
		ctx context.Context
	}{{untraced, bare}, {untraced, parent}, {traced, bare}}
	params := &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "hi"}}
	var wall [3][]time.Duration
	call := func(i int) {
		start := time.Now()
		res, err := sides[i].p.CallTool(sides[i].ctx, target, params)
		wall[i] = append(wall[i], time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
		if got := resultText(res); got != "hi" {
			b.Fatalf("echo answered %q, want %q", got, "hi")
		}
	}
	for i := range sides {
		call(i) // the cold dials are not what is compared
	}
	wall = [3][]time.Duration{}
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		for j := range sides {
			call((n + j) % len(sides))
		}
		n++
	}
	b.StopTimer()
	var med [3]float64
	for i := range sides {
		med[i] = float64(medianDuration(wall[i]))
	}
	b.ReportMetric(med[0], "untraced-ns/call")
	b.ReportMetric(med[1], "propagated-ns/call")
	b.ReportMetric(med[2], "traced-ns/call")
	b.ReportMetric((med[2]/med[0]-1)*100, "overhead-%")
	b.ReportMetric((med[1]/med[0]-1)*100, "propagation-%")
}

// medianDuration sorts ds and returns its median.
func medianDuration(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	if n := len(ds); n%2 == 0 {
		return (ds[n/2-1] + ds[n/2]) / 2
	}
	return ds[len(ds)/2]
}

// BenchmarkExecution measures one two-call execution (select_workspace then
// get_workspace) on the loopback fixture, pooled and with a fresh dial per
// call. It reports the cost of dialing per call when the network is free,
// and the HTTP requests and TCP dials per execution.
func BenchmarkExecution(b *testing.B) {
	benchExecution(b, fixtures.Options{})
}

// BenchmarkExecutionWithLatency is BenchmarkExecution with benchLatency
// before every HTTP request the server handles, where round trips dominate.
// Each op takes tens of milliseconds: run it with a fixed -benchtime such as
// 20x.
func BenchmarkExecutionWithLatency(b *testing.B) {
	benchExecution(b, fixtures.Options{Latency: benchLatency})
}

// BenchmarkLatencyFloor waits benchLatency on a timer twice per op, as the
// fixture does for the two requests of a pooled execution in
// BenchmarkExecutionWithLatency, with nothing else: on a loaded machine a
// timer fires late, and this is how late, measured next to the execution so
// that bench-pool.sh can tell the machine's share of the time above the
// floor from the pool's.
func BenchmarkLatencyFloor(b *testing.B) {
	for b.Loop() {
		for range 2 {
			t := time.NewTimer(benchLatency)
			<-t.C
		}
	}
}

func benchExecution(b *testing.B, fo fixtures.Options) {
	for _, tc := range []struct {
		name          string
		maxIdle       int
		wantWorkspace string // what get_workspace answers
	}{
		// One session for both calls: the selection is seen.
		{"pooled", 0, "workspace:" + fixtures.DefaultWorkspace},
		// A session per call: the second call lands in a new session and
		// sees no selection, the bug pooling exists to fix.
		{"fresh", -1, fixtures.NoWorkspace},
	} {
		b.Run(tc.name, func(b *testing.B) {
			// Every side dials its TCP connections through dials, so
			// that a connection opened because the previous response's
			// was not back in the idle list yet shows as tcp-dials/op.
			var dials atomic.Int64
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = 2
			dialer := &net.Dialer{}
			tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dials.Add(1)
				return dialer.DialContext(ctx, network, addr)
			}
			b.Cleanup(tr.CloseIdleConnections)
			e := newBenchEnv(b, fo, pool.Options{MaxIdlePerKey: tc.maxIdle, HTTPTransport: tr})
			ctx := context.Background()
			sel := &mcp.CallToolParams{Name: fixtures.ToolSelectWorkspace}
			get := &mcp.CallToolParams{Name: fixtures.ToolGetWorkspace}
			execute := func() {
				if _, err := e.pool.CallTool(ctx, e.target, sel); err != nil {
					b.Fatalf("%s: %v", sel.Name, err)
				}
				res, err := e.pool.CallTool(ctx, e.target, get)
				if err != nil {
					b.Fatalf("%s: %v", get.Name, err)
				}
				if got := resultText(res); got != tc.wantWorkspace {
					b.Fatalf("%s answered %q, want %q", get.Name, got, tc.wantWorkspace)
				}
			}
			// Warm up outside the timer: the pooled run's cold dial and the
			// keep-alive TCP connection of both are not what is compared.
			execute()
			runs := 1
			before := len(e.srv.Requests())
			dials0 := dials.Load()
			b.ReportAllocs()
			for b.Loop() {
				execute()
				runs++
			}
			b.StopTimer()
			// The HTTP requests the server handled per execution: the
			// round trips an execution pays (2 when pooled: the two
			// tools/call), which bench-pool.sh builds the floor from.
			b.ReportMetric(float64(len(e.srv.Requests())-before)/float64(runs-1), "http-requests/op")
			b.ReportMetric(float64(dials.Load()-dials0)/float64(runs-1), "tcp-dials/op")
			// The comparison is one handshake in all against one per call.
			want := 1
			if tc.maxIdle < 0 {
				want = 2 * runs
			}
			if got := e.srv.Initializes(); got != want {
				b.Fatalf("%d executions made %d handshakes, want %d", runs, got, want)
			}
		})
	}
}

// BenchmarkExecutionPoolOverSDK measures a two-call execution at
// benchLatency per request against its floor and against the bare SDK:
// each op runs the execution once through the pool, once on one bare SDK
// session dialed as the pool dials (revision pinned, no standalone SSE),
// with no pool, lease or span, on the same fixture and HTTP transport, and
// once through the same pool on a second fixture with no latency (the
// loopback execution: the client's and the server's own time), the three
// taking turns at going first, so that they meet the same load. It reports
// the median wall time of each side, pool-over-sdk (what the pool adds)
// and pooled-over-floor, the median pooled execution over its floor of two
// latencies plus the median loopback execution. Medians, unlike ns/op (all
// three sides), leave out the executions a burst of load on the machine
// delays. Run it with a fixed -benchtime such as 10x.
func BenchmarkExecutionPoolOverSDK(b *testing.B) {
	srv := startFixture(b, fixtures.Options{Latency: benchLatency})
	tr := http.DefaultTransport.(*http.Transport).Clone()
	b.Cleanup(tr.CloseIdleConnections)
	p := newBenchPool(b, pool.Options{HTTPTransport: tr})
	target, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()})
	if err != nil {
		b.Fatalf("NewTarget: %v", err)
	}
	cs := sdkSession(b, srv.URL(), tr)
	loopback := startFixture(b, fixtures.Options{})
	target0, err := pool.NewTarget(pool.TargetConfig{Endpoint: loopback.URL()})
	if err != nil {
		b.Fatalf("NewTarget: %v", err)
	}
	ctx := context.Background()
	sel := &mcp.CallToolParams{Name: fixtures.ToolSelectWorkspace}
	get := &mcp.CallToolParams{Name: fixtures.ToolGetWorkspace}
	want := "workspace:" + fixtures.DefaultWorkspace
	sides := [3]func(*mcp.CallToolParams) (*mcp.CallToolResult, error){
		func(params *mcp.CallToolParams) (*mcp.CallToolResult, error) { return p.CallTool(ctx, target, params) },
		func(params *mcp.CallToolParams) (*mcp.CallToolResult, error) { return cs.CallTool(ctx, params) },
		func(params *mcp.CallToolParams) (*mcp.CallToolResult, error) { return p.CallTool(ctx, target0, params) },
	}
	execute := func(side int) time.Duration {
		began := time.Now()
		if _, err := sides[side](sel); err != nil {
			b.Fatalf("%s: %v", sel.Name, err)
		}
		res, err := sides[side](get)
		if err != nil {
			b.Fatalf("%s: %v", get.Name, err)
		}
		took := time.Since(began)
		if got := resultText(res); got != want {
			b.Fatalf("%s answered %q, want %q", get.Name, got, want)
		}
		return took
	}
	// Warm up outside the timer: the pool's cold dial and the keep-alive
	// TCP connection are not what is compared.
	for side := range sides {
		execute(side)
	}
	var took [len(sides)][]time.Duration
	n := 0
	for b.Loop() {
		for j := range sides {
			side := (n + j) % len(sides)
			took[side] = append(took[side], execute(side))
		}
		n++
	}
	b.StopTimer()
	pooled, bare, local := medianDuration(took[0]), medianDuration(took[1]), medianDuration(took[2])
	b.ReportMetric(float64(pooled.Nanoseconds()), "pooled-ns/exec")
	b.ReportMetric(float64(bare.Nanoseconds()), "sdk-ns/exec")
	b.ReportMetric(float64(local.Nanoseconds()), "loopback-ns/exec")
	b.ReportMetric(float64(pooled)/float64(bare), "pool-over-sdk")
	b.ReportMetric(float64(pooled)/float64(2*benchLatency+local), "pooled-over-floor")
}

// sdkSession dials one SDK client session to url as the pool dials its
// sessions (the revision pinned, no standalone SSE stream, no retries),
// closed by b.Cleanup.
func sdkSession(b *testing.B, url string, tr http.RoundTripper) *mcp.ClientSession {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Transport: tr},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: spans.ProtocolLegacy})
	if err != nil {
		b.Fatalf("connect an SDK session: %v", err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
