package engine

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestSketchPercentiles pins the latency sketch's contract: exact up to
// sketchExact samples, within 0.4% (relative, plus the microsecond
// rounding) past it, whatever the split into merged parts.
func TestSketchPercentiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name  string
		n     int
		parts int
		exact bool
	}{
		{"below the cap, one part: exact", measure.SketchExact, 1, true},
		{"below the cap, merged from 7 parts: exact", measure.SketchExact, 7, true},
		{"past the cap, one part: within 0.4%", 3 * measure.SketchExact, 1, false},
		{"past the cap, merged from 5 parts: within 0.4%", 3 * measure.SketchExact, 5, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := make([]int64, tc.n)
			for i := range ds {
				ds[i] = int64(rng.ExpFloat64() * 3e6) // ~3 ms, a long tail
			}
			whole := measure.Sketch{Bounded: true}
			for p := range tc.parts {
				part := measure.Sketch{Bounded: true}
				for i := p; i < len(ds); i += tc.parts {
					part.Add(ds[i])
				}
				whole.Merge(&part)
			}
			got := whole.Percentiles()
			want := measure.Percentiles(append([]int64(nil), ds...))
			if got.Count != want.Count {
				t.Fatalf("count %d, want %d", got.Count, want.Count)
			}
			for _, q := range []struct {
				name      string
				got, want *float64
			}{{"p50", got.P50, want.P50}, {"p95", got.P95, want.P95}, {"p99", got.P99, want.P99}} {
				diff := math.Abs(*q.got - *q.want)
				if tc.exact && diff != 0 {
					t.Errorf("%s = %v, want exactly %v", q.name, *q.got, *q.want)
				}
				if !tc.exact && diff > *q.want/256+0.001 {
					t.Errorf("%s = %v, want %v within 0.4%%", q.name, *q.got, *q.want)
				}
			}
		})
	}
}

// TestUnboundedSketchStaysExact pins that a batch run's series (the zero
// sketch) never folds: exact past sketchExact samples.
func TestUnboundedSketchStaysExact(t *testing.T) {
	var s measure.Sketch
	ds := make([]int64, 2*measure.SketchExact+1)
	for i := range ds {
		ds[i] = int64(i * 7919 % 100003)
		s.Add(ds[i])
	}
	var other measure.Sketch
	other.Merge(&s)
	got, want := other.Percentiles(), measure.Percentiles(ds)
	if other.Buckets != nil || got.Count != want.Count || *got.P50 != *want.P50 || *got.P95 != *want.P95 || *got.P99 != *want.P99 {
		t.Errorf("an unbounded series folded: p50 %v p95 %v p99 %v, want %v %v %v", *got.P50, *got.P95, *got.P99, *want.P50, *want.P95, *want.P99)
	}
}

// TestSketchBucketsCoverEveryDuration pins that every duration falls in a
// bucket whose midpoint is within 1/256 of it.
func TestSketchBucketsCoverEveryDuration(t *testing.T) {
	for _, d := range []int64{0, 1, 255, 256, 257, 1000, 123456789, 1 << 40, math.MaxInt64} {
		b := measure.BucketOf(d)
		if b < 0 || b >= measure.SketchBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of range", d, b)
		}
		if mid := measure.BucketMid(b); math.Abs(float64(mid)-float64(d)) > float64(d)/256+1 {
			t.Errorf("bucketOf(%d): midpoint %d, more than 1/256 away", d, mid)
		}
	}
}

// TestStreamLatencyEqualsBatchPastTheExactSamples pins that past
// sketchExact samples a series' percentiles depend only on the samples, not
// on how the traces holding them were finalized: a batch run (the engine
// fed everything, and Analyze over one index) and a stream finalizing
// traces as it goes give the same figures.
func TestStreamLatencyEqualsBatchPastTheExactSamples(t *testing.T) {
	var batches []ptrace.Traces
	if _, err := tracegen.BenchBatches(300_000, func(td ptrace.Traces) error {
		batches = append(batches, td)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	batch := engineReport(t, rulefmt.Config{}, EngineOptions{Shards: 2}, batches)
	if n := batch.Pool.Latency.Call.Count; n <= measure.SketchExact {
		t.Fatalf("%d call samples: the dump must pass sketchExact (%d) for this test to mean anything", n, measure.SketchExact)
	}
	stream := engineReport(t, rulefmt.Config{}, EngineOptions{Shards: 2, Window: 30 * time.Second}, batches)
	if stream.Stream == nil || stream.Stream.EarlyTraces == 0 {
		t.Fatalf("the stream finalized nothing early: %+v", stream.Stream)
	}
	if !reflect.DeepEqual(batch.Pool.Latency, stream.Pool.Latency) {
		t.Errorf("latency: batch %+v, stream %+v", batch.Pool.Latency, stream.Pool.Latency)
	}
}
