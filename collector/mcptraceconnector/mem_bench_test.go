package mcptraceconnector

import (
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// openTracesHeld is how many open traces BenchmarkMemoryPerOpenTrace holds.
const openTracesHeld = 5000

// BenchmarkMemoryPerOpenTrace holds openTracesHeld open traces of the
// benchmark workload (internal/tracegen.BenchBatches: an execution root and
// two invocations per trace, each with its acquire, handshake on a miss and
// tool call, every attribute the pool sets, about 7 spans a trace, fed in
// export requests of about 900 spans) in a buffer whose wait never passes,
// and reports the heap they retain after a GC:
//
//   - B/open_trace and B/span: live heap per open trace and per span held,
//     once a sweep has encoded them (encodeAfter): what the buffer holds
//     for most of a trace's wait;
//   - B/fresh_trace: the same before they are encoded (pdata), what a
//     trace younger than encodeAfter costs;
//   - retained/otlp: B/open_trace over the traces' OTLP protobuf size (what
//     came over the wire);
//   - MiB@max_open_traces: B/open_trace times the default max_open_traces
//     (100000), the figure to size a collector's memory limit by (per leg;
//     traces younger than encodeAfter cost B/fresh_trace instead).
//
// It is a measurement, not a timed assertion: run with -benchtime 3x and
// read the figures.
//
//	go test -run '^$' -bench BenchmarkMemoryPerOpenTrace -benchtime 3x ./mcptraceconnector/
func BenchmarkMemoryPerOpenTrace(b *testing.B) {
	var perTrace, fresh, wire, spans float64
	for b.Loop() {
		perTrace, fresh, wire, spans = holdOpenTraces(b, openTracesHeld)
	}
	b.ReportMetric(perTrace, "B/open_trace")
	b.ReportMetric(fresh, "B/fresh_trace")
	b.ReportMetric(perTrace/spans, "B/span")
	b.ReportMetric(perTrace/wire, "retained/otlp")
	b.ReportMetric(perTrace*DefaultMaxOpenTraces/(1<<20), "MiB@max_open_traces")
}

// holdOpenTraces feeds the workload's export requests to a buffer until it
// holds at least n open traces and returns, per open trace, the live heap
// the buffer holds once encoded and before, the OTLP protobuf size of its
// spans and their count.
func holdOpenTraces(b *testing.B, n int) (retained, fresh, wire, spans float64) {
	b.Helper()
	var sizer ptrace.ProtoMarshaler
	buf := newTraceBuffer(time.Hour, 2*n, false)
	now := time.Now()
	before := liveHeap()
	traces := 0
	_, err := tracegen.BenchBatches(n*10, func(td ptrace.Traces) error {
		if traces >= n {
			return nil
		}
		wire += float64(sizer.TracesSize(td))
		spans += float64(td.SpanCount())
		cut, complete, _ := buf.add(td, now)
		if len(cut)+len(complete) > 0 {
			b.Fatalf("%d traces left the buffer", len(cut)+len(complete))
		}
		_, traces = buf.snapshot()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if traces < n {
		b.Fatalf("the workload made %d traces, want %d", traces, n)
	}
	pdata := liveHeap() - before
	buf.encodeOlder(now) // a sweep encodeAfter later
	held := liveHeap() - before
	if counts, open := buf.snapshot(); open != traces || counts.lostParts != 0 {
		b.Fatalf("%d open traces after encoding (lost parts %d), want %d", open, counts.lostParts, traces)
	}
	runtime.KeepAlive(buf)
	per := func(x float64) float64 { return x / float64(traces) }
	return per(float64(held)), per(float64(pdata)), per(wire), per(spans)
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBufferThroughput feeds the benchmark workload (20000 spans in
// export requests of about 900) through a buffer and finalizes every trace:
// "held" keeps every trace open past encodeAfter (a sweep encodes them)
// until a final flush, as a trace waiting out wait is (hold_complete, or a
// root that never comes here); "held-fresh" finalizes them before they are
// encoded (a root in a later export request, within encodeAfter);
// "complete" finalizes each at the end of the request that brought its
// root. spans/s is the buffering's own cost, with no analyzer.
//
//	go test -run '^$' -bench BenchmarkBufferThroughput -count 5 ./mcptraceconnector/
func BenchmarkBufferThroughput(b *testing.B) {
	var batches []ptrace.Traces
	spans, err := tracegen.BenchBatches(20000, func(td ptrace.Traces) error {
		batches = append(batches, td)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name             string
		complete, encode bool
	}{{"held", false, true}, {"held-fresh", false, false}, {"complete", true, false}} {
		b.Run(c.name, func(b *testing.B) {
			now := time.Now()
			finalized := 0
			for b.Loop() {
				buf := newTraceBuffer(time.Hour, 1<<20, c.complete)
				for _, td := range batches {
					_, complete, _ := buf.add(td, now)
					finalized += len(complete)
				}
				if c.encode {
					buf.encodeOlder(now)
				}
				finalized += len(buf.flush())
			}
			if finalized == 0 {
				b.Fatal("nothing finalized")
			}
			b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
		})
	}
}
