package ingest

import "go.opentelemetry.io/collector/pdata/ptrace"

// Sink takes what Read decodes, input by input and batch by batch, in
// input order, from one goroutine at a time (the goroutine that called
// Read). It is the one seam between the readers and whatever consumes spans
// (analyze's index, a test): nothing past it knows which format a span came
// from, as a Collector receiver hands every wire format to a consumer.
type Sink interface {
	// ConsumeTraces takes a batch decoded with pdata. The batch is handed
	// over: the sink may retain td, Read never touches it again. in
	// describes the input so far (Spans already counts td); it must not be
	// retained past the call. An error stops Read, which returns it.
	ConsumeTraces(in *Input, td ptrace.Traces) error
}

// BatchSink is a Sink that also takes compact batches: only the ids, names,
// kinds, times, status codes and the attributes ReadOptions.Keep names.
// Read finds it by type assertion (as pgx finds its optional tracer
// interfaces) and then decodes the formats that have a projection decoder
// (OTLP JSON lines, OTLP protobuf records) straight into a Batch, skipping
// pdata, which spends most of its time building attributes, events and
// scopes no index reads. Records the projection does not handle still
// arrive through ConsumeTraces, so a BatchSink must handle both.
type BatchSink interface {
	Sink
	// ConsumeBatch takes one decoded record. b belongs to Read: it is
	// recycled when ConsumeBatch returns, so the sink must copy what it
	// keeps (its strings may be retained: they are immutable). in is as
	// for ConsumeTraces. An error stops Read, which returns it.
	ConsumeBatch(in *Input, b *Batch) error
}

// SinkFunc adapts a function to a Sink (the pdata path only).
type SinkFunc func(in *Input, td ptrace.Traces) error

// ConsumeTraces calls f.
func (f SinkFunc) ConsumeTraces(in *Input, td ptrace.Traces) error { return f(in, td) }

var _ Sink = SinkFunc(nil)

// KeepAttrs names the attributes a Batch keeps; the projection decoders
// skip every other attribute without building it. The zero value keeps
// none. The empty key is never kept.
type KeepAttrs struct {
	Span     []string // span attribute keys
	Resource []string // resource attribute keys
}

// keepSet is the immutable form of KeepAttrs the decoding workers share.
type keepSet struct {
	span, res keyFilter
}

// keyFilter is a set of attribute keys. Most attributes of a span are not
// kept: a mask of the kept keys' lengths turns most of them away before
// the key is hashed.
type keyFilter struct {
	m    map[string]string // each key to itself: the map hands out the key without allocating it
	lens uint64            // bit min(len(key), 63) set for each kept key
}

func newKeyFilter(keys []string) keyFilter {
	f := keyFilter{m: make(map[string]string, len(keys))}
	for _, k := range keys {
		if k != "" {
			f.m[k] = k
			f.lens |= 1 << min(len(k), 63)
		}
	}
	return f
}

// lookup returns the kept key equal to key. A nil filter keeps nothing.
func (f *keyFilter) lookup(key []byte) (string, bool) {
	if f == nil || f.lens&(1<<min(len(key), 63)) == 0 {
		return "", false
	}
	k, ok := f.m[string(key)]
	return k, ok
}

func newKeepSet(k KeepAttrs) *keepSet {
	return &keepSet{span: newKeyFilter(k.Span), res: newKeyFilter(k.Resource)}
}
