package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// traceOnShard returns the first trace number from `from` on that lands
// on shard of shards (index.ShardOf).
func traceOnShard(t *testing.T, shard, shards int, from uint64) uint64 {
	t.Helper()
	for n := from; n < from+10_000; n++ {
		if index.ShardOf(dumptest.TraceID(n), shards) == shard {
			return n
		}
	}
	t.Fatalf("no trace from %d lands on shard %d of %d", from, shard, shards)
	return 0
}

// TestAStreamDecidesEachResourceInTheOrderOfTheBatchesAndShards pins
// that a stream's sticky vocabulary of a resource is the one of the first
// finalization, in the order of the batches and of the shards within a
// batch, to show one, whichever shard's observer gets there first. One
// batch holds a resource's two traces: on shard 0 a conventions' call
// with 30,000 child spans, which shard 0 takes long to index, group and
// detect; on shard 1 an OpenLLMetry session span alone, ready at once.
// Decided as the observers came, the resource was OpenLLMetry's on most
// runs; in order it is the conventions', on every run.
func TestAStreamDecidesEachResourceInTheOrderOfTheBatchesAndShards(t *testing.T) {
	const shards = 2
	slow, quick := traceOnShard(t, 0, shards, 1), traceOnShard(t, 1, shards, 1)
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	root := d.add(ss, sp{trace: slow, name: "tools/call search", kind: ptrace.SpanKindClient, end: time.Second,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}})
	for k := range 30_000 {
		d.add(ss, sp{trace: slow, parent: root, name: "SELECT", kind: ptrace.SpanKindClient,
			start: time.Duration(k) * time.Microsecond, end: time.Duration(k+1) * time.Microsecond})
	}
	d.add(ss, sp{trace: quick, name: rulefmt.OpenLLMetrySessionSpan, kind: ptrace.SpanKindClient, end: time.Second})

	cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
	for run := range 5 {
		r := engineReport(t, cfg, EngineOptions{Shards: shards, Window: time.Nanosecond}, []ptrace.Traces{d.td})
		if r.Settings.Vocabulary != report.VocabSemconv {
			t.Fatalf("run %d: the stream read svc as %q, want %q: shard 0's finalization of the batch comes first",
				run, r.Settings.Vocabulary, report.VocabSemconv)
		}
	}
}
