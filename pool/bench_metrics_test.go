package pool_test

// Benchmarks of what the pool's metrics cost on the hit path. The
// "## Metrics" section of BENCHMARKS.md reports them; speed is measured
// here, never asserted in tests.
//
//   - BenchmarkHitMetrics: acquire+release of a key that always hits, with
//     no meter provider (metrics off), and with the OpenTelemetry SDK meter
//     provider and a manual reader, which is what the Prometheus exporter is
//     (metrics on: the counter, two histograms and the attribute sets).
//   - BenchmarkHitMetricsParallel: the same from GOMAXPROCS goroutines.
//   - BenchmarkHitRecording: the three recordings a hit makes (acquires
//     counter, wait_time and use_time histograms) straight on the SDK, with
//     attributes built per call and with attribute sets built once (what
//     the pool's per-key sets save).

import (
	"context"
	"runtime"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// metricsBench is a fixture, a pool on it with n idle sessions for one
// target, and the reader of its metrics (nil when metrics are off); all are
// closed by b.Cleanup.
type metricsBench struct {
	pool   *pool.Pool
	target *pool.Target
	reader *sdkmetric.ManualReader
}

func newMetricsBench(b *testing.B, withMetrics bool, n int) *metricsBench {
	b.Helper()
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		b.Fatalf("start fixture: %v", err)
	}
	b.Cleanup(func() { _ = srv.Close() })
	opts := pool.Options{MaxIdlePerKey: n, SweepInterval: -1}
	e := &metricsBench{}
	if withMetrics {
		e.reader = sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(e.reader))
		b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
		opts.MeterProvider = mp
	}
	p, err := pool.New(opts)
	if err != nil {
		b.Fatalf("pool.New: %v", err)
	}
	// Registered after the fixture's: cleanups run last-in first-out, so
	// the pool's DELETEs reach a live server.
	b.Cleanup(func() { _ = p.Close() })
	e.pool = p
	if e.target, err = pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL()}); err != nil {
		b.Fatalf("NewTarget: %v", err)
	}
	leases := make([]pool.Lease, 0, n)
	for range n {
		l, err := p.Acquire(context.Background(), e.target)
		if err != nil {
			b.Fatalf("warm-up acquire: %v", err)
		}
		leases = append(leases, l)
	}
	for _, l := range leases {
		l.Release(nil)
	}
	return e
}

// check fails the benchmark unless every acquire after the n warm-up misses
// hit, and, with metrics on, unless the acquires counter saw them all: a
// benchmark of a path that records nothing would measure nothing.
func (e *metricsBench) check(b *testing.B, n int) {
	b.Helper()
	st := e.pool.Stat()
	if st.Misses != int64(n) || st.Hits != st.Acquires-int64(n) {
		b.Fatalf("hit path missed: %d acquires, %d hits, %d misses", st.Acquires, st.Hits, st.Misses)
	}
	if e.reader == nil {
		return
	}
	var rm metricdata.ResourceMetrics
	if err := e.reader.Collect(context.Background(), &rm); err != nil {
		b.Fatal(err)
	}
	var counted int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == spans.MetricAcquires {
				for _, dp := range sum.DataPoints {
					counted += dp.Value
				}
			}
		}
	}
	if counted != st.Acquires {
		b.Fatalf("acquires counter = %d, pool counted %d", counted, st.Acquires)
	}
}

// metricsModes are the two sides of every comparison.
var metricsModes = []struct {
	name string
	on   bool
}{{"metrics-off", false}, {"metrics-on", true}}

// BenchmarkHitMetrics measures acquire+release on the hit path with the
// pool's metrics off and on.
func BenchmarkHitMetrics(b *testing.B) {
	for _, mode := range metricsModes {
		b.Run(mode.name, func(b *testing.B) {
			e := newMetricsBench(b, mode.on, 1)
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
			e.check(b, 1)
		})
	}
}

// BenchmarkHitMetricsParallel is BenchmarkHitMetrics from GOMAXPROCS
// goroutines on one key, with as many idle sessions: every acquire hits, and
// the instruments' own synchronization is measured under contention.
func BenchmarkHitMetricsParallel(b *testing.B) {
	n := runtime.GOMAXPROCS(0)
	for _, mode := range metricsModes {
		b.Run(mode.name, func(b *testing.B) {
			e := newMetricsBench(b, mode.on, n)
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
			e.check(b, n)
		})
	}
}

// BenchmarkHitRecording isolates the metrics work of one hit: an add to the
// acquires counter with pool, cache_hit and miss_reason, a wait_time record
// with pool and cache_hit, and a use_time record with pool. "per-call"
// builds the attribute sets on every call (metric.WithAttributes), as the
// pool once did; "cached-sets" passes sets built once
// (metric.WithAttributeSet), as the pool now does per key.
func BenchmarkHitRecording(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	m := mp.Meter(spans.ScopeName + "/bench")
	acquires, err := m.Int64Counter(spans.MetricAcquires)
	if err != nil {
		b.Fatal(err)
	}
	wait, err := m.Float64Histogram(spans.MetricConnectionWaitTime)
	if err != nil {
		b.Fatal(err)
	}
	use, err := m.Float64Histogram(spans.MetricConnectionUseTime)
	if err != nil {
		b.Fatal(err)
	}
	poolAttr := attribute.String(spans.AttrPoolID, "bench")
	hit := attribute.Bool(spans.AttrCacheHit, true)
	reason := attribute.String(spans.AttrMissReason, "")
	ctx := context.Background()
	b.Run("per-call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			acquires.Add(ctx, 1, metric.WithAttributes(poolAttr, hit, reason))
			wait.Record(ctx, 0.0001, metric.WithAttributes(poolAttr, hit))
			use.Record(ctx, 0.0002, metric.WithAttributes(poolAttr))
		}
	})
	b.Run("cached-sets", func(b *testing.B) {
		acq := metric.WithAttributeSet(attribute.NewSet(poolAttr, hit, reason))
		waitAttrs := metric.WithAttributeSet(attribute.NewSet(poolAttr, hit))
		useAttrs := metric.WithAttributeSet(attribute.NewSet(poolAttr))
		b.ReportAllocs()
		for b.Loop() {
			acquires.Add(ctx, 1, acq)
			wait.Record(ctx, 0.0001, waitAttrs)
			use.Record(ctx, 0.0002, useAttrs)
		}
	})
}
