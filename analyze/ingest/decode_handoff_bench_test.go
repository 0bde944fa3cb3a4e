package ingest

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkDecodeWithBatchesReadElsewhere measures what a batch read on
// another goroutine costs its decoder. In `mcptrace analyze` a worker
// decodes a record into a batch, a shard on the other core reads every
// span and attribute of it (the index's copy), and the batch is recycled
// to be decoded into again; on a 2-core machine a run's decode phase cost
// 1.5x (JSON) to 2.2x (protobuf) what BenchmarkDecodeOnly measures, where
// the decoding goroutine reads and recycles its own batches.
//
// Each sub-benchmark decodes the protobuf benchmark dump on one goroutine
// and reports the decoder's own time per span (decode-ns/span), the
// figure to compare; ns/op is the whole pass. "read-here" reads each
// batch on the decoding goroutine; "read-elsewhere" hands it to another
// goroutine that reads it and recycles it; "recycled-elsewhere" hands it
// on unread, so that only the reading differs between the last two. Run
// it with -cpu 2: with one P the goroutines share a core and nothing
// crosses.
func BenchmarkDecodeWithBatchesReadElsewhere(b *testing.B) {
	keep := newKeepSet(benchKeep)
	data, want := benchRecords(b, "otlp-proto")
	recs := splitRecords(b, data)
	for _, c := range []struct {
		name        string
		handOn, use bool
	}{
		{"read-here", false, true},
		{"read-elsewhere", true, true},
		{"recycled-elsewhere", true, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			var decoding time.Duration
			for b.Loop() {
				decoding += decodeHandingOn(b, recs, keep, want, c.handOn, c.use)
			}
			b.ReportMetric(float64(decoding.Nanoseconds())/float64(b.N*want), "decode-ns/span")
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// decodeHandingOn decodes recs once, each batch read (use) and recycled
// on this goroutine or, with handOn, on another one, and returns the time
// spent in the decoder.
func decodeHandingOn(b *testing.B, recs [][]byte, keep *keepSet, want int, handOn, use bool) time.Duration {
	batches := make(chan *Batch, 8)
	spans := make(chan int)
	consume := func(bt *Batch) int {
		if use {
			readBatch(bt)
		}
		n := len(bt.Spans)
		putBatch(bt)
		return n
	}
	go func() {
		n := 0
		for bt := range batches {
			n += consume(bt)
		}
		spans <- n
	}()
	var decoding time.Duration
	n := 0
	for _, r := range recs {
		start := time.Now()
		bt, ok := decodeFastProto(r, keep)
		decoding += time.Since(start)
		if !ok {
			b.Fatal("a benchmark record did not decode on the projection path")
		}
		if handOn {
			batches <- bt
		} else {
			n += consume(bt)
		}
	}
	close(batches)
	if n += <-spans; n != want {
		b.Fatalf("decoded %d spans, want %d", n, want)
	}
	return decoding
}

// readBatch reads every span's and attribute's fields, as the index's
// copy of a batch does.
func readBatch(bt *Batch) {
	var sum uint64
	for i := range bt.Spans {
		s := &bt.Spans[i]
		sum += s.Start ^ s.End ^ uint64(s.TraceID[15]) ^ uint64(s.SpanID[7]) ^ uint64(len(s.Name)) ^ uint64(s.Kind)
		for _, a := range bt.SpanAttrs(s) {
			sum += uint64(len(a.Key)) ^ uint64(len(a.Str)) ^ uint64(a.Int)
		}
	}
	benchSink = sum
}

// benchSink keeps readBatch's reads from being optimised away.
var benchSink uint64
