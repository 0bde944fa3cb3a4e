package ingest

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Batch is the compact projection of one decoded record (a JSON line, a
// protobuf record): what an index of spans reads and nothing more. Its
// strings are owned (never slices of the input, whose buffers are
// recycled) and often shared between spans (one string per distinct name
// or value per decoding worker). A Batch is handed to
// [BatchSink.ConsumeBatch] and recycled when that returns.
type Batch struct {
	// Resources in input order, empty ones and ones without spans
	// included (an index interns them as it interns pdata's).
	Resources []Resource
	// Spans in input order.
	Spans []Span
	// Attrs holds the kept attributes of resources and spans; each names
	// its own by range. Within one range a key appears once: the first of
	// a repeated key, as an index keeps it.
	Attrs []Attr

	// refs counts who still reads the batch: Read while ConsumeBatch runs,
	// plus one per Keep not yet released. The last to let go recycles it.
	refs readers

	// While a decoder fills the batch (batch_budget.go): the job's charge
	// its slices are charged to (nil: none), what they hold charged, the
	// attributes kept free for a span's or resource's (startCharge), and
	// why a growth was refused.
	charge  *jobCharge
	charged int64
	room    int
	err     error
	// Once filled, until the sink keeps it: the job's charge that holds
	// b's charged bytes (from). The first Keep moves them to the share
	// itself (held), which the last Release gives them back to: a batch
	// the sink reads later (an engine's shards, up to a queue's length
	// behind) stays on the budget, and the decoders wait for room
	// meanwhile rather than the read outgrowing it.
	from *jobCharge
	held *inflight
}

// Keep takes a reference to b for the sink that is consuming it: Read
// does not recycle it when ConsumeBatch returns, so the sink may read it
// later, from other goroutines (an engine's shards), and lets go with
// Release once done. What b holds stays charged to the memory budget's
// share in flight until then, so the decoders wait for room while a sink
// holds batches it has not read yet. Call it only inside ConsumeBatch,
// from the goroutine that called it, once per Release.
func (b *Batch) Keep() {
	if c := b.from; c != nil {
		b.from, b.held = nil, c.share
		b.charged = c.handOver(b.charged)
	}
	b.refs.keep()
}

// Release lets go of a reference Keep took; the last one recycles the
// batch, and nobody may use it afterwards.
func Release(b *Batch) {
	if b.refs.release() {
		putBatch(b)
	}
}

// Resource is one resource of a Batch: its kept attributes are
// Attrs[Attrs : Attrs+N] of the batch.
type Resource struct {
	Attrs, N int32
}

// Span is one span as an index reads it. Kind and Status are the OTLP
// enum numbers (as uint8 of pdata's SpanKind and StatusCode).
type Span struct {
	TraceID              pcommon.TraceID
	SpanID, ParentSpanID pcommon.SpanID
	Name                 string
	Start, End           uint64 // Unix nanoseconds
	Resource             int32  // index into Batch.Resources
	Attrs, N             int32  // range in Batch.Attrs
	Kind                 uint8
	Status               uint8
}

// newSpan appends an empty span of resource res to the batch and returns
// it, or nil when the batch could not grow for it within the budget
// (makeRoom: b.err says why). Nothing appends to the spans while a span
// is read, so it stays valid. The decoders write a span's and an
// attribute's fields in place: a record built aside and copied in is read
// back with wide loads just after the narrow stores of its fields, which
// the CPU cannot forward, and the copy waits for them.
func (b *Batch) newSpan(res int32) *Span {
	if len(b.Spans) == cap(b.Spans) || cap(b.Attrs)-len(b.Attrs) < b.room {
		if !b.makeRoom(1, 0) {
			return nil
		}
	}
	b.Spans = append(b.Spans, Span{})
	sp := &b.Spans[len(b.Spans)-1]
	sp.Resource = res
	return sp
}

// newResource appends r to the batch's resources, and reports false when
// the batch could not grow for it within the budget, as newSpan does.
func (b *Batch) newResource(r Resource) bool {
	if len(b.Resources) == cap(b.Resources) || cap(b.Attrs)-len(b.Attrs) < b.room {
		if !b.makeRoom(0, 1) {
			return false
		}
	}
	b.Resources = append(b.Resources, r)
	return true
}

// newAttr appends an attribute of key k to the range of b.Attrs that
// starts at start (the span's or resource's being decoded) and returns
// it, its key set, for the decoder to fill in place (see newSpan); nil
// when the range holds k already: the first of a repeated key is kept,
// as an index keeps it (Batch.Attrs). Both projection decoders add
// their attributes through it.
func (b *Batch) newAttr(start int32, k string) *Attr {
	for i := range b.Attrs[start:] {
		if sameKept(b.Attrs[int(start)+i].Key, k) {
			return nil
		}
	}
	a := b.appendAttr()
	a.Key = k
	return a
}

// appendAttr appends an empty attribute for the decoder to fill in place:
// building the Attr in a local first and copying it in made the copy's
// loads wait on the local's just-stored fields. The caller has made sure
// that its key is not in the range already (newAttr; a shape keeps only
// the first of a repeated key).
func (b *Batch) appendAttr() *Attr {
	b.Attrs = append(b.Attrs, Attr{})
	return &b.Attrs[len(b.Attrs)-1]
}

// Attr is one kept attribute: a key of ReadOptions.Keep and a string, bool
// or int value (the projection decoders leave every other type to pdata).
type Attr struct {
	Key  string
	Type pcommon.ValueType // pcommon.ValueTypeStr, ValueTypeBool or ValueTypeInt
	Str  string
	Bool bool
	Int  int64
}

// ResourceAttrs returns the kept attributes of r, a resource of b.
func (b *Batch) ResourceAttrs(r Resource) []Attr { return b.Attrs[r.Attrs : r.Attrs+r.N] }

// SpanAttrs returns the kept attributes of s, a span of b.
func (b *Batch) SpanAttrs(s *Span) []Attr { return b.Attrs[s.Attrs : s.Attrs+s.N] }

// batchPool recycles batches: the index copies what it keeps (its
// strings are owned or interned), so once merged a batch is free again,
// and reusing its slices spares growing them line after line.
var batchPool = sync.Pool{New: func() any { return new(Batch) }}

// getBatch returns an empty batch.
func getBatch() *Batch {
	return batchPool.Get().(*Batch)
}

// putBatch recycles b; the caller must not use it afterwards. A batch
// grown by an unusually large line is left to the GC.
func putBatch(b *Batch) {
	const maxPooledSpans = 1 << 12
	if b == nil {
		return
	}
	if b.held != nil {
		b.held.give(b.charged)
		b.held, b.charged = nil, 0
	}
	b.from = nil
	if cap(b.Spans) > maxPooledSpans || cap(b.Attrs) > 16*maxPooledSpans {
		return
	}
	// No clear: newSpan, newResource and appendAttr append zero values,
	// and what a recycled batch's strings keep alive is bounded by the
	// pool; clearing them cost about 1% of a run's CPU.
	b.Resources, b.Spans, b.Attrs = b.Resources[:0], b.Spans[:0], b.Attrs[:0]
	b.charge, b.charged, b.room, b.err = nil, 0, 0, nil
	batchPool.Put(b)
}

// stringCache hands out one string per distinct span name or kept value
// text, so the many spans of a dump that repeat a name, a cache key or a
// session id do not each allocate it. Strings are immutable: batches may
// share them.
type stringCache struct {
	m map[string]string
	// slots hold the strings handed out last, one per hash of a few of
	// their bytes (slotOf): a span name or a value most often repeats
	// one seen lately, and one comparison costs less than the map's
	// hashing of the whole text. There are enough of them for the
	// session ids of the sessions in flight.
	slots [1 << slotBits]string
	// keys are the attribute keys the worker read lately (recentKeys).
	keys recentKeys
	// shapes are the span attribute arrays the worker read lately, by
	// span name (attrShapes).
	shapes attrShapes
	// spans are the shapes of the spans the worker read lately
	// (spanShapes).
	spans spanShapes
}

// slotBits is the log2 of a cache's slots: 64 KiB of string headers.
const slotBits = 12

// maxCachedStrings bounds a cache: a dump with unique values (a request id
// kept by a selector) must not grow it without end.
const maxCachedStrings = 1 << 14

// stringCaches gives each decoding worker a cache of its own.
var stringCaches = sync.Pool{New: func() any { return &stringCache{m: make(map[string]string)} }}

// slotOf picks b's slot from its length and its first and last eight
// bytes: texts that differ there (names, keys, ids of one writer) spread
// over the slots; texts that do not only share a slot, and the map
// answers for them.
func slotOf(b []byte) uint32 {
	n := len(b)
	w := uint64(n)
	if n >= 8 {
		w ^= binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[n-8:]), 29)
	} else {
		for _, c := range b {
			w = w<<8 ^ uint64(c)
		}
	}
	return uint32((w * 0x9e3779b97f4a7c15) >> (64 - slotBits))
}

// str returns b as a string, allocated once per distinct text.
func (c *stringCache) str(b []byte) string {
	slot := &c.slots[slotOf(b)]
	if *slot == string(b) {
		return *slot
	}
	s, ok := c.m[string(b)]
	if !ok {
		s = c.add(b)
	}
	*slot = s
	return s
}

// add allocates b as a string and caches it.
func (c *stringCache) add(b []byte) string {
	if len(c.m) >= maxCachedStrings {
		clear(c.m)
	}
	s := string(b)
	c.m[s] = s
	return s
}
