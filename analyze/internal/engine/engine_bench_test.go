package engine

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// BenchmarkEngineStreamMemory feeds a generated time-ordered stream
// (tracegen.BenchBatches, MCPTRACE_STREAM_SPANS spans, default 2 million)
// straight from the generator into a streaming engine (a 30 s window,
// 20 000 open traces at most) and reports what it retains, not how fast
// it goes: the live heap sampled after a GC at every tenth of the stream
// (max and last, MiB), its growth over the last four fifths (MiB: about 0
// when retained state does not grow with the stream), the heap per span
// streamed, and the engine's own estimate of its open state at the end.
// The figures, not a timed assertion, are the result.
//
//	MCPTRACE_STREAM_SPANS=20000000 go test ./analyze/internal/engine -run '^$' -bench EngineStreamMemory -benchtime 1x
func BenchmarkEngineStreamMemory(b *testing.B) {
	total := 2_000_000
	if s := os.Getenv("MCPTRACE_STREAM_SPANS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("MCPTRACE_STREAM_SPANS=%q: want a positive span count", s)
		}
		total = n
	}
	heap := func() float64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return float64(m.HeapAlloc) / (1 << 20)
	}
	for range b.N {
		base := heap()
		e, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: runtime.GOMAXPROCS(0), Window: 30 * time.Second, MaxOpenTraces: 20_000})
		if err != nil {
			b.Fatal(err)
		}
		fed, next := 0, total/10
		var maxHeap, atFifth, last float64
		if _, err := tracegen.BenchBatches(total, func(td ptrace.Traces) error {
			fed += td.SpanCount()
			if err := e.Add(td); err != nil {
				return err
			}
			if fed >= next {
				next += total / 10
				last = heap() - base
				maxHeap = max(maxHeap, last)
				if atFifth == 0 && fed >= total/5 {
					atFifth = last
				}
			}
			return nil
		}); err != nil {
			e.Close()
			b.Fatal(err)
		}
		open := float64(e.MemBytes()) / (1 << 20)
		r, err := e.Report()
		if err != nil {
			b.Fatal(err)
		}
		if r.Spans != fed || r.Stream.LateSpans != 0 {
			b.Fatalf("analyzed %d spans of %d (late %d): the stream lost some", r.Spans, fed, r.Stream.LateSpans)
		}
		b.ReportMetric(maxHeap, "max-heap-MiB")
		b.ReportMetric(last, "end-heap-MiB")
		b.ReportMetric(last-atFifth, "growth-MiB")
		b.ReportMetric(last*(1<<20)/float64(fed), "heap-B/span")
		b.ReportMetric(open, "open-state-MiB")
		b.ReportMetric(float64(fed), "spans")
	}
}
