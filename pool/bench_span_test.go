package pool_test

import (
	"context"
	"slices"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// BenchmarkSpanSDK measures what the OpenTelemetry SDK itself costs per span,
// with the tracer provider the other benchmarks use (always sample, batch
// processor, discarding exporter) and nothing of the pool: the floor under
// the pool's three spans per call. Its allocs/op is the SDK's own share of
// what tracing adds to a call (BenchmarkCallToolClient).
//
//   - bare: Start and End, no options;
//   - start-attrs: one prebuilt option slice (kind and four attributes), as
//     the pool's invoke and call spans start;
//   - start-attrs+set: the same, plus one SetAttributes of a prebuilt slice
//     of three before End, as the pool's acquire span on a hit once did;
//   - kind+set-all: only the kind at start, and all seven attributes in one
//     SetAttributes of a prebuilt slice before End, as the pool's spans do
//     now: the SDK then copies the attributes once (into the span), not
//     twice (into the start config, then into the span).
//
// ns/op is the calling goroutine's time; cpu-ns/span is the whole
// process's CPU time (rusage) per span, which also counts the batch
// processor's goroutine: every End hands the span to it over a channel,
// and waking it is part of what a span costs.
func BenchmarkSpanSDK(b *testing.B) {
	startAttrs := []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			attribute.String("a.one", "1"), attribute.String("a.two", "2"),
			attribute.String("a.three", "3"), attribute.Int("a.four", 4),
		),
	}
	endAttrs := []attribute.KeyValue{attribute.Bool("b.one", true), attribute.String("b.two", "2"), attribute.String("b.three", "3")}
	allAttrs := []attribute.KeyValue{
		attribute.String("a.one", "1"), attribute.String("a.two", "2"),
		attribute.String("a.three", "3"), attribute.Int("a.four", 4),
		attribute.Bool("b.one", true), attribute.String("b.two", "2"), attribute.String("b.three", "3"),
	}
	// An acquire span on a hit carries ten: its key, attempt and pool id,
	// the pool's five settings, cache_hit and the protocol version. Past
	// eight, the SDK's End deduplicates them through a map too big to stay
	// off the heap.
	tenAttrs := append(slices.Clone(allAttrs), attribute.Int("c.one", 1), attribute.Float64("c.two", 2), attribute.String("c.three", "3"))
	for _, tc := range []struct {
		name string
		opts []trace.SpanStartOption
		set  []attribute.KeyValue
	}{
		{"bare", nil, nil},
		{"start-attrs", startAttrs, nil},
		{"start-attrs+set", startAttrs, endAttrs},
		{"kind+set-all", []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}, allAttrs},
		{"kind+set-ten", []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}, tenAttrs},
	} {
		b.Run(tc.name, func(b *testing.B) {
			tr := sdkTracer(b).Tracer("bench")
			ctx := context.Background()
			b.ReportAllocs()
			c0, n := processCPU(b), 0
			for b.Loop() {
				n++
				_, span := tr.Start(ctx, "span", tc.opts...)
				if tc.set != nil {
					span.SetAttributes(tc.set...)
				}
				span.End()
			}
			b.ReportMetric(float64((processCPU(b)-c0).Nanoseconds())/float64(n), "cpu-ns/span")
		})
	}
}
