package index

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Parent links of a span once the index is finished.
const (
	ParentNone    int32 = -1 // a root span: no parent id
	parentMissing int32 = -2 // the parent id names a span absent from the dump
)

// StatusError is the error status code as stored in the index (the OTLP
// numbering).
const StatusError = uint8(ptrace.StatusCodeError)

// Span is the retained record of one Span. It holds no pointers, so the
// garbage collector never scans the chunks of them, and its 56 bytes are
// most of the index's per-Span cost: names and attribute values are int32
// indexes into tables shared by every Span, and the trace id is stored once
// per trace.
type Span struct {
	Start, End int64  // unix nanoseconds
	ID         uint64 // span id, big-endian
	ParentID   uint64 // parent span id, big-endian; 0 for a root span
	Trace      int32  // index into Index.TraceRecs
	Name       int32  // index into Index.Names
	Res        int32  // index into Index.Resources
	attrs      int32  // the span's first attribute: chunk<<attrChunkBits | offset in index.attrs
	Parent     int32  // the parent's span index once finished; parentNone or parentMissing
	nattrs     uint8
	Kind       uint8 // ptrace.SpanKind
	Status     uint8 // ptrace.StatusCode
	flags      uint8 // spanDup, spanEndsEarly: one byte, so a span stays 56 bytes
}

// The bits of Span.flags.
const (
	spanDup       uint8 = 1 << iota // a later copy of a span already indexed: left out of index.order
	spanEndsEarly                   // written ending before it started: End is clamped to Start
)

// EndsBeforeStart reports whether the span was written ending before it
// started. Its End is clamped to its Start, so windows and leases stay in
// order, but its duration is one the spans cannot tell: no latency sample.
func (s *Span) EndsBeforeStart() bool { return s.flags&spanEndsEarly != 0 }

// isDup reports whether the span is a later copy of one already indexed.
func (s *Span) isDup() bool { return s.flags&spanDup != 0 }

// Attr is one retained attribute: a key of the index's key table and an
// interned value. Every value is kept as the text OpenTelemetry's
// Value.AsString gives it (true, 2, a string as is), which is also how
// selectors compare it.
type Attr struct {
	Key uint16
	Val int32
}

// TraceRec is one trace: its id, kept once, and the range of its spans in
// index.order once the index is finished.
type TraceRec struct {
	ID         pcommon.TraceID
	First, N   int32
	Incomplete bool
}

// Resource is one distinct set of retained Resource attributes; spans share
// it by index.
type Resource struct {
	Attrs int32 // offset into Index.ResAttrs
	N     uint8
}

// vocabSpanAttrs are the span attributes the measures read; everything else
// is dropped on ingest. The call's jsonrpc.request.id, for instance, is
// unique per call and would cost memory for nothing.
var vocabSpanAttrs = []string{
	spans.AttrCacheHit,
	spans.AttrCacheKey,
	spans.AttrAttempt,
	spans.AttrMissReason,
	spans.AttrPoolID,
	spans.AttrSessionID,
	spans.AttrMethodName,
	spans.AttrErrorType,
	spans.AttrServerAddress,
	spans.AttrServerPort,
}

// vocabResourceAttrs are the resource attributes that name a pool scope.
var vocabResourceAttrs = []string{
	spans.ResourceServiceInstanceID,
	spans.ResourceServiceName,
}

// Index is the compact, queryable form of a trace dump: every distinct span
// with its ids, times, kind, status, an interned name and only the attributes
// the measures and the configuration need. It is built incrementally with
// Add from any number of ptrace.Traces batches, in any order: spans of one
// trace may arrive in different batches or files.
//
// It is private to analyze: callers outside hold it as an analyze.Dump (Load,
// NewDump), which hands them Add and nothing of the Index's internals, so
// the measures, the rules and the HTML report's events are read from it
// here only.
//
// An Index is not safe for concurrent use: Add from one goroutine (the
// [ingest.Read] sink already is one), then analyze it. The zero value is not usable;
// call newIndex.
type Index struct {
	// Key tables: the attribute Keys kept, by small integer id. Span and
	// resource Keys share one id space.
	Keys      []string
	keyID     map[string]uint16
	SpanKeyOK []bool // per key id: kept on spans
	ResKeyOK  []bool // per key id: kept on resources
	// keysByLen lists the kept keys by length: matching an attribute key
	// against the dozen kept ones by length then bytes is several times
	// cheaper than hashing it, and every attribute of every span is matched.
	keysByLen [maxKeyLen + 1][]uint16
	// lastVal remembers, per key id, the last value interned: consecutive
	// spans often repeat it (a trace's session, a pool's key).
	lastVal []internedVal
	// lastInt is lastVal for the int values of span attributes (a
	// server's port, an attempt number), which would otherwise be
	// formatted and looked up again for every span.
	lastInt []internedInt
	// seen and seenNames remember the values and the span names interned
	// lately by where their bytes lie, allocated on first use.
	seen, seenNames *seenStrings

	Names []string // interned span names
	Vals  []string // interned attribute values

	// Spans in arrival order, in fixed-size chunks that never move: a span's
	// index is its arrival number. Growing one large slice instead would copy
	// (and fault in) every span again at each growth, which costs more than
	// decoding them; sorting a copy would double the memory. Every chunk
	// but the last is full; the last holds what NumSpans leaves (chunk).
	// A chunk is a pointer to an array, not a slice, so that Span, which
	// the measures call about twenty times a span, indexes it with no
	// bounds check and one load: with slices, that check and the second
	// load cost 1.1% of a JSON lines run's instructions, 1.6% of a
	// protobuf one's.
	Chunks   []*[spanChunk]Span
	NumSpans int32
	attrs    [][]Attr // a span's attributes never straddle two chunks
	// Chunks a reset emptied, taken again before new ones are allocated.
	SpareChunks []*[spanChunk]Span
	spareAttrs  [][]Attr

	// Order lists the distinct spans grouped by trace, by span id within a
	// trace; each trace's range in it is TraceRec.First and N.
	Order     []int32
	TraceRecs []TraceRec
	Resources []Resource
	ResAttrs  []Attr

	// Build-time lookup maps. They are dropped when the index is finished
	// (they cost more than the tables they index) and rebuilt by the next Add.
	nameIdx  map[string]int32
	ValIdx   map[string]int32
	traceIdx map[pcommon.TraceID]int32
	resIdx   map[string]int32
	// stale marks traceIdx and resIdx as holding the numbers of before
	// KeepTraces renumbered the traces and resources: ensureMaps fills
	// them again before the next Add. The index KeepTraces leaves is
	// most often only read (a shard's handed-over index, observed and
	// reset), and filling them at once cost 1% of a run.
	stale bool

	keyBuf []byte // scratch space for resource keys
	// reused marks an index that is reset and filled again and again (an
	// engine shard's finalizations): finish keeps its lookup maps and its
	// order's memory for the next round instead of dropping them.
	reused bool
	// lender is the index whose names and vals a scratch index borrows
	// (borrowTraces): reset drops them rather than clearing them, and
	// value lookups go to the lender's map.
	lender *Index
	// lendMu lets a borrower look values up in this index's map on
	// another goroutine while this index goes on interning (an engine's
	// shard indexes while the traces it finalized are observed): a new
	// value is added under it, and a borrower's lookup reads under it.
	// lent counts the borrowers not reset yet: a lent index must not be
	// reset, or its borrowers' names and values would be cleared under
	// them.
	lendMu sync.RWMutex
	lent   atomic.Int32
	// ValLookup answers value -> id once the build-time map is dropped
	// (index_lookup.go).
	ValLookup valueLookup

	dirty bool // spans added since the last finish
	Dups  int  // spans left out as copies of an indexed one, dropped ones included
	// Recent is a direct-mapped cache of the (trace, span id) pairs added
	// last: a copy of a span still in it is dropped as it arrives and only
	// counted (dropped), so a dump that repeats the same lines again and
	// again costs no memory per copy. Copies it misses are left out by
	// finish as before; the result is the same either way.
	Recent  *[recentSlots]recentSpan
	Dropped int
	// NoCopyCache turns the duplicate cache off (a speculative engine's
	// shards): finish still leaves every copy out.
	NoCopyCache bool

	strBytes int64 // bytes of the interned names and values, for memBytes
	// FastBatches counts the batches of the projection decoders
	// (analyze/ingest) it indexed: tests pin that the CLI's path is the
	// one they exercise.
	FastBatches int
	Incomplete  int // traces with a missing parent or a parent cycle

	// layout is the depth-first layout of the parent links (index_tree.go),
	// built on first use after each finish.
	layout *Tree

	finishIDs []uint64 // a reused index's last ids from dropDuplicates, kept for their memory

	InputReports []report.InputReport // set by Load
}

// internedVal is a value and its id in index.vals.
type internedVal struct {
	s  string
	id int32
}

// internedInt is an int value beside the id of its text.
type internedInt struct {
	v  int64
	id int32
}

// maxKeyLen is the longest attribute key found through keysByLen; longer
// kept keys (unusual) go through the keyID map.
const maxKeyLen = 63

// recentSlots is the size of the duplicate cache (64 KiB): small enough to
// stay in a core's cache, since every span probes it at a random slot (a
// 1 MiB table cost a cache miss per span, 7% of `mcptrace analyze`). It
// catches the copies of a span that repeat within a few thousand spans (a
// line sent again, an exporter's retry); copies further apart are left out
// by finish, at the memory of one span record each until then.
const (
	recentBits  = 12
	recentSlots = 1 << recentBits
)

// recentSpan is one slot of the duplicate cache; trace is stored plus one
// so the zero slot matches nothing.
type recentSpan struct {
	id    uint64
	trace int32
}

// isRecentCopy reports whether the span (trace, id) was added recently, and
// remembers it otherwise. A copy found here is counted as dropped.
func (x *Index) isRecentCopy(trace int32, id uint64) bool {
	if x.NoCopyCache {
		return false
	}
	if x.Recent == nil {
		x.Recent = new([recentSlots]recentSpan)
	}
	h := (id ^ uint64(trace)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	slot := &x.Recent[h>>(64-recentBits)]
	if slot.id == id && slot.trace == trace+1 {
		x.Dropped++
		x.dirty = true // Duplicates changed
		return true
	}
	*slot = recentSpan{id: id, trace: trace + 1}
	return false
}

// Chunk sizes of the span and attribute tables.
const (
	spanChunkBits = 13
	spanChunk     = 1 << spanChunkBits
	attrChunkBits = 16
	attrChunk     = 1 << attrChunkBits
	maxSpanAttrs  = 255 // nattrs is a uint8
)

// New returns an empty index keeping the vocabulary's attributes plus
// those opts names.
func New(opts rulefmt.IndexOptions) *Index {
	x := &Index{keyID: make(map[string]uint16)}
	for _, k := range vocabSpanAttrs {
		x.addKey(k, false)
	}
	for _, k := range opts.SpanAttrs {
		x.addKey(k, false)
	}
	for _, k := range vocabResourceAttrs {
		x.addKey(k, true)
	}
	for _, k := range opts.ResourceAttrs {
		x.addKey(k, true)
	}
	x.Vals = []string{"false", "true"} // AsString of the two booleans, ids 0 and 1
	return x
}

// addKey registers key as kept on spans or on resources.
func (x *Index) addKey(key string, onResource bool) {
	if key == "" {
		return
	}
	id, ok := x.keyID[key]
	if !ok {
		if len(x.Keys) >= 1<<16-1 {
			return // beyond any sane configuration; the key is simply not kept
		}
		id = uint16(len(x.Keys))
		x.Keys = append(x.Keys, key)
		x.keyID[key] = id
		x.SpanKeyOK = append(x.SpanKeyOK, false)
		x.ResKeyOK = append(x.ResKeyOK, false)
		x.lastVal = append(x.lastVal, internedVal{id: -1})
		x.lastInt = append(x.lastInt, internedInt{id: -1})
		if len(key) <= maxKeyLen {
			x.keysByLen[len(key)] = append(x.keysByLen[len(key)], id)
		}
	}
	if onResource {
		x.ResKeyOK[id] = true
	} else {
		x.SpanKeyOK[id] = true
	}
}

// matchKey returns the id of a kept key k, on the ingest path. The
// projection decoders hand over the very strings of the index's keep set
// (KeepOf), which share their bytes with Keys: a key at the same place is
// the same key, found without the call that compares the bytes. Every key
// of k's length is tried by place before any by text, or each kept key of
// that length listed before k's own (plugin.mcp.cache_hit before
// plugin.mcp.cache_key) would cost that call.
func (x *Index) matchKey(k string) (uint16, bool) {
	if len(k) > maxKeyLen {
		id, ok := x.keyID[k]
		return id, ok
	}
	ids := x.keysByLen[len(k)]
	for _, id := range ids {
		// sameString's test without its length checks, which keysByLen
		// has made: with them matchKey is no longer inlined into
		// keepSpanAttr (+0.5% instructions).
		if unsafe.StringData(x.Keys[id]) == unsafe.StringData(k) {
			return id, true
		}
	}
	for _, id := range ids {
		if x.Keys[id] == k {
			return id, true
		}
	}
	return 0, false
}

// LookupKey returns the id of a kept key.
func (x *Index) LookupKey(key string) (uint16, bool) {
	id, ok := x.keyID[key]
	return id, ok
}

// Add indexes every span of td. It copies what it keeps, so td may be reused
// or dropped afterwards. Spans already in the index (same trace and span id)
// are counted once.
func (x *Index) Add(td ptrace.Traces) {
	x.AddPart(td, 0, 1)
}

// AddPart indexes the spans of td whose trace belongs to part of nparts
// (shardOf): the engine's shards each take their part of every batch.
// Resources are interned when a kept span first needs them.
func (x *Index) AddPart(td ptrace.Traces, part, nparts int) {
	x.ensureMaps()
	rss := td.ResourceSpans()
	var lastTrace pcommon.TraceID
	lastTraceIdx := int32(-1)
	keep := true
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		res := int32(-1)
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				sp := ss.At(k)
				tid := sp.TraceID()
				if lastTraceIdx < 0 || tid != lastTrace {
					lastTrace = tid
					if keep = nparts <= 1 || ShardOf(tid, nparts) == part; keep {
						lastTraceIdx = x.internTrace(tid)
					} else {
						lastTraceIdx = 0 // any value >= 0: the trace is known not kept
					}
				}
				if !keep {
					continue
				}
				if res < 0 {
					res = x.internResource(rs.Resource().Attributes())
				}
				x.addSpan(sp, lastTraceIdx, res)
			}
		}
	}
}

// ShardOf returns the part of nparts that trace id belongs to. Both halves
// of the id go through MurmurHash3's 64-bit finalizer, in which every input
// bit moves every output bit: ids are not always random (a generator's
// counter, a timestamp prefix, a constant half), and a hash that reads only
// some bits sent every trace of such a dump to one shard (the benchmark
// dumps of internal/tracegen, whose ids count up in their last bytes, ran
// on one shard of two). The part is the hash's high bits scaled to nparts.
func ShardOf(id pcommon.TraceID, nparts int) int {
	h := binary.LittleEndian.Uint64(id[8:]) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(id[:8]), 32)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	part, _ := bits.Mul64(h, uint64(nparts))
	return int(part)
}

// addFast indexes a projection decoder's batch (analyze/ingest) exactly as
// Add indexes the same spans as a ptrace.Traces.
func (x *Index) addFast(b *ingest.Batch) {
	x.AddFastPart(b, 0, 1)
}

// AddFastPart indexes the spans of b in part of nparts as addPart does:
// resources interned in order of first use, then each span through the
// same newSpan and putSpanAttr steps addSpan takes, its attributes kept
// by keepFastSpanAttr.
func (x *Index) AddFastPart(b *ingest.Batch, part, nparts int) {
	x.FastBatches++
	x.ensureMaps()
	res := make([]int32, len(b.Resources))
	for i := range res {
		res[i] = -1
	}
	var lastTrace pcommon.TraceID
	lastTraceIdx := int32(-1)
	keep := true
	for i := range b.Spans {
		fs := &b.Spans[i]
		if lastTraceIdx < 0 || fs.TraceID != lastTrace {
			lastTrace = fs.TraceID
			if keep = nparts <= 1 || ShardOf(fs.TraceID, nparts) == part; keep {
				lastTraceIdx = x.internTrace(fs.TraceID)
			} else {
				lastTraceIdx = 0
			}
		}
		if !keep {
			continue
		}
		if res[fs.Resource] < 0 {
			r := b.Resources[fs.Resource]
			start := x.beginResource()
			attrs := b.ResourceAttrs(r)
			for i := range attrs {
				a := &attrs[i]
				if id, ok := x.keepResAttr(start, a.Key); ok {
					x.ResAttrs = append(x.ResAttrs, Attr{Key: id, Val: x.internFastValue(id, a, false)})
				}
			}
			res[fs.Resource] = x.endResource(start)
		}
		if x.full() {
			return
		}
		id := binary.BigEndian.Uint64(fs.SpanID[:])
		if x.isRecentCopy(lastTraceIdx, id) {
			continue
		}
		s := x.newSpan(int64(fs.Start), int64(fs.End), id, binary.BigEndian.Uint64(fs.ParentSpanID[:]),
			lastTraceIdx, fs.Name, res[fs.Resource], fs.Kind, fs.Status)
		attrs := b.SpanAttrs(fs)
		for i := range attrs {
			a := &attrs[i]
			if id, ok := x.keepFastSpanAttr(s, a.Key); ok {
				x.putSpanAttr(s, id, x.internFastValue(id, a, true))
			}
		}
	}
}

// internFastValue interns a fast-path attribute value as internKeyValue
// (onSpan) or internValue interns the same pdata value.
func (x *Index) internFastValue(key uint16, a *ingest.Attr, onSpan bool) int32 {
	switch a.Type {
	case pcommon.ValueTypeStr:
		if onSpan {
			return x.internKeyStr(key, a.Str)
		}
		return x.internString(a.Str)
	case pcommon.ValueTypeBool:
		return boolVal(a.Bool)
	default: // pcommon.ValueTypeInt: the fast path keeps no other type
		if onSpan {
			return x.internKeyInt(key, a.Int)
		}
		return x.internString(strconv.FormatInt(a.Int, 10))
	}
}

// internKeyInt interns the text of v, an int value of a span attribute
// of key, as internKeyStr does a string: the key's last one answers
// without formatting v.
func (x *Index) internKeyInt(key uint16, v int64) int32 {
	if last := &x.lastInt[key]; last.id >= 0 && last.v == v {
		return last.id
	}
	id := x.internString(strconv.FormatInt(v, 10))
	x.lastInt[key] = internedInt{v: v, id: id}
	return id
}

// addSpan appends one span's retained record.
func (x *Index) addSpan(sp ptrace.Span, trace, res int32) {
	sid, pid := sp.SpanID(), sp.ParentSpanID()
	id := binary.BigEndian.Uint64(sid[:])
	if x.full() || x.isRecentCopy(trace, id) {
		return
	}
	s := x.newSpan(int64(sp.StartTimestamp()), int64(sp.EndTimestamp()), id, binary.BigEndian.Uint64(pid[:]),
		trace, sp.Name(), res, uint8(sp.Kind()), uint8(sp.Status().Code()))
	for k, v := range sp.Attributes().All() {
		if id, ok := x.keepSpanAttr(s, k); ok {
			x.putSpanAttr(s, id, x.internKeyValue(id, v))
		}
	}
}

// full reports whether the index holds as many spans as an int32 can
// number (2 billion): a span past that is not indexed.
func (x *Index) full() bool { return x.NumSpans == math.MaxInt32 }

// newSpan appends the record of a span to the span table and returns it,
// its attributes to be added with putSpanAttr at the end of the attribute
// table's last chunk, which it makes room in. The caller checks full
// first. The record is written where it stays, field by field: a record
// built as a value and copied in is read back with wide loads just after
// the narrow stores of its fields, which the CPU cannot forward, and the
// copy waits for them.
func (x *Index) newSpan(start, end int64, id, parent uint64, trace int32, name string, res int32, kind, status uint8) *Span {
	ci := x.attrRoom()
	s := x.spanRoom()
	*s = Span{} // a spare chunk's slot holds an old span

	s.Start, s.End = start, max(end, start) // a clock-skewed span lasts zero, not a negative time
	if end < start {
		s.flags = spanEndsEarly
	}
	s.ID, s.ParentID = id, parent
	s.Trace, s.Name, s.Res = trace, x.internName(name), res
	s.attrs = int32(ci<<attrChunkBits | len(x.attrs[ci]))
	s.Parent = ParentNone
	s.Kind, s.Status = kind, status
	return s
}

// keepSpanAttr returns the key id of attribute key k of a pdata span when
// s keeps it: keepFastSpanAttr's answer, for a key not yet on s (a pdata
// map may repeat a key; the first one wins).
func (x *Index) keepSpanAttr(s *Span, k string) (uint16, bool) {
	id, ok := x.keepFastSpanAttr(s, k)
	if !ok || hasKey(x.AttrsOf(s), id) {
		return 0, false
	}
	return id, true
}

// keepFastSpanAttr returns the key id of attribute key k when s keeps
// it: a kept span key, and room left. A projection decoder's batch holds
// each key once per span already (ingest.Batch.newAttr keeps the first
// of a repeated key), so its spans are not searched for the key again
// (that search cost about 1% of a run's instructions); keepSpanAttr adds
// the search for pdata's spans.
func (x *Index) keepFastSpanAttr(s *Span, k string) (uint16, bool) {
	id, ok := x.matchKey(k)
	if !ok || !x.SpanKeyOK[id] || s.nattrs == maxSpanAttrs {
		return 0, false
	}
	return id, true
}

// attrRoom makes room for a span's attributes at the end of the attribute
// table's last chunk, starting a chunk (a spare one when reset left some)
// when it has not maxSpanAttrs left, and returns that chunk's index.
func (x *Index) attrRoom() int {
	if n := len(x.attrs); n == 0 || cap(x.attrs[n-1])-len(x.attrs[n-1]) < maxSpanAttrs {
		x.attrs = append(x.attrs, nextChunk(&x.spareAttrs, newAttrChunk))
	}
	return len(x.attrs) - 1
}

// nextChunk returns an empty chunk for a table: a spare one reset left,
// else a new one.
func nextChunk[C any](spare *[]C, fresh func() C) C {
	if k := len(*spare); k > 0 {
		c := (*spare)[k-1]
		*spare = (*spare)[:k-1]
		return c
	}
	return fresh()
}

// newAttrChunk and newSpanChunk allocate a chunk of the attribute and span
// tables.
func newAttrChunk() []Attr           { return make([]Attr, 0, attrChunk) }
func newSpanChunk() *[spanChunk]Span { return new([spanChunk]Span) }

// putSpanAttr adds an attribute to s, the span newSpan started last.
func (x *Index) putSpanAttr(s *Span, key uint16, val int32) {
	ci := s.attrs >> attrChunkBits
	x.attrs[ci] = append(x.attrs[ci], Attr{Key: key, Val: val})
	s.nattrs++
}

// spanRoom appends a slot to the span table, starting a chunk (a spare one
// when reset left some) when the last is full, and returns it; the caller
// writes the whole record.
func (x *Index) spanRoom() *Span {
	k := x.NumSpans & (spanChunk - 1)
	if k == 0 { // the last chunk is full, or there is none
		x.Chunks = append(x.Chunks, nextChunk(&x.SpareChunks, newSpanChunk))
	}
	x.NumSpans++
	x.dirty = true
	return &x.Chunks[len(x.Chunks)-1][k]
}

// hasKey reports whether attrs holds key (a malformed span may repeat a
// key; the first one wins).
func hasKey(attrs []Attr, key uint16) bool {
	_, ok := AttrIn(attrs, key)
	return ok
}

// AttrIn returns the interned value of key among attrs, one span's
// (AttrsOf): a reader asking a span for several keys takes its
// attributes once and searches them for each, where AttrVal goes through
// the span and attribute tables every time.
func AttrIn(attrs []Attr, key uint16) (int32, bool) {
	for _, a := range attrs {
		if a.Key == key {
			return a.Val, true
		}
	}
	return 0, false
}

// Span returns span i.
func (x *Index) Span(i int32) *Span {
	return &x.Chunks[i>>spanChunkBits][i&(spanChunk-1)]
}

// chunk returns the spans chunk k of the span table holds: all of it but
// in the last chunk, which holds what NumSpans leaves.
func (x *Index) chunk(k int) []Span {
	return x.Chunks[k][:min(int(x.NumSpans)-(k<<spanChunkBits), spanChunk)]
}

// AttrsOf returns the attributes of s: each key once (the first of a
// repeated key is kept, keepSpanAttr).
func (x *Index) AttrsOf(s *Span) []Attr {
	off := s.attrs & (attrChunk - 1)
	return x.attrs[s.attrs>>attrChunkBits][off : off+int32(s.nattrs)]
}

// ensureMaps rebuilds the build-time maps a finished index dropped.
func (x *Index) ensureMaps() {
	if x.nameIdx != nil {
		if x.stale {
			clear(x.traceIdx)
			clear(x.resIdx)
			x.fillTraceAndResourceMaps()
			x.stale = false
		}
		return
	}
	x.nameIdx = make(map[string]int32, len(x.Names))
	x.ValIdx = make(map[string]int32, len(x.Vals))
	if x.lender == nil { // a borrower interns nothing
		for i, n := range x.Names {
			x.nameIdx[n] = int32(i)
		}
		for i, v := range x.Vals {
			x.ValIdx[v] = int32(i)
		}
	}
	x.traceIdx = make(map[pcommon.TraceID]int32, len(x.TraceRecs))
	x.resIdx = make(map[string]int32, len(x.Resources))
	x.fillTraceAndResourceMaps()
	x.stale = false
}

// fillTraceAndResourceMaps puts every trace and resource of x in the
// empty lookup maps.
func (x *Index) fillTraceAndResourceMaps() {
	for i, t := range x.TraceRecs {
		x.traceIdx[t.ID] = int32(i)
	}
	for i := range x.Resources {
		x.resIdx[x.resourceKey(int32(i))] = int32(i)
	}
}

// internName interns a span name, trying the names interned lately by
// where their bytes lie first (seenStrings), as internString does values.
func (x *Index) internName(s string) int32 {
	if x.seenNames == nil {
		x.seenNames = new(seenStrings)
	}
	if id, ok := x.seenNames.find(s); ok {
		return id
	}
	id, ok := x.nameIdx[s]
	if !ok {
		id = int32(len(x.Names))
		x.strBytes += int64(len(s))
		x.Names = append(x.Names, strings.Clone(s)) // never retain a slice of a decoder's buffer
		x.nameIdx[x.Names[id]] = id
	}
	x.seenNames.remember(s, id)
	return id
}

func (x *Index) internString(s string) int32 {
	if x.seen == nil {
		x.seen = new(seenStrings)
	}
	if id, ok := x.seen.find(s); ok {
		return id
	}
	id, ok := x.ValIdx[s]
	if !ok {
		id = x.addString(s)
	}
	x.seen.remember(s, id)
	return id
}

// addString interns s, a value not interned yet.
func (x *Index) addString(s string) int32 {
	id := int32(len(x.Vals))
	x.strBytes += int64(len(s))
	s = strings.Clone(s)
	x.Vals = append(x.Vals, s)
	x.lendMu.Lock()
	x.ValIdx[s] = id
	x.lendMu.Unlock()
	return id
}

// internKeyValue interns the value v of key, trying the key's last value
// first.
func (x *Index) internKeyValue(key uint16, v pcommon.Value) int32 {
	if v.Type() != pcommon.ValueTypeStr {
		return x.internValue(v)
	}
	return x.internKeyStr(key, v.Str())
}

// internKeyStr interns the string value s of key, trying the key's last
// value first: by where its bytes lie before by its bytes, since the
// decoders hand a repeated value over as the one string they cached.
func (x *Index) internKeyStr(key uint16, s string) int32 {
	if last := &x.lastVal[key]; last.id >= 0 && (sameString(last.s, s) || last.s == s) {
		return last.id
	}
	id := x.internString(s)
	x.lastVal[key] = internedVal{s: s, id: id} // the text as handed in: the next span's is often the very same string
	return id
}

// internValue interns v's AsString text without formatting the common
// scalar types through a temporary string where it can be avoided.
func (x *Index) internValue(v pcommon.Value) int32 {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return x.internString(v.Str())
	case pcommon.ValueTypeBool:
		return boolVal(v.Bool())
	case pcommon.ValueTypeInt:
		return x.internString(strconv.FormatInt(v.Int(), 10))
	case pcommon.ValueTypeSlice, pcommon.ValueTypeMap:
		// AsString encodes an array or a map as JSON, recursing once per
		// level without a limit. The readers cut values nested past
		// ingest.MaxDepth, but pdata handed to the index by other means
		// (the Collector connector's receivers) need not be.
		if ingest.ValueTooDeep(v) {
			return x.internString(TooDeepValue)
		}
		return x.internString(v.AsString())
	default:
		return x.internString(v.AsString())
	}
}

// TooDeepValue is the text an index keeps for an array or map attribute
// value nested deeper than ingest.MaxDepth, which it does not encode.
var TooDeepValue = fmt.Sprintf("<a value nested more than %d deep>", ingest.MaxDepth)

func (x *Index) internTrace(id pcommon.TraceID) int32 {
	if i, ok := x.traceIdx[id]; ok {
		return i
	}
	i := int32(len(x.TraceRecs))
	x.TraceRecs = append(x.TraceRecs, TraceRec{ID: id})
	x.traceIdx[id] = i
	return i
}

// boolVal is the interned id of a boolean's AsString text (newIndex puts
// "false" and "true" first).
func boolVal(b bool) int32 {
	if b {
		return 1
	}
	return 0
}

// internResource returns the id of the resource holding m's kept attributes,
// shared by every batch with the same ones.
func (x *Index) internResource(m pcommon.Map) int32 {
	start := x.beginResource()
	for k, v := range m.All() {
		if id, ok := x.keepResAttr(start, k); ok {
			x.ResAttrs = append(x.ResAttrs, Attr{Key: id, Val: x.internValue(v)})
		}
	}
	return x.endResource(start)
}

// beginResource starts gathering a resource's kept attributes at the end
// of resAttrs; endResource interns them.
func (x *Index) beginResource() int32 {
	return int32(len(x.ResAttrs))
}

// keepResAttr returns the key id of attribute key k when the resource
// begun at start keeps it: a kept resource key, not yet gathered (the
// first of a repeated key wins), and room left.
func (x *Index) keepResAttr(start int32, k string) (uint16, bool) {
	id, ok := x.matchKey(k)
	if !ok || !x.ResKeyOK[id] || len(x.ResAttrs)-int(start) == 255 {
		return 0, false
	}
	for _, a := range x.ResAttrs[start:] {
		if a.Key == id {
			return 0, false
		}
	}
	return id, true
}

// endResource returns the id of the resource whose attributes were
// gathered from start, sharing an existing one with the same attributes.
func (x *Index) endResource(start int32) int32 {
	added := x.ResAttrs[start:]
	slices.SortFunc(added, func(a, b Attr) int { return int(a.Key) - int(b.Key) })
	x.keyBuf = appendResourceKey(x.keyBuf[:0], added)
	if id, ok := x.resIdx[string(x.keyBuf)]; ok { // no allocation for a known resource
		x.ResAttrs = x.ResAttrs[:start]
		return id
	}
	id := int32(len(x.Resources))
	x.Resources = append(x.Resources, Resource{Attrs: start, N: uint8(len(added))})
	x.resIdx[string(x.keyBuf)] = id
	return id
}

// resourceKey is the canonical map key of resource r: its sorted pairs.
func (x *Index) resourceKey(r int32) string {
	res := x.Resources[r]
	return string(appendResourceKey(nil, x.ResAttrs[res.Attrs:res.Attrs+int32(res.N)]))
}

// appendResourceKey appends the key of sorted resource attributes to b.
func appendResourceKey(b []byte, attrs []Attr) []byte {
	for _, a := range attrs {
		b = binary.LittleEndian.AppendUint16(b, a.Key)
		b = binary.LittleEndian.AppendUint32(b, uint32(a.Val))
	}
	return b
}

// Finish groups spans by trace, leaves duplicates out, resolves parent
// links and marks incomplete traces. Every query calls it; it does nothing
// when no span was added since the last call, and starts over otherwise, so
// spans may keep arriving between queries.
func (x *Index) Finish() {
	if !x.dirty {
		return
	}
	x.dirty = false
	x.layout = nil
	order, offsets := x.orderByTrace()
	x.linkParents(x.dropDuplicates(order, offsets))

	// The lookup maps cost more than the tables; the next Add rebuilds them.
	// So does the duplicate cache (64 KiB): a copy arriving after a query
	// is still left out here, by the sort.
	if !x.reused {
		x.nameIdx, x.ValIdx, x.traceIdx, x.resIdx = nil, nil, nil, nil
		x.Recent = nil
	}
}

// orderByTrace returns the span indexes grouped by trace, in arrival order
// within each (trace t's are order[offsets[t]:offsets[t+1]]): a counting
// sort, linear in the spans where a sort on the trace would not be. A
// reused index fills its previous order's memory.
func (x *Index) orderByTrace() (order, offsets []int32) {
	nt := len(x.TraceRecs)
	offsets = make([]int32, nt+1)
	for ci := range x.Chunks {
		c := x.chunk(ci)
		for i := range c {
			offsets[c[i].Trace+1]++
		}
	}
	for t := range nt {
		offsets[t+1] += offsets[t]
	}
	if x.reused && cap(x.Order) >= int(x.NumSpans) {
		order = x.Order[:x.NumSpans]
	} else {
		order = make([]int32, x.NumSpans)
	}
	next := slices.Clone(offsets[:nt])
	var i int32
	for ci := range x.Chunks {
		c := x.chunk(ci)
		for k := range c {
			t := c[k].Trace
			order[next[t]] = i
			next[t]++
			i++
		}
	}
	return order, offsets
}

// dropDuplicates orders each trace's spans of order (grouped by
// orderByTrace, so in arrival order within each) by span id, the first copy
// of a duplicate first, and leaves the later copies out, in place: the
// result is x.Order, each trace's range of it set, and x.Dups counts the
// copies. It returns the kept spans' ids, parallel to x.Order, for
// linkParents to search: one small array per trace, read in order, where
// searching the spans themselves would jump between chunks.
func (x *Index) dropDuplicates(order, offsets []int32) []uint64 {
	kept := order[:0]
	ids := x.finishIDs[:0]
	var group []idPos
	x.Dups = x.Dropped
	for t := range x.TraceRecs {
		group = group[:0]
		for _, si := range order[offsets[t]:offsets[t+1]] {
			group = append(group, idPos{x.Span(si).ID, si})
		}
		sortByIDThenArrival(group)
		first := int32(len(kept))
		for k, e := range group {
			dup := k > 0 && e.id == group[k-1].id
			sp := x.Span(e.si)
			sp.flags &^= spanDup
			if dup {
				sp.flags |= spanDup
				x.Dups++
				continue
			}
			kept = append(kept, e.si) // the group was read out first: writes never overtake the reads
			ids = append(ids, e.id)
		}
		x.TraceRecs[t].First, x.TraceRecs[t].N = first, int32(len(kept))-first
	}
	x.Order = kept
	if !x.reused {
		x.Order = slices.Clip(kept)
	} else {
		x.finishIDs = ids
	}
	return ids
}

// idPos is one span of a trace being finished: its id beside its index,
// so sorting a trace moves 16 bytes a span and never reads the spans.
type idPos struct {
	id uint64
	si int32
}

// sortByIDThenArrival sorts g, in arrival order, by span id, copies of one
// id in the order they arrived. Traces are small, so a stable insertion
// sort does most of them without a call per comparison. Past insertionMax
// the library's sort takes over, so a hostile trace of a million spans
// stays n log n; it is not stable, so it breaks ties on the span index,
// which grows with arrival.
func sortByIDThenArrival(g []idPos) {
	if len(g) > insertionMax {
		slices.SortFunc(g, func(a, b idPos) int {
			if c := cmpUint64(a.id, b.id); c != 0 {
				return c
			}
			return cmp.Compare(a.si, b.si)
		})
		return
	}
	for i := 1; i < len(g); i++ {
		e := g[i]
		j := i
		for ; j > 0 && g[j-1].id > e.id; j-- { // never past an equal id: stable
			g[j] = g[j-1]
		}
		g[j] = e
	}
}

// insertionMax is the largest trace sortByIDThenArrival sorts by
// insertion: past about this many elements, pdqsort's own cutoff, the
// quadratic moves outweigh the calls saved.
const insertionMax = 12

// Reset empties x for another round with the same options, keeping the
// memory it grew: its span and attribute chunks (as spares), its tables and
// its lookup maps. Filling a fresh index each time instead costs a
// megabyte of chunks to clear and the maps to grow again, per round. It
// marks x reused (see the field).
func (x *Index) Reset() {
	if x.Lent() {
		panic("index: Reset of an index whose names and values are lent")
	}
	x.reused = true
	x.SpareChunks = append(x.SpareChunks, x.Chunks...)
	for _, c := range x.attrs {
		x.spareAttrs = append(x.spareAttrs, c[:0])
	}
	clear(x.Chunks)
	clear(x.attrs)
	x.Chunks, x.attrs, x.NumSpans = x.Chunks[:0], x.attrs[:0], 0
	for i := range x.lastVal {
		x.lastVal[i] = internedVal{id: -1}
		x.lastInt[i] = internedInt{id: -1}
	}
	for _, m := range []*seenStrings{x.seen, x.seenNames} {
		if m != nil {
			*m = seenStrings{}
		}
	}
	if x.lender != nil {
		x.lender.lent.Add(-1)
		x.Names, x.Vals, x.lender = nil, []string{"false", "true"}, nil
	} else {
		clear(x.Names)
		clear(x.Vals[2:]) // newIndex's "false" and "true" stay
		x.Names, x.Vals = x.Names[:0], x.Vals[:2]
	}
	x.Order, x.TraceRecs = x.Order[:0], x.TraceRecs[:0]
	x.Resources, x.ResAttrs = x.Resources[:0], x.ResAttrs[:0]
	if x.nameIdx != nil {
		clear(x.nameIdx)
		clear(x.ValIdx)
		clear(x.traceIdx)
		clear(x.resIdx)
		x.stale = false
		for i, v := range x.Vals {
			x.ValIdx[v] = int32(i)
		}
	}
	if x.Recent != nil {
		*x.Recent = [recentSlots]recentSpan{}
	}
	x.dirty, x.Dups, x.Dropped, x.strBytes = false, 0, 0, 0
	x.FastBatches, x.Incomplete, x.layout, x.InputReports = 0, 0, nil, nil
}

// linkParents resolves every parent id to a span index within its trace and
// marks traces with a missing parent, or a parent cycle, incomplete. A cycle
// is broken at the span that closes it so ancestor walks always end. ids
// holds the span ids of x.Order, as dropDuplicates returned them.
func (x *Index) linkParents(ids []uint64) {
	x.Incomplete = 0
	var state []uint8                 // breakCycles' walk state, per position in order, made when first walked
	up := make([]int32, len(x.Order)) // the parent's position in order's trace group, -1 for none
	var path []int32
	for t := range x.TraceRecs {
		tr := &x.TraceRecs[t]
		tr.Incomplete = false
		group := x.Order[tr.First : tr.First+tr.N]
		groupIDs := ids[tr.First : tr.First+tr.N]
		groupUp := up[tr.First : tr.First+tr.N]
		down, rising := true, true // every link to an earlier span; to a later one
		for k, si := range group {
			s := x.Span(si)
			groupUp[k] = -1
			switch {
			case s.ParentID == 0:
				s.Parent = ParentNone
			case s.ParentID == s.ID:
				s.Parent = parentMissing
				tr.Incomplete = true
			default:
				j, found := searchID(groupIDs, s.ParentID)
				if found {
					s.Parent, groupUp[k] = group[j], int32(j)
					down, rising = down && group[j] < si, rising && group[j] > si
				} else {
					s.Parent = parentMissing
					tr.Incomplete = true
				}
			}
		}
		// Links that all run one way in arrival order cannot close a
		// cycle: most writers export a trace parents first or children
		// first, and then the walk is not needed.
		if !down && !rising {
			if state == nil {
				state = make([]uint8, len(x.Order))
			}
			var cut bool
			if path, cut = x.breakCycles(group, groupUp, state[tr.First:tr.First+tr.N], path); cut {
				tr.Incomplete = true
			}
		}
		if tr.Incomplete {
			x.Incomplete++
		}
	}
}

// searchID returns where id is, or would be inserted, in ids (sorted), and
// whether it is there: the first of equal ids, as slices.BinarySearch. Its
// halving step takes the comparison's borrow as a mask, not a branch: a
// parent's id is as likely to lie on either side of each probe, so a
// branch on it is mispredicted about every other time. (The compiler
// turns the plain if into a branch here, not a conditional move.)
func searchID(ids []uint64, id uint64) (int, bool) {
	n := len(ids)
	if n == 0 {
		return 0, false
	}
	base := 0
	for n > 1 {
		half := n / 2
		_, less := bits.Sub64(ids[base+half], id, 0) // 1 when the probe's id is below id
		base += half & -int(less)
		n -= half
	}
	if ids[base] < id {
		base++
	}
	return base, base < len(ids) && ids[base] == id
}

// breakCycles walks every span of one trace (group, sorted by span id) up
// to its root, by up (each span's parent's position in group, -1 for
// none), remembering in state the spans already proven to reach a root,
// and cuts the parent link of any span whose walk comes back to itself.
// It reports whether it cut one; path is scratch space, returned for
// reuse.
func (x *Index) breakCycles(group, up []int32, state []uint8, path []int32) ([]int32, bool) {
	const (
		unseen = iota
		walking
		done
	)
	cut := false
	for i := range group {
		if state[i] == done {
			continue
		}
		path = path[:0]
		j := i
		for {
			if state[j] == done {
				break
			}
			if state[j] == walking { // back on the current path: a cycle
				x.Span(group[j]).Parent = parentMissing
				cut = true
				break
			}
			state[j] = walking
			path = append(path, int32(j))
			if up[j] < 0 {
				break
			}
			j = int(up[j])
		}
		for _, k := range path {
			state[k] = done
		}
	}
	return path, cut
}

// CompareSpans orders two spans by trace id, then span id: an order that does
// not depend on the order the spans arrived in.
func (x *Index) CompareSpans(a, b int32) int {
	sa, sb := x.Span(a), x.Span(b)
	if sa.Trace != sb.Trace {
		ta, tb := x.TraceRecs[sa.Trace].ID, x.TraceRecs[sb.Trace].ID
		return bytes.Compare(ta[:], tb[:])
	}
	return cmpUint64(sa.ID, sb.ID)
}

func cmpUint64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// MemBytes estimates the memory the index holds: its chunks, tables and
// interned strings, with the build-time maps that index them (about as
// much again for the traces and strings). Load checks it against the
// memory budget after every batch.
func (x *Index) MemBytes() int64 {
	n := int64(len(x.Chunks)) * spanChunk * int64(unsafe.Sizeof(Span{}))
	n += int64(len(x.attrs)) * attrChunk * int64(unsafe.Sizeof(Attr{}))
	n += int64(cap(x.TraceRecs)) * int64(unsafe.Sizeof(TraceRec{})) * 2
	n += 2 * (x.strBytes + int64(len(x.Names)+len(x.Vals))*int64(unsafe.Sizeof("")))
	return n
}

// Spans returns the number of distinct spans indexed.
func (x *Index) Spans() int {
	x.Finish()
	return len(x.Order)
}

// Traces returns the number of distinct traces indexed.
func (x *Index) Traces() int {
	x.Finish()
	return len(x.TraceRecs)
}

// IncompleteTraces returns the number of traces with a span whose parent is
// absent from the dump: a process that had not exported yet, or a lost batch.
func (x *Index) IncompleteTraces() int {
	x.Finish()
	return x.Incomplete
}

// Duplicates returns the number of spans left out because a span with the
// same trace and span id was already indexed.
func (x *Index) Duplicates() int {
	x.Finish()
	return x.Dups
}

// Window returns the earliest span start and the latest span end, and false
// when the index is empty. Times are UTC.
func (x *Index) Window() (start, end time.Time, ok bool) {
	x.Finish()
	if len(x.Order) == 0 {
		return time.Time{}, time.Time{}, false
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for ci := range x.Chunks {
		c := x.chunk(ci)
		for i := range c {
			lo = min(lo, c[i].Start)
			hi = max(hi, c[i].End)
		}
	}
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC(), true
}

// Inputs returns what Load read into the index, one entry per input, in
// input order; nil for an index built with Add alone.
func (x *Index) Inputs() []report.InputReport {
	return slices.Clone(x.InputReports)
}

// --- queries used by measures and selectors (the index must be finished) ---

// AttrVal returns the interned value of a kept span attribute.
func (x *Index) AttrVal(i int32, key uint16) (int32, bool) {
	return AttrIn(x.AttrsOf(x.Span(i)), key)
}

// ResAttrVal returns the interned value of a kept resource attribute of the
// span's resource.
func (x *Index) ResAttrVal(i int32, key uint16) (int32, bool) {
	r := x.Resources[x.Span(i).Res]
	for _, a := range x.ResAttrs[r.Attrs : r.Attrs+int32(r.N)] {
		if a.Key == key {
			return a.Val, true
		}
	}
	return 0, false
}

// lentValueID is ValueID for a borrower, which may ask from another
// goroutine than the one interning into x.
func (x *Index) lentValueID(v string) int32 {
	x.lendMu.RLock()
	defer x.lendMu.RUnlock()
	if x.ValIdx == nil {
		return x.ValueID(v)
	}
	if id, ok := x.ValIdx[v]; ok {
		return id
	}
	return -1
}

// Lent reports whether a borrower (BorrowTraces) still reads x's names
// and values: until each is reset, x must not be.
func (x *Index) Lent() bool { return x.lent.Load() > 0 }

// TraceID returns the hex trace id of trace t.
func (x *Index) TraceID(t int32) string {
	return x.TraceRecs[t].ID.String()
}

// ValueID returns the id of an interned value, or -1 when no span carries it.
func (x *Index) ValueID(v string) int32 {
	if x.lender != nil {
		return x.lender.lentValueID(v)
	}
	if x.ValIdx != nil {
		if id, ok := x.ValIdx[v]; ok {
			return id
		}
		return -1
	}
	for i, s := range x.Vals {
		if s == v {
			return int32(i)
		}
	}
	return -1
}
