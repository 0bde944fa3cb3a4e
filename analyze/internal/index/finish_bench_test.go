package index

import (
	"math/rand/v2"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// BenchmarkFinish measures grouping, copy removal and parent linking alone,
// on traces shaped like a pooled workload's: a root, and children that
// each have one of the earlier spans as parent, with random span ids and
// one copy in fifty. Compare it with the same benchmark on the base
// commit, in the same run of the machine.
func BenchmarkFinish(b *testing.B) {
	const traces, perTrace = 20000, 10
	rng := rand.New(rand.NewPCG(1, 2))
	d := dumptest.New()
	ss := d.Resource()
	for t := range traces {
		ids := make([]uint64, perTrace)
		for k := range ids {
			ids[k] = rng.Uint64() | 1
			sp := dumptest.Span{Trace: uint64(t + 1), ID: ids[k], Name: "s"}
			if k > 0 {
				sp.Parent = ids[rng.IntN(k)]
			}
			d.Add(ss, sp)
			if rng.IntN(50) == 0 {
				d.Add(ss, sp)
			}
		}
	}
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	x.Finish()
	x.reused = true // as a shard's index: Finish keeps its memory
	b.ResetTimer()
	for b.Loop() {
		x.dirty = true
		x.Finish()
	}
	b.ReportMetric(float64(x.NumSpans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
}
