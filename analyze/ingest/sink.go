package ingest

import (
	"sync/atomic"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

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
	// keeps (its strings may be retained: they are immutable), unless it
	// takes the batch over with b.Keep (and hands it back with Release).
	// in is as for ConsumeTraces. An error stops Read, which returns it.
	ConsumeBatch(in *Input, b *Batch) error
}

// HoldingSink is a Sink that reads the traces ConsumeTraces would hand it
// after the call returns (an engine queues them to its shards). Read
// finds it by type assertion and hands it each pdata batch charged to the
// memory budget's share in flight with the charge, h: what td holds stays
// on the budget until every reader the sink handed it to is done, so the
// decoders wait for room while the sink is behind rather than the read
// outgrowing the budget. A batch charged nothing still arrives through
// ConsumeTraces.
type HoldingSink interface {
	Sink
	// ConsumeHeldTraces is ConsumeTraces with td's charge: the sink calls
	// h.Keep once per reader it hands td to, before it does, and each
	// reader calls h.Release once done with td. in and the error are as
	// for ConsumeTraces.
	ConsumeHeldTraces(in *Input, td ptrace.Traces, h *Hold) error
}

// Hold is the memory budget's charge for one pdata batch a HoldingSink
// reads after ConsumeHeldTraces returns: counted references, the last of
// which gives the charge back.
type Hold struct {
	refs  readers
	share *inflight
	n     int64
}

// Keep takes a reference for one more reader of the held traces. Call it
// only inside ConsumeHeldTraces, once per Release.
func (h *Hold) Keep() { h.refs.keep() }

// Release lets go of a reference Keep took; the last one gives the
// traces' charge back to the budget.
func (h *Hold) Release() {
	if h.refs.release() {
		h.share.give(h.n)
	}
}

// Outstanding is how many references to the held traces are yet to be
// released: 0 once the last reader let go and the charge is back with
// the budget. A sink's tests ask it: a reference never released keeps
// the charge on the budget's share in flight for the rest of the read,
// where it slows the decoders to one record at a time and no error
// shows it.
func (h *Hold) Outstanding() int32 { return h.refs.outstanding() }

// readers counts who still reads what Read handed a sink, a Batch or a
// Hold's traces: Read's own reference while the sink's consume call
// runs (start), plus one per Keep the sink takes. Whoever lets go of the
// last one (release reports it) gives back what was read: the batch to
// its pool, the traces' charge to the budget.
type readers struct{ n atomic.Int32 }

// start takes Read's own reference, before the sink is called.
func (r *readers) start() { r.n.Store(1) }

// keep takes a reference for one more reader.
func (r *readers) keep() { r.n.Add(1) }

// release lets go of one reference and reports whether it was the last.
func (r *readers) release() bool { return r.n.Add(-1) == 0 }

// outstanding is how many references are yet to be released.
func (r *readers) outstanding() int32 { return r.n.Load() }

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
	// room is the most attributes a span and its resource may add to a
	// batch: a key is kept once per span or resource (Batch.newAttr).
	// A batch keeps that many free (Batch.newSpan), so it never grows
	// while a span's attributes are read.
	room int
}

// keyFilter is a set of attribute keys. Every attribute of every span is
// looked up and most are not kept: comparing the key with the few kept
// keys of its length costs a fraction of hashing it.
type keyFilter struct {
	// byLen holds the kept keys shorter than maxFilterLen, by length,
	// each as a pattern (its text in s): lookup compares a key of up to
	// maxPattern bytes with the patterns in line, where comparing texts
	// called the runtime's comparison for each kept key of a length
	// (plugin.mcp.cache_key and plugin.mcp.cache_hit), for every
	// attribute a protobuf record holds. Longer keys are compared by
	// text.
	byLen [maxFilterLen][]pattern
	long  map[string]string // the others, each to itself
	n     int               // the keys it holds
}

// maxFilterLen bounds the keys keyFilter lists by length.
const maxFilterLen = 64

func newKeyFilter(keys []string) keyFilter {
	var f keyFilter
	for _, k := range keys {
		switch {
		case k == "" || f.has(k):
		case len(k) < maxFilterLen:
			f.byLen[len(k)] = append(f.byLen[len(k)], newPattern(k))
			f.n++
		default:
			if f.long == nil {
				f.long = map[string]string{}
			}
			f.long[k] = k
			f.n++
		}
	}
	return f
}

func (f *keyFilter) has(k string) bool {
	_, ok := f.lookup([]byte(k))
	return ok
}

// lookup returns the kept key equal to key. A nil filter keeps nothing.
func (f *keyFilter) lookup(key []byte) (string, bool) {
	if f == nil {
		return "", false
	}
	if len(key) <= maxPattern && cap(key) >= maxPattern {
		// The bytes past the key, up to its capacity, are read and masked
		// off: the patterns of its length compare its bytes only.
		w := key[:maxPattern]
		pats := f.byLen[len(key)]
		for i := range pats {
			if pats[i].words(w) {
				return pats[i].s, true
			}
		}
		return "", false
	}
	if len(key) < maxFilterLen {
		pats := f.byLen[len(key)]
		for i := range pats {
			if pats[i].s == string(key) {
				return pats[i].s, true
			}
		}
		return "", false
	}
	k, ok := f.long[string(key)]
	return k, ok
}

// sameKept reports whether a and b, keys one keyFilter's lookup returned,
// are the same key. The filter holds each key once and returns that
// string, so equal keys share their bytes: comparing where they stand
// spares comparing the texts of different keys of one length
// (plugin.mcp.cache_key and plugin.mcp.cache_hit), which was most of what
// a span's search for a repeated key cost. The lengths are compared too,
// so that keys sharing a start of their bytes stay apart.
func sameKept(a, b string) bool {
	return len(a) == len(b) && unsafe.StringData(a) == unsafe.StringData(b)
}

// keys returns the kept keys, for tests.
func (f *keyFilter) keys() map[string]string {
	m := map[string]string{}
	for _, pats := range f.byLen {
		for _, p := range pats {
			m[p.s] = p.s
		}
	}
	for k := range f.long {
		m[k] = k
	}
	return m
}

func newKeepSet(k KeepAttrs) *keepSet {
	s := &keepSet{span: newKeyFilter(k.Span), res: newKeyFilter(k.Resource)}
	s.room = s.span.n + s.res.n
	return s
}
