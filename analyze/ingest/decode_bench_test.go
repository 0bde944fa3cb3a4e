package ingest

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// BenchmarkDecodeOnly compares the projection decoders with pdata's
// unmarshalers, decode only, on the same records held in memory: the lines
// of a generated OTLP JSON lines dump and the records of the same workload
// as length-prefixed protobuf (MCPTRACE_READ_BENCH_SPANS spans, default
// 200000). Each side decodes every record once per iteration on GOMAXPROCS
// goroutines taking records from a shared counter, so `-cpu 1` is one
// goroutine against one and `-cpu 2` two against two: the only difference
// between the sides is the decode function. scripts/bench-ingest.sh runs
// it in interleaved rounds and prints the ratios.
//
// Each figure reports the GOMAXPROCS it ran at (the procs metric): given
// a list (`-cpu 1,2`), the testing package runs a sub-benchmark's first
// figure at the GOMAXPROCS the previous one left, whatever its name says,
// so a figure named for one core may have run on two. Run one `-cpu`
// value per process; the script refuses a figure whose procs differ from
// its name.
//
// ours keeps what analyze's index keeps with no configuration (benchKeep)
// and recycles each batch as Read does once its sink returns; pdata builds
// the whole ptrace.Traces.
func BenchmarkDecodeOnly(b *testing.B) {
	keep := newKeepSet(benchKeep)
	for _, enc := range []struct {
		name, encoding string
		split          func(testing.TB, []byte) [][]byte
		ours, pdata    func([]byte) (int, bool)
	}{
		{name: "jsonl", encoding: "otlp-jsonl", split: splitLines, ours: projected(decodeFastOTLP, keep), pdata: unmarshaled(&ptrace.JSONUnmarshaler{})},
		{name: "proto", encoding: "otlp-proto", split: splitRecords, ours: projected(decodeFastProto, keep), pdata: unmarshaled(&ptrace.ProtoUnmarshaler{})},
	} {
		data, want := benchRecords(b, enc.encoding)
		size := int64(len(data))
		recs := enc.split(b, data)
		for _, side := range []struct {
			name   string
			decode func([]byte) (int, bool)
		}{{"ours", enc.ours}, {"pdata", enc.pdata}} {
			b.Run(enc.name+"/"+side.name, func(b *testing.B) {
				b.SetBytes(size)
				spans := 0
				for b.Loop() {
					n := decodeAll(b, recs, side.decode)
					if n != want {
						b.Fatalf("decoded %d spans, want %d", n, want)
					}
					spans += n
				}
				b.ReportMetric(float64(spans)/b.Elapsed().Seconds(), "spans/s")
				b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
			})
		}
	}
}

// benchDumps holds the generated dumps of this process by encoding: the
// benchmark function runs again for each -cpu value, and generating 200k
// spans costs more than decoding them.
var benchDumps sync.Map // encoding -> *benchDump

type benchDump struct {
	once  sync.Once
	data  []byte
	spans int
	err   error
}

// benchRecords returns the benchmark dump in encoding and its span count.
func benchRecords(b *testing.B, encoding string) ([]byte, int) {
	v, _ := benchDumps.LoadOrStore(encoding, new(benchDump))
	d := v.(*benchDump)
	d.once.Do(func() {
		var buf bytes.Buffer
		d.spans, d.err = tracegen.WriteBench(&buf, encoding, readBenchSpans(b))
		d.data = buf.Bytes()
	})
	if d.err != nil {
		b.Fatalf("generate the %s dump: %v", encoding, d.err)
	}
	return d.data, d.spans
}

// benchKeep is what analyze's index keeps when `mcptrace analyze` runs
// with no configuration (index.KeepOf of the auto profile's options, which
// this package cannot import): the pool vocabulary's attributes and the
// service's (index.vocabSpanAttrs and vocabResourceAttrs), then every key
// a built-in vocabulary, the protocol revision and the recorded pool
// settings need. Keeping fewer would time a decoder that does less than
// the analyzer's.
var benchKeep = func() KeepAttrs {
	o := rulefmt.Config{Profile: rulefmt.ProfileAuto}.IndexOptions()
	return KeepAttrs{
		Span: append([]string{spans.AttrCacheHit, spans.AttrCacheKey, spans.AttrAttempt, spans.AttrMissReason, spans.AttrPoolID,
			spans.AttrSessionID, spans.AttrMethodName, spans.AttrErrorType, spans.AttrServerAddress, spans.AttrServerPort}, o.SpanAttrs...),
		Resource: append([]string{spans.ResourceServiceInstanceID, spans.ResourceServiceName}, o.ResourceAttrs...),
	}
}()

// decodeAll decodes every record on GOMAXPROCS goroutines and returns the
// spans decoded.
func decodeAll(b *testing.B, recs [][]byte, decode func([]byte) (int, bool)) int {
	const chunk = 1 // a record holds hundreds of spans: one at a time keeps the workers even
	var next, total atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for {
				i := int(next.Add(chunk)) - chunk
				if i >= len(recs) {
					break
				}
				for _, r := range recs[i:min(i+chunk, len(recs))] {
					k, ok := decode(r)
					if !ok {
						failed.Store(true)
					}
					n += k
				}
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	if failed.Load() {
		b.Fatal("a benchmark record did not decode on this path")
	}
	return int(total.Load())
}

// splitLines returns the non-blank lines of data.
func splitLines(_ testing.TB, data []byte) [][]byte {
	var out [][]byte
	for l := range bytes.Lines(data) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// splitRecords returns the length-prefixed records of data, prefixes
// removed.
func splitRecords(t testing.TB, data []byte) [][]byte {
	var out [][]byte
	for len(data) >= 4 {
		n := int(binary.BigEndian.Uint32(data))
		if 4+n > len(data) {
			t.Fatalf("a record of %d bytes with %d left", n, len(data)-4)
		}
		out = append(out, data[4:4+n])
		data = data[4+n:]
	}
	return out
}

// projected counts the spans of one record decoded by a projection decoder,
// the batch recycled as Read recycles it.
func projected(decode func([]byte, *keepSet) (*Batch, bool), keep *keepSet) func([]byte) (int, bool) {
	return func(rec []byte) (int, bool) {
		bt, ok := decode(rec, keep)
		if !ok {
			return 0, false
		}
		n := len(bt.Spans)
		putBatch(bt)
		return n, true
	}
}

// unmarshaled counts the spans of one record decoded by pdata.
func unmarshaled(u ptrace.Unmarshaler) func([]byte) (int, bool) {
	return func(rec []byte) (int, bool) {
		td, err := u.UnmarshalTraces(rec)
		return td.SpanCount(), err == nil
	}
}
