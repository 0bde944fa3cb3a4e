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
//   - B/open_trace and B/span: live heap per open trace and per span held;
//   - retained/otlp: that heap over the traces' OTLP protobuf size (what
//     came over the wire): how much the held form costs over the wire form;
//   - MiB@max_open_traces: the heap a full buffer at the default
//     max_open_traces (100000) would hold, the figure to size a collector's
//     memory limit by.
//
// It is a measurement, not a timed assertion: run with -benchtime 3x and
// read the figures.
//
//	go test -run '^$' -bench BenchmarkMemoryPerOpenTrace -benchtime 3x ./mcptraceconnector/
func BenchmarkMemoryPerOpenTrace(b *testing.B) {
	var perTrace, wire, spans float64
	for b.Loop() {
		perTrace, wire, spans = holdOpenTraces(b, openTracesHeld)
	}
	b.ReportMetric(perTrace, "B/open_trace")
	b.ReportMetric(perTrace/spans, "B/span")
	b.ReportMetric(perTrace/wire, "retained/otlp")
	b.ReportMetric(perTrace*DefaultMaxOpenTraces/(1<<20), "MiB@max_open_traces")
}

// holdOpenTraces feeds the workload's export requests to a buffer until it
// holds at least n open traces and returns, per open trace, the live heap
// the buffer holds, the OTLP protobuf size of its spans and their count.
func holdOpenTraces(b *testing.B, n int) (retained, wire, spans float64) {
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
	held := liveHeap() - before
	runtime.KeepAlive(buf)
	return float64(held) / float64(traces), wire / float64(traces), spans / float64(traces)
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
// "held" keeps every trace open until a final flush (as with hold_complete,
// or roots still to come), "complete" finalizes each at the end of the
// request that brought its root. spans/s is the buffering's own cost, with
// no analyzer.
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
		name     string
		complete bool
	}{{"held", false}, {"complete", true}} {
		b.Run(c.name, func(b *testing.B) {
			now := time.Now()
			finalized := 0
			for b.Loop() {
				buf := newTraceBuffer(time.Hour, 1<<20, c.complete)
				for _, td := range batches {
					_, complete, _ := buf.add(td, now)
					finalized += len(complete)
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
