package pool_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// The pool's idle policy is one piece of code (package pool/idle) that
// three paths run: the pool deciding live, the analyzer attributing a
// dump's misses, and whatif replaying the dump. This test holds them to
// the same answer on random workloads and settings: the pool against a real
// fixture, on a virtual clock that its spans carry too, then the analyzer
// on that run's dump and the replay of that dump at the settings the pool
// recorded. Every miss cause must agree, acquire by acquire.

// virtualClock is the run's clock: the pool reads it, and so do the spans.
type virtualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *virtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *virtualClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// clockTracerProvider stamps every span's start and end with the virtual
// clock, so that the dump's times are the times the pool decided at.
type clockTracerProvider struct {
	embedded.TracerProvider
	tp    trace.TracerProvider
	clock *virtualClock
}

func (p clockTracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return clockTracer{tr: p.tp.Tracer(name, opts...), clock: p.clock}
}

type clockTracer struct {
	embedded.Tracer
	tr    trace.Tracer
	clock *virtualClock
}

func (t clockTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	ctx, s := t.tr.Start(ctx, name, append(opts, trace.WithTimestamp(t.clock.Now()))...)
	return ctx, clockSpan{Span: s, clock: t.clock}
}

type clockSpan struct {
	trace.Span
	clock *virtualClock
}

func (s clockSpan) End(opts ...trace.SpanEndOption) {
	s.Span.End(append(opts, trace.WithTimestamp(s.clock.Now()))...)
}

// agreeCase is one random run: the pool's settings and its leases.
type agreeCase struct {
	opts   pool.Options
	keys   int
	leases []agreeLease
}

// agreeLease is one lease: of key, from start to end (virtual
// milliseconds), failing or clean.
type agreeLease struct {
	key        int
	start, end int
	failed     bool
}

// newAgreeCase draws a case from rng: an idle TTL of 20 to 200 ms, one of
// the idle sizings, a global cap of 1 to 5, a sweep on acquire or every
// 50 ms (which decides no cause), up to four keys, 8 to 40 leases with
// distinct starts, gaps on the scale of the TTL and overlaps, some failing,
// and sometimes a pre-warmed key.
func newAgreeCase(rng *rand.Rand) agreeCase {
	ttl := 20 + rng.IntN(181)
	c := agreeCase{keys: 1 + rng.IntN(4)}
	c.opts = pool.Options{
		IdleTTL:         time.Duration(ttl) * time.Millisecond,
		MaxIdlePerKey:   []int{-1, 1, 1, 2, 3}[rng.IntN(5)],
		FixedIdlePerKey: rng.IntN(2) == 0,
		MaxIdle:         1 + rng.IntN(5),
		SweepInterval:   []time.Duration{-1, 50 * time.Millisecond}[rng.IntN(2)],
	}
	n := 8 + rng.IntN(33)
	t := 1
	for range n {
		t += 1 + rng.IntN(ttl*3/2)
		hold := 1 + rng.IntN(ttl)
		c.leases = append(c.leases, agreeLease{key: rng.IntN(c.keys), start: t, end: t + hold, failed: rng.IntN(8) == 0})
	}
	return c
}

// agreeRun is what the pool decided: each acquire's cause ("" for a hit)
// by (key, start).
type agreeRun map[[2]string]string

// acquireID names an acquire by its cache key and start.
func acquireID(key string, start int64) [2]string {
	return [2]string{key, fmt.Sprint(start)}
}

// runAgreeCase runs c against srv on a virtual clock, returns the pool's own
// causes and writes the spans to a dump.
func runAgreeCase(t *testing.T, srv *fixtures.Server, c agreeCase, seed uint64, dump string) agreeRun {
	t.Helper()
	base := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clock := &virtualClock{now: base}
	rec := telemetry.NewRecorder()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = sdk.Shutdown(context.Background()) }()
	tp := clockTracerProvider{tp: sdk, clock: clock}
	targets := make([]*pool.Target, c.keys)
	for k := range targets {
		tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), Header: http.Header{"X-Tenant": {fmt.Sprint(k)}}})
		if err != nil {
			t.Fatal(err)
		}
		targets[k] = tg
	}
	opts := c.opts
	opts.ID = fmt.Sprintf("agree-%d", seed)
	opts.TracerProvider = tp
	if seed%3 == 0 {
		opts.Prewarm = targets[:1]
	}
	p, err := pool.NewOnClock(opts, clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	driveLeases(t, p, tp, clock, base, targets, c.leases)
	writeDump(t, rec.Traces(), dump)
	return poolCauses(rec.Spans())
}

// driveLeases runs the leases in time order on one goroutine: each release
// before any acquire at the same instant, as the pool's own order is.
func driveLeases(t *testing.T, p *pool.Pool, tp trace.TracerProvider, clock *virtualClock, base time.Time, targets []*pool.Target, leases []agreeLease) {
	t.Helper()
	type open struct {
		l     pool.Lease
		inv   trace.Span
		lease agreeLease
	}
	tracer := tp.Tracer("agreement")
	var out []open
	ms := func(n int) time.Time { return base.Add(time.Duration(n) * time.Millisecond) }
	release := func(until int) {
		slices.SortStableFunc(out, func(a, b open) int { return cmp.Compare(a.lease.end, b.lease.end) })
		for len(out) > 0 && out[0].lease.end <= until {
			o := out[0]
			out = out[1:]
			clock.set(ms(o.lease.end))
			var err error
			if o.lease.failed {
				err = errors.New("transport broke")
				o.inv.SetAttributes(attribute.String(spans.AttrErrorType, spans.ErrTypeTransport))
				o.inv.SetStatus(codes.Error, "transport broke")
			}
			o.l.Release(err)
			o.inv.End()
		}
	}
	for _, l := range leases {
		release(l.start)
		clock.set(ms(l.start))
		ctx, inv := tracer.Start(context.Background(), spans.SpanInvoke)
		lease, err := p.Acquire(ctx, targets[l.key])
		if err != nil {
			t.Fatalf("acquire at %d ms: %v", l.start, err)
		}
		out = append(out, open{lease, inv, l})
	}
	release(1 << 40)
}

// poolCauses reads the pool's own decision off each acquire span: its
// miss_reason, "" on a hit.
func poolCauses(recorded []sdktrace.ReadOnlySpan) agreeRun {
	out := agreeRun{}
	for _, s := range recorded {
		if s.Name() != spans.SpanAcquire {
			continue
		}
		var key, reason string
		for _, kv := range s.Attributes() {
			switch kv.Key {
			case spans.AttrCacheKey:
				key = kv.Value.AsString()
			case spans.AttrMissReason:
				reason = kv.Value.AsString()
			}
		}
		out[acquireID(key, s.StartTime().UnixNano())] = reason
	}
	return out
}

// writeDump writes td as one OTLP JSON line.
func writeDump(t *testing.T, td ptrace.Traces, path string) {
	t.Helper()
	var m ptrace.JSONMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
}

// analyzerCauses reads the dump as `mcptrace analyze` does and returns each
// acquire's cause, and the whatif workload of the same acquires.
func analyzerCauses(t *testing.T, dump string) (agreeRun, *whatif.Workload) {
	t.Helper()
	out := agreeRun{}
	col := whatif.NewCollector()
	_, err := analyze.ReadAcquires(context.Background(), ingest.Files{dump}, rulefmt.Config{}, analyze.LoadOptions{}, func(a *analyze.Acquire) {
		col.Add(a)
		if !a.Prewarm {
			out[acquireID(a.Key, a.Start)] = a.Cause
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, col.Workload()
}

// counts tallies causes ("" for hits).
func counts(r agreeRun) map[string]int {
	out := map[string]int{}
	for _, c := range r {
		out[c]++
	}
	return out
}

// TestPoolAnalyzerAndReplayAgreeOnEveryMissCause is the property: over
// random workloads and settings, the pool's own miss reasons, the
// analyzer's attribution of the run's dump and whatif's replay of it at
// the recorded settings give the same causes (the first two acquire by
// acquire, the replay by count), and the replay the same hits.
// shortAgreeCases is how many cases run under -short or the race
// detector: enough that every miss cause is seen.
const shortAgreeCases = 40

func TestPoolAnalyzerAndReplayAgreeOnEveryMissCause(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	dir := t.TempDir()
	seen := map[string]bool{}
	cases := agreeCases
	if testing.Short() {
		cases = min(cases, shortAgreeCases)
	}
	for seed := range uint64(cases) {
		c := newAgreeCase(rand.New(rand.NewPCG(seed, 77)))
		dump := filepath.Join(dir, fmt.Sprintf("case-%d.jsonl", seed))
		pooled := runAgreeCase(t, srv, c, seed, dump)
		analyzed, wl := analyzerCauses(t, dump)
		if !maps.Equal(pooled, analyzed) {
			t.Fatalf("seed %d (%+v): the analyzer's causes differ from the pool's:\npool     %v\nanalyzer %v", seed, c.opts, pooled, analyzed)
		}
		set, note, ok := wl.RecordedSettings()
		if !ok {
			t.Fatalf("seed %d: the dump's recorded settings do not read: %s", seed, note)
		}
		row := wl.Replay(set)
		want := counts(pooled)
		hits := want[""]
		delete(want, "")
		if row.Hits != hits || !maps.Equal(row.MissesByCause, want) {
			t.Fatalf("seed %d (%+v): the replay at the recorded settings gives %d hits %v; the pool %d hits %v", seed, c.opts, row.Hits, row.MissesByCause, hits, want)
		}
		for cause := range want {
			seen[cause] = true
		}
	}
	for _, cause := range []string{spans.MissCold, spans.MissConcurrent, spans.MissTTL, spans.MissAfterFailure, spans.MissEvicted} {
		if !seen[cause] {
			t.Errorf("no case produced a %s miss: the property does not cover it", cause)
		}
	}
}
