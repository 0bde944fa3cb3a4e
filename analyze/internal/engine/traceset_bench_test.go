package engine

import (
	"encoding/binary"
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// BenchmarkFinalizedMemory measures a speculative shard's memory of the
// traces it finalized as the engine uses it: for each trace, has when it
// opens and add when it is finalized, then repeats at the end. "set" is
// the whole in-memory traceSet it replaced (the baseline, in the same
// run), "log" the flat traceLog that spills; a batch run of 16M spans
// finalizes about 1.6M traces. "log-open" asks has for each trace
// openLag traces before adding it, as a run does, whose traces stay open
// a while: the slot has read is then no longer in the cache when add
// comes.
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
			benchFinalizedOpen(b, ids, openLag)
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

// openLag is how many traces BenchmarkFinalizedMemory's "log-open" keeps
// open between has and add: about what a 4M-span run holds open.
const openLag = 4096

// benchFinalizedOpen is benchFinalized for a traceLog whose traces stay
// open: trace i is asked about (opened) lag traces before it is added.
func benchFinalizedOpen(b *testing.B, ids []pcommon.TraceID, lag int) {
	for b.Loop() {
		var l traceLog
		for i := range len(ids) + lag {
			if i < len(ids) && l.has(ids[i]) {
				b.Fatal("a new trace read as finalized")
			}
			if j := i - lag; j >= 0 {
				l.add(ids[j])
			}
		}
		if l.repeats() {
			b.Fatal("distinct traces read as finalized twice")
		}
		l.close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ids)), "ns/trace")
}
