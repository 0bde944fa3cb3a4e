package index

import (
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// The index is the readers' sink: ingest.Read pushes pdata batches into
// ConsumeTraces and, since the index is an ingest.BatchSink, the compact
// batches of the projection decoders (OTLP JSON lines, OTLP protobuf) into
// ConsumeBatch.

var _ ingest.BatchSink = (*Index)(nil)

// ConsumeTraces indexes td (index.Add); it never fails.
func (x *Index) ConsumeTraces(_ *ingest.Input, td ptrace.Traces) error {
	x.Add(td)
	return nil
}

// ConsumeBatch indexes a projection decoder's batch exactly as Add indexes
// the same spans decoded by pdata. The batch must come from a read whose
// ReadOptions.Keep is the index's keep set (IndexOptions.keep), as Load
// sets it: an attribute the batch left out cannot be indexed. It copies
// what it keeps; it never fails.
func (x *Index) ConsumeBatch(_ *ingest.Input, b *ingest.Batch) error {
	x.addFast(b)
	return nil
}

// KeepOf returns the attributes an index built with o keeps, for
// ingest.ReadOptions.Keep.
func KeepOf(o rulefmt.IndexOptions) ingest.KeepAttrs {
	return ingest.KeepAttrs{
		Span:     append(append([]string{}, vocabSpanAttrs...), o.SpanAttrs...),
		Resource: append(append([]string{}, vocabResourceAttrs...), o.ResourceAttrs...),
	}
}
