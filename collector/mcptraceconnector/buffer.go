package mcptraceconnector

import (
	"container/list"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze"
)

// finalizeReason says why a trace left the buffer; the engine reads it to
// know whether the trace may be incomplete.
type finalizeReason int

const (
	// reasonWait: no span of the trace arrived for the configured wait.
	reasonWait finalizeReason = iota
	// reasonCut: finalized early to keep max_open_traces.
	reasonCut
	// reasonShutdown: the connector is shutting down.
	reasonShutdown
	// reasonComplete: the trace's root span arrived (analyze.CompleteAtRoot),
	// finalized at the end of the ConsumeTraces call that brought it.
	reasonComplete
)

// String names the reason for logs and test failures.
func (r finalizeReason) String() string {
	switch r {
	case reasonWait:
		return "wait"
	case reasonCut:
		return "cut"
	case reasonShutdown:
		return "shutdown"
	case reasonComplete:
		return "complete"
	}
	return "unknown"
}

// finalizedTrace is one trace that left the buffer: all the spans it
// gathered, regrouped under their resources and scopes.
type finalizedTrace struct {
	id     pcommon.TraceID
	spans  ptrace.Traces
	reason finalizeReason
}

// openTrace is a trace the buffer holds: its spans so far and when the last
// one arrived.
//
// New spans gather in pdata form (cur). Spans that have waited
// encodeAfter are encoded as OTLP protobuf (held, one part per encoding)
// at a sweep: the bytes take about half the heap of the pdata form and
// hold no pointers, so the garbage collector never scans them, but
// encoding and decoding cost CPU (BenchmarkMemoryPerOpenTrace,
// BenchmarkBufferThroughput). So a trace that completes soon after its
// first spans (the usual case: its root comes in the same or the next
// export request) is never encoded; one that waits out wait (a trace
// whose root never comes here, or hold_complete) is held encoded for most
// of it.
type openTrace struct {
	id   pcommon.TraceID
	held []heldPart
	cur  ptrace.Traces // spans not yet encoded, while hasCur
	last time.Time
	// hasCur is set while cur holds spans; curSince is when the first of
	// them arrived.
	hasCur   bool
	curSince time.Time
	// rooted is set when the trace's root span has arrived.
	rooted bool
	// closed is set when the trace is finalized, so that a batch being split
	// stops filing spans into a trace it cut midway.
	closed bool
}

// heldPart is one batch's spans of an open trace: OTLP protobuf, or the
// pdata itself in the (never seen) case the encoder failed.
type heldPart struct {
	proto []byte
	td    ptrace.Traces
}

// bufferCounts are the buffer's cumulative counters since it was created.
type bufferCounts struct {
	// finalized counts traces finalized for any reason (cut included).
	finalized int64
	// cut counts traces finalized early by max_open_traces.
	cut int64
	// lateSpans counts spans that arrived for a trace already finalized.
	lateSpans int64
	// noTraceID counts spans with an empty trace id, which cannot be
	// grouped and are not analysed.
	noTraceID int64
	// complete counts the finalized traces that were complete (their root
	// arrived) rather than waited out, cut or flushed.
	complete int64
	// lostParts counts held parts that would not decode at finalization:
	// it never should (they are the buffer's own encoding); the connector
	// logs it rather than panic.
	lostParts int64
}

// traceBuffer groups spans by trace id until each trace is finalized. It is
// safe for concurrent use; every method that changes state takes mu, and
// none does I/O or calls out while holding it.
//
// The open traces sit in one list ordered by the arrival of their last span,
// oldest first. Because wait is the same for every trace, that order is also
// the order of expiry, so the oldest trace is both the next to expire and
// the one to cut when the bound is reached; both are O(1) at the front.
//
// When completeAtRoot is set, a trace whose root span arrives is complete
// (analyze.CompleteAtRoot: the engine's rule) and is finalized at the end
// of the add that brought the root, so the root's children in the same
// batch, in whatever order, are in it; a span of it arriving in a later
// batch is late.
//
// Late spans are recognised by remembering the ids of the last maxOpen
// finalized traces (a ring, so that memory stays bounded); a span of a trace
// finalized longer ago than that starts a new open trace.
type traceBuffer struct {
	wait           time.Duration
	maxOpen        int
	completeAtRoot bool
	enc            ptrace.ProtoMarshaler
	dec            ptrace.ProtoUnmarshaler
	// fresh lists the open traces whose spans are not yet encoded, in the
	// order their pdata began (closed ones are skipped when met).
	fresh []*openTrace

	mu     sync.Mutex
	open   map[pcommon.TraceID]*list.Element // value: *openTrace
	order  *list.List                        // *openTrace, oldest last span first
	done   map[pcommon.TraceID]struct{}      // recently finalized ids
	ring   []pcommon.TraceID                 // done in finalization order
	next   int                               // ring slot to overwrite next
	counts bufferCounts
}

// newTraceBuffer returns an empty buffer; wait and maxOpen must be positive
// (Config.Validate has checked them). completeAtRoot finalizes a trace as
// soon as its root span has arrived.
func newTraceBuffer(wait time.Duration, maxOpen int, completeAtRoot bool) *traceBuffer {
	return &traceBuffer{
		wait:           wait,
		maxOpen:        maxOpen,
		completeAtRoot: completeAtRoot,
		open:           make(map[pcommon.TraceID]*list.Element),
		order:          list.New(),
		done:           make(map[pcommon.TraceID]struct{}),
		ring:           make([]pcommon.TraceID, 0, min(maxOpen, 1024)),
	}
}

// scopeKey names one destination scope while a batch is split: the trace it
// belongs to and the source resource and scope indexes.
type scopeKey struct {
	id     pcommon.TraceID
	rs, ss int
}

// scopeDest is where the spans of one scopeKey go.
type scopeDest struct {
	trace *openTrace
	spans ptrace.SpanSlice
}

// add files every span of td under its trace, stamped as arriving at now.
// It returns the traces it had to cut to stay within maxOpen, oldest first,
// the traces td completed (their root arrived; see completeAtRoot), in
// the order their roots came, and the number of spans it left out for
// having no trace id. td is not retained or modified: spans are copied.
func (b *traceBuffer) add(td ptrace.Traces, now time.Time) (cut, complete []finalizedTrace, noTraceID int) {
	dest := make(map[scopeKey]scopeDest)
	var rooted []*openTrace

	b.mu.Lock()
	defer b.mu.Unlock()
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j)
			spans := ss.Spans()
			for k := 0; k < spans.Len(); k++ {
				span := spans.At(k)
				id := span.TraceID()
				if id.IsEmpty() {
					b.counts.noTraceID++
					noTraceID++
					continue
				}
				key := scopeKey{id: id, rs: i, ss: j}
				to, ok := dest[key]
				if ok && to.trace.closed {
					// Cut earlier in this very batch: the rest is late.
					b.counts.lateSpans++
					continue
				}
				if !ok {
					ot, isLate, cutNow := b.openLocked(id, now)
					if isLate {
						b.counts.lateSpans++
						continue
					}
					cut = append(cut, cutNow...)
					if !ot.hasCur {
						ot.hasCur, ot.cur, ot.curSince = true, ptrace.NewTraces(), now
						b.fresh = append(b.fresh, ot)
					}
					nrs := ot.cur.ResourceSpans().AppendEmpty()
					rs.Resource().CopyTo(nrs.Resource())
					nrs.SetSchemaUrl(rs.SchemaUrl())
					nss := nrs.ScopeSpans().AppendEmpty()
					ss.Scope().CopyTo(nss.Scope())
					nss.SetSchemaUrl(ss.SchemaUrl())
					to = scopeDest{trace: ot, spans: nss.Spans()}
					dest[key] = to
				}
				span.CopyTo(to.spans.AppendEmpty())
				if b.completeAtRoot && !to.trace.rooted && analyze.IsRootSpan(span) {
					to.trace.rooted = true
					rooted = append(rooted, to.trace)
				}
			}
		}
	}
	// The batch is filed: only now are its complete traces finalized, so
	// a root ahead of its children in the batch does not cut them.
	for _, ot := range rooted {
		if ot.closed {
			continue // cut later in this batch: already finalized
		}
		b.counts.complete++
		complete = append(complete, b.finalizeLocked(b.open[ot.id], reasonComplete))
	}
	return cut, complete, noTraceID
}

// encodeAfter is how long spans of an open trace stay in pdata form before
// a sweep encodes them (see openTrace): about the OpenTelemetry SDKs'
// default export delay (5 s), so a trace whose root comes in a later
// export request usually completes before it is encoded.
const encodeAfter = 5 * time.Second

// encodeOlder encodes the pdata spans of every open trace that got them at
// or before cutoff, oldest first.
func (b *traceBuffer) encodeOlder(cutoff time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, ot := range b.fresh {
		if ot.hasCur && ot.curSince.After(cutoff) {
			break
		}
		n++
		if ot.closed || !ot.hasCur {
			continue
		}
		part := heldPart{td: ot.cur}
		if buf, err := b.enc.MarshalTraces(ot.cur); err == nil {
			part = heldPart{proto: buf}
		}
		ot.held = append(ot.held, part)
		ot.cur, ot.hasCur = ptrace.Traces{}, false
	}
	// Drop the handled entries; reallocate now and then so the backing
	// array does not pin finalized traces.
	b.fresh = b.fresh[n:]
	if cap(b.fresh) > 2*len(b.fresh)+1024 {
		b.fresh = slices.Clone(b.fresh)
	}
}

// openLocked returns the open trace id, creating it (and cutting the oldest
// open trace if the bound is reached) or moving it to the back of the order
// as just touched. late is true, and nothing changes, when id was finalized
// recently. b.mu must be held.
func (b *traceBuffer) openLocked(id pcommon.TraceID, now time.Time) (ot *openTrace, late bool, cut []finalizedTrace) {
	if e, ok := b.open[id]; ok {
		ot = e.Value.(*openTrace)
		ot.last = now
		b.order.MoveToBack(e)
		return ot, false, nil
	}
	if _, ok := b.done[id]; ok {
		return nil, true, nil
	}
	for len(b.open) >= b.maxOpen {
		b.counts.cut++
		cut = append(cut, b.finalizeLocked(b.order.Front(), reasonCut))
	}
	ot = &openTrace{id: id, last: now}
	b.open[id] = b.order.PushBack(ot)
	return ot, false, cut
}

// expire finalizes every open trace whose last span arrived at or before
// now minus wait, oldest first.
func (b *traceBuffer) expire(now time.Time) []finalizedTrace {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []finalizedTrace
	deadline := now.Add(-b.wait)
	for e := b.order.Front(); e != nil; e = b.order.Front() {
		if e.Value.(*openTrace).last.After(deadline) {
			break
		}
		out = append(out, b.finalizeLocked(e, reasonWait))
	}
	return out
}

// flush finalizes every open trace, oldest first, for Shutdown.
func (b *traceBuffer) flush() []finalizedTrace {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]finalizedTrace, 0, len(b.open))
	for e := b.order.Front(); e != nil; e = b.order.Front() {
		out = append(out, b.finalizeLocked(e, reasonShutdown))
	}
	return out
}

// finalizeLocked removes the open trace at e, remembers its id as done and
// counts it. b.mu must be held.
func (b *traceBuffer) finalizeLocked(e *list.Element, reason finalizeReason) finalizedTrace {
	ot := b.order.Remove(e).(*openTrace)
	ot.closed = true
	delete(b.open, ot.id)
	b.counts.finalized++
	if len(b.ring) < b.maxOpen {
		b.ring = append(b.ring, ot.id)
	} else {
		delete(b.done, b.ring[b.next])
		b.ring[b.next] = ot.id
		b.next = (b.next + 1) % b.maxOpen
	}
	b.done[ot.id] = struct{}{}
	return finalizedTrace{id: ot.id, spans: b.gatherLocked(ot), reason: reason}
}

// gatherLocked returns every span of ot, its held parts decoded then the
// current batch's, and releases them from ot. b.mu must be held.
func (b *traceBuffer) gatherLocked(ot *openTrace) ptrace.Traces {
	out := ptrace.NewTraces()
	for _, p := range ot.held {
		td := p.td
		if p.proto != nil {
			var err error
			if td, err = b.dec.UnmarshalTraces(p.proto); err != nil {
				b.counts.lostParts++
				continue
			}
		}
		td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
	}
	ot.held = nil
	if ot.hasCur {
		ot.cur.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
		ot.cur, ot.hasCur = ptrace.Traces{}, false
	}
	return out
}

// snapshot returns the counters and the number of open traces.
func (b *traceBuffer) snapshot() (bufferCounts, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts, len(b.open)
}
