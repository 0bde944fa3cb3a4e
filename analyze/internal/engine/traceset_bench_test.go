package engine

import (
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// BenchmarkFinalizedMemory measures a speculative shard's memory of the
// traces it finalized as the engine uses it: for each trace, has when it
// opens and add when it is finalized, then repeats at the end. "set" is
// the whole in-memory traceSet it replaced (the baseline, in the same
// run), "log" the flat traceLog that spills; a batch run of 16M spans
// finalizes about 1.6M traces. "log-open" asks about each trace openLag
// traces before adding it, one at a time, as a run does, whose traces
// stay open a while: the slot the question read is then no longer in the
// cache when the add comes. "log-batched" does the same a part at a time
// (hasEach, addEach of partTraces), as the shard does. The "stream-" cases read on through
// 32 MiB between parts (streamPerTrace bytes a trace, about what a run
// reads and writes meanwhile), which evicts the log from the caches as
// a run does: "stream-open" one trace at a time, "stream-batched" a part
// at a time; their difference is what asking together saves.
func BenchmarkFinalizedMemory(b *testing.B) {
	for _, n := range []int{100_000, 1_600_000} {
		ids := make([]pcommon.TraceID, n)
		for i := range ids {
			binary.BigEndian.PutUint64(ids[i][8:], uint64(i+1)*0x9e3779b97f4a7c15)
		}
		b.Run(fmt.Sprintf("set/%d", n), func(b *testing.B) {
			benchFinalized(b, ids, func() finalizedRecord { return &traceSet{} })
		})
		b.Run(fmt.Sprintf("log/%d", n), func(b *testing.B) {
			benchFinalized(b, ids, func() finalizedRecord { return &traceLog{} })
		})
		b.Run(fmt.Sprintf("log-open/%d", n), func(b *testing.B) {
			benchFinalizedBatched(b, ids, openLag, 1, nil)
		})
		b.Run(fmt.Sprintf("log-batched/%d", n), func(b *testing.B) {
			benchFinalizedBatched(b, ids, openLag, partTraces, nil)
		})
		b.Run(fmt.Sprintf("stream-open/%d", n), func(b *testing.B) {
			benchFinalizedBatched(b, ids, openLag, 1, newStream())
		})
		b.Run(fmt.Sprintf("stream-batched/%d", n), func(b *testing.B) {
			benchFinalizedBatched(b, ids, openLag, partTraces, newStream())
		})
	}
}

// finalizedRecord is what the engine asks of its memory of finalized
// traces, for BenchmarkFinalizedMemory.
type finalizedRecord interface {
	has(pcommon.TraceID) bool
	add(pcommon.TraceID)
}

// benchFinalized opens and finalizes every id in a fresh memory per round;
// a traceLog then reads its runs back (repeats) and drops its file.
func benchFinalized(b *testing.B, ids []pcommon.TraceID, fresh func() finalizedRecord) {
	for b.Loop() {
		m := fresh()
		for _, id := range ids {
			if m.has(id) {
				b.Fatal("a new trace read as finalized")
			}
			m.add(id)
		}
		if l, ok := m.(*traceLog); ok {
			if l.repeats() {
				b.Fatal("distinct traces read as finalized twice")
			}
			l.close()
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/trace")
}

// openLag is how many traces BenchmarkFinalizedMemory's "-open" and
// "-batched" cases keep open between asking and adding: about what a
// 4M-span run holds open.
const openLag = 4096

// partTraces is how many new traces benchFinalizedBatched asks about at
// once: about what one part of a 1024-span line opens.
const partTraces = 150

// benchFinalizedBatched asks a traceLog about each trace (opens it) lag
// traces before it adds it (finalizes it), part traces at a time, as a
// shard does (openTraces, rememberDead; part 1: one at a time), reading
// on through st between parts when st is not nil.
func benchFinalizedBatched(b *testing.B, ids []pcommon.TraceID, lag, part int, st *stream) {
	prints := make([]uint64, len(ids))
	for i, id := range ids {
		prints[i] = fingerprint(id)
	}
	in := make([]bool, part)
	for b.Loop() {
		var l traceLog
		for i := 0; i < len(ids)+lag; i += part {
			if i < len(ids) {
				ask := prints[i:min(i+part, len(ids))]
				l.hasEach(ask, in)
				if slices.Contains(in[:len(ask)], true) {
					b.Fatal("a new trace read as finalized")
				}
			}
			if j := i - lag; j+part > 0 {
				l.addEach(prints[max(j, 0):min(j+part, len(ids))])
			}
			st.read(part * streamPerTrace)
		}
		if l.repeats() {
			b.Fatal("distinct traces read as finalized twice")
		}
		l.close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/trace")
}

// streamPerTrace is how many bytes a stream case reads a trace: a trace
// of the bench workload is about 7 spans of 440 bytes of JSON.
const streamPerTrace = 3 << 10

// stream is memory a benchmark reads on through, a cache line at a time.
type stream struct {
	buf []byte
	at  int
	sum byte
}

// newStream makes a stream of 32 MiB, more than this machine's caches.
func newStream() *stream {
	st := &stream{buf: make([]byte, 32<<20)}
	for i := range st.buf {
		st.buf[i] = byte(i)
	}
	return st
}

// read reads on through n bytes of st (nothing for a nil st).
func (st *stream) read(n int) {
	if st == nil {
		return
	}
	for ; n > 0; n -= 64 {
		st.sum += st.buf[st.at]
		if st.at += 64; st.at >= len(st.buf) {
			st.at = 0
		}
	}
}
