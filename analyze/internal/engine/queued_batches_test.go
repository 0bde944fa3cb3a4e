package engine

import (
	"runtime"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestQueuedBatchesHoldWhatTheyCarry pins what the batches queued
// to a shard hold once the reader has let go of them (its share no
// longer charges them): a batch of one span left of a record of 131k
// (the rest had invalid trace ids) is queued right-sized, not with the
// 10 MiB its slices grew to, so a shard that falls behind holds at most
// twice what its queue carries (ingest.RightSized), not forty MiB
// of spans it never sees. The shard is held handing its vocabulary evidence
// while four such batches are queued to it.
func TestQueuedBatchesHoldWhatTheyCarry(t *testing.T) {
	e, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	held := make(chan *vocab.Detection)
	e.send(shardMsg{detect: held})
	sink := &feedSink{eng: e}
	in := &ingest.Input{Path: "sparse.otlp.jsonl"}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const queued, grown = shardQueue, 1 << 17
	for i := range queued {
		b := &ingest.Batch{Resources: make([]ingest.Resource, 1), Spans: make([]ingest.Span, 1, grown)}
		b.Spans[0] = ingest.Span{TraceID: pcommon.TraceID{15: byte(i + 1)}, SpanID: pcommon.SpanID{7: 1}, Name: "plugin.mcp.invoke", Start: 1, End: 2}
		if err := sink.ConsumeBatch(in, b); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	<-held
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("%d batches of one span queued to a shard hold %d KiB: their decoded capacity, not what they carry", queued, grew>>10)
	}
}
