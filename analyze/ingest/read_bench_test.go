package ingest

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// The read benchmarks measure Read end to end (file reading, parallel
// decoding, order kept, a pdata sink called); BenchmarkDecodeOnly
// (decode_bench_test.go) compares the decoders alone with pdata's. Each
// reports spans/s; the dump is generated into a temporary directory
// (MCPTRACE_READ_BENCH_SPANS spans, default 200000).

func readBenchSpans(b *testing.B) int {
	if s := os.Getenv("MCPTRACE_READ_BENCH_SPANS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("MCPTRACE_READ_BENCH_SPANS=%q: want a positive number of spans", s)
		}
		return n
	}
	return 200_000
}

// readBenchDump writes a benchmark dump in encoding and returns its path,
// size and span count.
func readBenchDump(b *testing.B, encoding string) (string, int64, int) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench-read."+encoding)
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, err := tracegen.WriteBench(w, encoding, readBenchSpans(b))
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatalf("generate %s dump: %v", encoding, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	return path, fi.Size(), n
}

func benchRead(b *testing.B, encoding string) { benchReadInto(b, encoding, ReadOptions{}, false) }

// benchReadInto reads a generated dump in encoding with opts, counting
// the spans: into a plain Sink (pdata's decoders), or, when projected,
// into a BatchSink (the projection decoders, as analyze reads), which
// fails the benchmark when no batch came.
func benchReadInto(b *testing.B, encoding string, opts ReadOptions, projected bool) {
	path, size, want := readBenchDump(b, encoding)
	b.SetBytes(size)
	b.ResetTimer()
	spans := 0
	for b.Loop() {
		s := &countingSink{t: b}
		var sink Sink = SinkFunc(s.ConsumeTraces) // not a BatchSink: pdata decodes
		if projected {
			sink = s
		}
		if _, err := Read(context.Background(), []string{path}, opts, sink); err != nil {
			b.Fatal(err)
		}
		if projected && s.batches == 0 {
			b.Fatal("no batch came: the projection decoder was not taken")
		}
		if s.spans != want {
			b.Fatalf("read %d spans, want %d", s.spans, want)
		}
		spans += s.spans
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkReadOTLPJSONLines reads a JSON-lines dump with Read on every CPU.
func BenchmarkReadOTLPJSONLines(b *testing.B) { benchRead(b, "otlp-jsonl") }

// BenchmarkReadOTLPProto reads a length-prefixed protobuf dump with Read.
func BenchmarkReadOTLPProto(b *testing.B) { benchRead(b, "otlp-proto") }

// benchReadProjected reads a dump as analyze's reader does, into a
// BatchSink keeping benchKeep, without the analysis: beside a run of
// `mcptrace analyze` over the same spans it shows what of the command's
// cost is reading and decoding, and what is the analysis.
func benchReadProjected(b *testing.B, encoding string) {
	benchReadInto(b, encoding, ReadOptions{Keep: benchKeep}, true)
}

// BenchmarkReadOTLPJSONLinesProjected reads JSON lines through the
// projection decoder, as analyze does.
func BenchmarkReadOTLPJSONLinesProjected(b *testing.B) { benchReadProjected(b, "otlp-jsonl") }

// BenchmarkReadOTLPProtoProjected reads protobuf records through the
// projection decoder, as analyze does.
func BenchmarkReadOTLPProtoProjected(b *testing.B) { benchReadProjected(b, "otlp-proto") }
