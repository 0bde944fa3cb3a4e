package analyze

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// The decode benchmarks compare Read (parallel decoding, order kept, sink
// called) with the floor it is measured against: one goroutine that only
// reads the same file and unmarshals each record with pdata, counting spans.
// Their ratio is the reader's parallel speed-up net of its overhead. Each
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

func benchRead(b *testing.B, encoding string) {
	path, size, want := readBenchDump(b, encoding)
	b.SetBytes(size)
	b.ResetTimer()
	spans := 0
	for b.Loop() {
		n := 0
		_, err := Read(context.Background(), []string{path}, ReadOptions{}, func(_ *Input, td ptrace.Traces) error {
			n += td.SpanCount()
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("read %d spans, want %d", n, want)
		}
		spans += n
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkReadOTLPJSONLines reads a JSON-lines dump with Read on every CPU.
func BenchmarkReadOTLPJSONLines(b *testing.B) { benchRead(b, "otlp-jsonl") }

// BenchmarkReadOTLPProto reads a length-prefixed protobuf dump with Read.
func BenchmarkReadOTLPProto(b *testing.B) { benchRead(b, "otlp-proto") }

// BenchmarkPdataDecodeOnly is the single-threaded floor for JSON lines: read
// each line and unmarshal it with pdata, nothing else.
func BenchmarkPdataDecodeOnly(b *testing.B) {
	path, size, want := readBenchDump(b, "otlp-jsonl")
	b.SetBytes(size)
	b.ResetTimer()
	spans := 0
	for b.Loop() {
		n, err := pdataJSONLinesSpans(path)
		if err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("decoded %d spans, want %d", n, want)
		}
		spans += n
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

// BenchmarkPdataProtoDecodeOnly is the single-threaded floor for
// length-prefixed protobuf.
func BenchmarkPdataProtoDecodeOnly(b *testing.B) {
	path, size, want := readBenchDump(b, "otlp-proto")
	b.SetBytes(size)
	b.ResetTimer()
	spans := 0
	for b.Loop() {
		n, err := pdataProtoSpans(path)
		if err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("decoded %d spans, want %d", n, want)
		}
		spans += n
	}
	b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
}

func pdataJSONLinesSpans(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4<<20), 1<<30)
	var u ptrace.JSONUnmarshaler
	n := 0
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return n, err
		}
		n += td.SpanCount()
	}
	return n, sc.Err()
}

func pdataProtoSpans(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var u ptrace.ProtoUnmarshaler
	var hdr [4]byte
	n := 0
	for {
		if _, err := io.ReadFull(r, hdr[:]); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		buf := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, buf); err != nil {
			return n, err
		}
		td, err := u.UnmarshalTraces(buf)
		if err != nil {
			return n, err
		}
		n += td.SpanCount()
	}
}
