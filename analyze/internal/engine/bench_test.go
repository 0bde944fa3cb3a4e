package engine

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// benchSpans is the size of the benchmark dump: at least a million spans,
// or MCPTRACE_BENCH_SPANS.
func benchSpans(b *testing.B) int {
	if s := os.Getenv("MCPTRACE_BENCH_SPANS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("MCPTRACE_BENCH_SPANS=%q: want a positive number of spans", s)
		}
		return n
	}
	return 1_000_000
}

// writeBenchDump generates the benchmark workload into dir in encoding and
// returns the file and its span count.
func writeBenchDump(b *testing.B, dir, encoding string, spans int) (string, int) {
	b.Helper()
	path := filepath.Join(dir, "bench."+encoding)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := tracegen.WriteBench(w, encoding, spans)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatalf("generate the benchmark dump: %v", err)
	}
	return path, n
}

// BenchmarkAnalyze measures the whole analysis of a generated dump of at
// least a million spans, as `mcptrace analyze` runs it: parallel decoding,
// indexing and every measure. Each iteration also runs, untimed, the
// single-threaded pdata decode-only loop over the same file
// (pdataJSONLinesSpans, pdataProtoSpans), so the two are compared under the
// same machine load. It reports the analysis' spans/s, the decode-only
// loop's decode-spans/s, their ratio x-decode-only, the bytes per span
// the index retains, and procs, the GOMAXPROCS it ran at (a -cpu list
// runs the first figure at another: see ingest's BenchmarkDecodeOnly).
func BenchmarkAnalyze(b *testing.B) {
	n := benchSpans(b)
	for _, bench := range []struct {
		encoding string
		decode   func(path string) (int, error)
	}{{"otlp-jsonl", pdataJSONLinesSpans}, {"otlp-proto", pdataProtoSpans}} {
		b.Run(bench.encoding, func(b *testing.B) {
			path, spans := writeBenchDump(b, b.TempDir(), bench.encoding, n)
			info, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			cfg := rulefmt.Config{}
			var analyzing, decoding time.Duration
			b.SetBytes(info.Size())
			b.ResetTimer()
			for b.Loop() {
				b.StopTimer()
				start := time.Now()
				if got, err := bench.decode(path); err != nil || got != spans {
					b.Fatalf("decode-only loop: %d spans, %v; want %d", got, err, spans)
				}
				decoding += time.Since(start)
				b.StartTimer()

				start = time.Now()
				idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: cfg.IndexOptions()})
				if err != nil {
					b.Fatal(err)
				}
				r, err := Analyze(asDump(idx), cfg)
				if err != nil {
					b.Fatal(err)
				}
				analyzing += time.Since(start)
				if r.Spans != spans {
					b.Fatalf("analyzed %d spans, generated %d", r.Spans, spans)
				}
			}
			b.StopTimer()
			perSec := func(d time.Duration) float64 { return float64(spans) * float64(b.N) / d.Seconds() }
			b.ReportMetric(perSec(analyzing), "spans/s")
			b.ReportMetric(perSec(decoding), "decode-spans/s")
			b.ReportMetric(decoding.Seconds()/analyzing.Seconds(), "x-decode-only")
			b.ReportMetric(retainedBytesPerSpan(b, path), "retained-B/span")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// retainedBytesPerSpan loads path once more and returns the heap the index
// keeps per span once the decoders' garbage is collected.
func retainedBytesPerSpan(b *testing.B, path string) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	spans := idx.Spans()
	// Twice: the readers' pooled scratch (read blocks, batches, per-worker
	// string caches) survives one collection in sync.Pool's victim cache.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(idx)
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(spans)
}
