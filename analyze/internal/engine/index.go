package engine

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
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
	parentNone    int32 = -1 // a root span: no parent id
	parentMissing int32 = -2 // the parent id names a span absent from the dump
)

// statusError is the error status code as stored in the index (the OTLP
// numbering).
const statusError = uint8(ptrace.StatusCodeError)

// span is the retained record of one span. It holds no pointers, so the
// garbage collector never scans the chunks of them, and its 56 bytes are
// most of the index's per-span cost: names and attribute values are int32
// indexes into tables shared by every span, and the trace id is stored once
// per trace.
type span struct {
	start, end int64  // unix nanoseconds
	id         uint64 // span id, big-endian
	parentID   uint64 // parent span id, big-endian; 0 for a root span
	trace      int32  // index into index.traces
	name       int32  // index into index.names
	res        int32  // index into index.resources
	attrs      int32  // the span's first attribute: chunk<<attrChunkBits | offset in index.attrs
	parent     int32  // the parent's span index once finished; parentNone or parentMissing
	nattrs     uint8
	kind       uint8 // ptrace.SpanKind
	status     uint8 // ptrace.StatusCode
	dup        bool  // a later copy of a span already indexed: left out of index.order
}

// attr is one retained attribute: a key of the index's key table and an
// interned value. Every value is kept as the text OpenTelemetry's
// Value.AsString gives it (true, 2, a string as is), which is also how
// selectors compare it.
type attr struct {
	key uint16
	val int32
}

// traceRec is one trace: its id, kept once, and the range of its spans in
// index.order once the index is finished.
type traceRec struct {
	id         pcommon.TraceID
	first, n   int32
	incomplete bool
}

// resource is one distinct set of retained resource attributes; spans share
// it by index.
type resource struct {
	attrs int32 // offset into index.resAttrs
	n     uint8
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

// index is the compact, queryable form of a trace dump: every distinct span
// with its ids, times, kind, status, an interned name and only the attributes
// the measures and the configuration need. It is built incrementally with
// Add from any number of ptrace.Traces batches, in any order: spans of one
// trace may arrive in different batches or files.
//
// It is private to analyze: callers outside hold it as a [Dump] (Load,
// NewDump), which hands them Add and nothing of the index's internals, so
// the measures, the rules and the HTML report's events are read from it
// here only.
//
// An index is not safe for concurrent use: Add from one goroutine (the
// [ingest.Read] sink already is one), then analyze it. The zero value is not usable;
// call newIndex.
type index struct {
	// Key tables: the attribute keys kept, by small integer id. Span and
	// resource keys share one id space.
	keys      []string
	keyID     map[string]uint16
	spanKeyOK []bool // per key id: kept on spans
	resKeyOK  []bool // per key id: kept on resources
	// keysByLen lists the kept keys by length: matching an attribute key
	// against the dozen kept ones by length then bytes is several times
	// cheaper than hashing it, and every attribute of every span is matched.
	keysByLen [maxKeyLen + 1][]uint16
	// lastVal remembers, per key id, the last value interned: consecutive
	// spans often repeat it (a trace's session, a pool's key).
	lastVal []internedVal

	names []string // interned span names
	vals  []string // interned attribute values

	// Spans in arrival order, in fixed-size chunks that never move: a span's
	// index is its arrival number. Growing one large slice instead would copy
	// (and fault in) every span again at each growth, which costs more than
	// decoding them; sorting a copy would double the memory.
	spans  [][]span
	nspans int32
	attrs  [][]attr // a span's attributes never straddle two chunks
	// Chunks a reset emptied, taken again before new ones are allocated.
	spareSpans [][]span
	spareAttrs [][]attr

	// order lists the distinct spans grouped by trace, by span id within a
	// trace; each trace's range in it is traceRec.first and n.
	order     []int32
	traces    []traceRec
	resources []resource
	resAttrs  []attr

	// Build-time lookup maps. They are dropped when the index is finished
	// (they cost more than the tables they index) and rebuilt by the next Add.
	nameIdx  map[string]int32
	valIdx   map[string]int32
	traceIdx map[pcommon.TraceID]int32
	resIdx   map[string]int32

	keyBuf []byte // scratch space for resource keys
	// reused marks an index that is reset and filled again and again (an
	// engine shard's finalizations): finish keeps its lookup maps and its
	// order's memory for the next round instead of dropping them.
	reused bool
	// lender is the index whose names and vals a scratch index borrows
	// (borrowTraces): reset drops them rather than clearing them, and
	// value lookups go to the lender's map.
	lender *index
	// valLookup answers value -> id once the build-time map is dropped
	// (index_lookup.go).
	valLookup valueLookup

	dirty      bool // spans added since the last finish
	duplicates int  // spans left out as copies of an indexed one, dropped ones included
	// recent is a direct-mapped cache of the (trace, span id) pairs added
	// last: a copy of a span still in it is dropped as it arrives and only
	// counted (dropped), so a dump that repeats the same lines again and
	// again costs no memory per copy. Copies it misses are left out by
	// finish as before; the result is the same either way.
	recent  *[recentSlots]recentSpan
	dropped int
	// noCopyCache turns the duplicate cache off (a speculative engine's
	// shards): finish still leaves every copy out.
	noCopyCache bool

	strBytes int64 // bytes of the interned names and values, for memBytes
	// fastBatches counts the batches of the projection decoders
	// (analyze/ingest) it indexed: tests pin that the CLI's path is the
	// one they exercise.
	fastBatches int
	incomplete  int // traces with a missing parent or a parent cycle

	// layout is the depth-first layout of the parent links (index_tree.go),
	// built on first use after each finish.
	layout *spanTree

	inputs []report.InputReport // set by Load
}

// internedVal is a value and its id in index.vals.
type internedVal struct {
	s  string
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
func (x *index) isRecentCopy(trace int32, id uint64) bool {
	if x.noCopyCache {
		return false
	}
	if x.recent == nil {
		x.recent = new([recentSlots]recentSpan)
	}
	h := (id ^ uint64(trace)*0x9e3779b97f4a7c15) * 0xff51afd7ed558ccd
	slot := &x.recent[h>>(64-recentBits)]
	if slot.id == id && slot.trace == trace+1 {
		x.dropped++
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

// newIndex returns an empty index keeping the vocabulary's attributes plus
// those opts names.
func newIndex(opts rulefmt.IndexOptions) *index {
	x := &index{keyID: make(map[string]uint16)}
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
	x.vals = []string{"false", "true"} // AsString of the two booleans, ids 0 and 1
	return x
}

// addKey registers key as kept on spans or on resources.
func (x *index) addKey(key string, onResource bool) {
	if key == "" {
		return
	}
	id, ok := x.keyID[key]
	if !ok {
		if len(x.keys) >= 1<<16-1 {
			return // beyond any sane configuration; the key is simply not kept
		}
		id = uint16(len(x.keys))
		x.keys = append(x.keys, key)
		x.keyID[key] = id
		x.spanKeyOK = append(x.spanKeyOK, false)
		x.resKeyOK = append(x.resKeyOK, false)
		x.lastVal = append(x.lastVal, internedVal{id: -1})
		if len(key) <= maxKeyLen {
			x.keysByLen[len(key)] = append(x.keysByLen[len(key)], id)
		}
	}
	if onResource {
		x.resKeyOK[id] = true
	} else {
		x.spanKeyOK[id] = true
	}
}

// matchKey returns the id of a kept key k, on the ingest path.
func (x *index) matchKey(k string) (uint16, bool) {
	if len(k) > maxKeyLen {
		id, ok := x.keyID[k]
		return id, ok
	}
	for _, id := range x.keysByLen[len(k)] {
		if x.keys[id] == k {
			return id, true
		}
	}
	return 0, false
}

// lookupKey returns the id of a kept key.
func (x *index) lookupKey(key string) (uint16, bool) {
	id, ok := x.keyID[key]
	return id, ok
}

// Add indexes every span of td. It copies what it keeps, so td may be reused
// or dropped afterwards. Spans already in the index (same trace and span id)
// are counted once.
func (x *index) Add(td ptrace.Traces) {
	x.addPart(td, 0, 1)
}

// addPart indexes the spans of td whose trace belongs to part of nparts
// (shardOf): the engine's shards each take their part of every batch.
// Resources are interned when a kept span first needs them.
func (x *index) addPart(td ptrace.Traces, part, nparts int) {
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
					if keep = nparts <= 1 || shardOf(tid, nparts) == part; keep {
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

// shardOf returns the part of nparts that trace id belongs to. Both halves
// of the id go through MurmurHash3's 64-bit finalizer, in which every input
// bit moves every output bit: ids are not always random (a generator's
// counter, a timestamp prefix, a constant half), and a hash that reads only
// some bits sent every trace of such a dump to one shard (the benchmark
// dumps of internal/tracegen, whose ids count up in their last bytes, ran
// on one shard of two). The part is the hash's high bits scaled to nparts.
func shardOf(id pcommon.TraceID, nparts int) int {
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
func (x *index) addFast(b *ingest.Batch) {
	x.addFastPart(b, 0, 1)
}

// addFastPart indexes the spans of b in part of nparts as addPart does:
// resources interned in order of first use, then each span through the
// same newSpan, keepSpanAttr and appendSpan steps addSpan takes.
func (x *index) addFastPart(b *ingest.Batch, part, nparts int) {
	x.fastBatches++
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
			if keep = nparts <= 1 || shardOf(fs.TraceID, nparts) == part; keep {
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
			for _, a := range b.ResourceAttrs(r) {
				if id, ok := x.keepResAttr(start, a.Key); ok {
					x.resAttrs = append(x.resAttrs, attr{key: id, val: x.internFastValue(id, a, false)})
				}
			}
			res[fs.Resource] = x.endResource(start)
		}
		s, ok := x.newSpan(int64(fs.Start), int64(fs.End), fs.SpanID, fs.ParentSpanID, lastTraceIdx, fs.Name, res[fs.Resource], fs.Kind, fs.Status)
		if !ok {
			return
		}
		if x.isRecentCopy(s.trace, s.id) {
			continue
		}
		for _, a := range b.SpanAttrs(fs) {
			if id, ok := x.keepSpanAttr(&s, a.Key); ok {
				x.putSpanAttr(&s, id, x.internFastValue(id, a, true))
			}
		}
		x.appendSpan(s)
	}
}

// internFastValue interns a fast-path attribute value as internKeyValue
// (onSpan) or internValue interns the same pdata value.
func (x *index) internFastValue(key uint16, a ingest.Attr, onSpan bool) int32 {
	switch a.Type {
	case pcommon.ValueTypeStr:
		if onSpan {
			return x.internKeyStr(key, a.Str)
		}
		return x.internString(a.Str)
	case pcommon.ValueTypeBool:
		return boolVal(a.Bool)
	default: // pcommon.ValueTypeInt: the fast path keeps no other type
		return x.internString(strconv.FormatInt(a.Int, 10))
	}
}

// addSpan appends one span's retained record.
func (x *index) addSpan(sp ptrace.Span, trace, res int32) {
	s, ok := x.newSpan(int64(sp.StartTimestamp()), int64(sp.EndTimestamp()), sp.SpanID(), sp.ParentSpanID(),
		trace, sp.Name(), res, uint8(sp.Kind()), uint8(sp.Status().Code()))
	if !ok || x.isRecentCopy(s.trace, s.id) {
		return
	}
	for k, v := range sp.Attributes().All() {
		if id, ok := x.keepSpanAttr(&s, k); ok {
			x.putSpanAttr(&s, id, x.internKeyValue(id, v))
		}
	}
	x.appendSpan(s)
}

// newSpan starts the record of a span, its attributes to be added with
// putSpanAttr at the end of the attribute table's last chunk, which it
// makes room in. It reports false when the index is full.
func (x *index) newSpan(start, end int64, sid, pid pcommon.SpanID, trace int32, name string, res int32, kind, status uint8) (span, bool) {
	if x.nspans == math.MaxInt32 {
		return span{}, false // 2 billion spans: beyond what an int32 index can number
	}
	ci := x.attrRoom()
	s := span{
		start:    start,
		end:      end,
		id:       binary.BigEndian.Uint64(sid[:]),
		parentID: binary.BigEndian.Uint64(pid[:]),
		trace:    trace,
		name:     x.internName(name),
		res:      res,
		attrs:    int32(ci<<attrChunkBits | len(x.attrs[ci])),
		parent:   parentNone,
		kind:     kind,
		status:   status,
	}
	if s.end < s.start {
		s.end = s.start // a clock-skewed span lasts zero, not a negative time
	}
	return s, true
}

// keepSpanAttr returns the key id of attribute key k when s keeps it: a
// kept span key, not yet on s (a malformed span may repeat a key; the
// first one wins), and room left.
func (x *index) keepSpanAttr(s *span, k string) (uint16, bool) {
	id, ok := x.matchKey(k)
	if !ok || !x.spanKeyOK[id] || s.nattrs == maxSpanAttrs || hasKey(x.attrsOf(s), id) {
		return 0, false
	}
	return id, true
}

// attrRoom makes room for a span's attributes at the end of the attribute
// table's last chunk, starting a chunk (a spare one when reset left some)
// when it has not maxSpanAttrs left, and returns that chunk's index.
func (x *index) attrRoom() int {
	if n := len(x.attrs); n == 0 || cap(x.attrs[n-1])-len(x.attrs[n-1]) < maxSpanAttrs {
		x.attrs = append(x.attrs, nextChunk(&x.spareAttrs, attrChunk))
	}
	return len(x.attrs) - 1
}

// nextChunk returns an empty chunk for a table: a spare one reset left,
// else a new one of capacity size.
func nextChunk[T any](spare *[][]T, size int) []T {
	if k := len(*spare); k > 0 {
		c := (*spare)[k-1]
		*spare = (*spare)[:k-1]
		return c
	}
	return make([]T, 0, size)
}

// putSpanAttr adds an attribute to s, the span newSpan started last.
func (x *index) putSpanAttr(s *span, key uint16, val int32) {
	ci := s.attrs >> attrChunkBits
	x.attrs[ci] = append(x.attrs[ci], attr{key: key, val: val})
	s.nattrs++
}

// appendSpan stores the span newSpan started.
func (x *index) appendSpan(s span) {
	if n := len(x.spans); n == 0 || len(x.spans[n-1]) == cap(x.spans[n-1]) {
		x.spans = append(x.spans, nextChunk(&x.spareSpans, spanChunk))
	}
	x.spans[len(x.spans)-1] = append(x.spans[len(x.spans)-1], s)
	x.nspans++
	x.dirty = true
}

// hasKey reports whether attrs holds key (a malformed span may repeat a
// key; the first one wins).
func hasKey(attrs []attr, key uint16) bool {
	for _, a := range attrs {
		if a.key == key {
			return true
		}
	}
	return false
}

// sp returns span i.
func (x *index) sp(i int32) *span {
	return &x.spans[i>>spanChunkBits][i&(spanChunk-1)]
}

// attrsOf returns the attributes of s.
func (x *index) attrsOf(s *span) []attr {
	off := s.attrs & (attrChunk - 1)
	return x.attrs[s.attrs>>attrChunkBits][off : off+int32(s.nattrs)]
}

// ensureMaps rebuilds the build-time maps a finished index dropped.
func (x *index) ensureMaps() {
	if x.nameIdx != nil {
		return
	}
	x.nameIdx = make(map[string]int32, len(x.names))
	x.valIdx = make(map[string]int32, len(x.vals))
	if x.lender == nil { // a borrower interns nothing
		for i, n := range x.names {
			x.nameIdx[n] = int32(i)
		}
		for i, v := range x.vals {
			x.valIdx[v] = int32(i)
		}
	}
	x.traceIdx = make(map[pcommon.TraceID]int32, len(x.traces))
	for i, t := range x.traces {
		x.traceIdx[t.id] = int32(i)
	}
	x.resIdx = make(map[string]int32, len(x.resources))
	for i := range x.resources {
		x.resIdx[x.resourceKey(int32(i))] = int32(i)
	}
}

func (x *index) internName(s string) int32 {
	if id, ok := x.nameIdx[s]; ok {
		return id
	}
	id := int32(len(x.names))
	x.strBytes += int64(len(s))
	s = strings.Clone(s) // never retain a slice of a decoder's buffer
	x.names = append(x.names, s)
	x.nameIdx[s] = id
	return id
}

func (x *index) internString(s string) int32 {
	if id, ok := x.valIdx[s]; ok {
		return id
	}
	id := int32(len(x.vals))
	x.strBytes += int64(len(s))
	s = strings.Clone(s)
	x.vals = append(x.vals, s)
	x.valIdx[s] = id
	return id
}

// internKeyValue interns the value v of key, trying the key's last value
// first.
func (x *index) internKeyValue(key uint16, v pcommon.Value) int32 {
	if v.Type() != pcommon.ValueTypeStr {
		return x.internValue(v)
	}
	return x.internKeyStr(key, v.Str())
}

// internKeyStr interns the string value s of key, trying the key's last
// value first.
func (x *index) internKeyStr(key uint16, s string) int32 {
	if last := &x.lastVal[key]; last.id >= 0 && last.s == s {
		return last.id
	}
	id := x.internString(s)
	x.lastVal[key] = internedVal{s: x.vals[id], id: id}
	return id
}

// internValue interns v's AsString text without formatting the common
// scalar types through a temporary string where it can be avoided.
func (x *index) internValue(v pcommon.Value) int32 {
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
			return x.internString(tooDeepValue)
		}
		return x.internString(v.AsString())
	default:
		return x.internString(v.AsString())
	}
}

// tooDeepValue is the text an index keeps for an array or map attribute
// value nested deeper than ingest.MaxDepth, which it does not encode.
var tooDeepValue = fmt.Sprintf("<a value nested more than %d deep>", ingest.MaxDepth)

func (x *index) internTrace(id pcommon.TraceID) int32 {
	if i, ok := x.traceIdx[id]; ok {
		return i
	}
	i := int32(len(x.traces))
	x.traces = append(x.traces, traceRec{id: id})
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
func (x *index) internResource(m pcommon.Map) int32 {
	start := x.beginResource()
	for k, v := range m.All() {
		if id, ok := x.keepResAttr(start, k); ok {
			x.resAttrs = append(x.resAttrs, attr{key: id, val: x.internValue(v)})
		}
	}
	return x.endResource(start)
}

// beginResource starts gathering a resource's kept attributes at the end
// of resAttrs; endResource interns them.
func (x *index) beginResource() int32 {
	return int32(len(x.resAttrs))
}

// keepResAttr returns the key id of attribute key k when the resource
// begun at start keeps it: a kept resource key, not yet gathered (the
// first of a repeated key wins), and room left.
func (x *index) keepResAttr(start int32, k string) (uint16, bool) {
	id, ok := x.matchKey(k)
	if !ok || !x.resKeyOK[id] || len(x.resAttrs)-int(start) == 255 {
		return 0, false
	}
	for _, a := range x.resAttrs[start:] {
		if a.key == id {
			return 0, false
		}
	}
	return id, true
}

// endResource returns the id of the resource whose attributes were
// gathered from start, sharing an existing one with the same attributes.
func (x *index) endResource(start int32) int32 {
	added := x.resAttrs[start:]
	slices.SortFunc(added, func(a, b attr) int { return int(a.key) - int(b.key) })
	x.keyBuf = appendResourceKey(x.keyBuf[:0], added)
	if id, ok := x.resIdx[string(x.keyBuf)]; ok { // no allocation for a known resource
		x.resAttrs = x.resAttrs[:start]
		return id
	}
	id := int32(len(x.resources))
	x.resources = append(x.resources, resource{attrs: start, n: uint8(len(added))})
	x.resIdx[string(x.keyBuf)] = id
	return id
}

// resourceKey is the canonical map key of resource r: its sorted pairs.
func (x *index) resourceKey(r int32) string {
	res := x.resources[r]
	return string(appendResourceKey(nil, x.resAttrs[res.attrs:res.attrs+int32(res.n)]))
}

// appendResourceKey appends the key of sorted resource attributes to b.
func appendResourceKey(b []byte, attrs []attr) []byte {
	for _, a := range attrs {
		b = binary.LittleEndian.AppendUint16(b, a.key)
		b = binary.LittleEndian.AppendUint32(b, uint32(a.val))
	}
	return b
}

// finish groups spans by trace, leaves duplicates out, resolves parent
// links and marks incomplete traces. Every query calls it; it does nothing
// when no span was added since the last call, and starts over otherwise, so
// spans may keep arriving between queries.
func (x *index) finish() {
	if !x.dirty {
		return
	}
	x.dirty = false
	x.layout = nil
	order, offsets := x.orderByTrace()
	x.dropDuplicates(order, offsets)
	x.linkParents()

	// The lookup maps cost more than the tables; the next Add rebuilds them.
	// So does the duplicate cache (64 KiB): a copy arriving after a query
	// is still left out here, by the sort.
	if !x.reused {
		x.nameIdx, x.valIdx, x.traceIdx, x.resIdx = nil, nil, nil, nil
		x.recent = nil
	}
}

// orderByTrace returns the span indexes grouped by trace, in arrival order
// within each (trace t's are order[offsets[t]:offsets[t+1]]): a counting
// sort, linear in the spans where a sort on the trace would not be. A
// reused index fills its previous order's memory.
func (x *index) orderByTrace() (order, offsets []int32) {
	nt := len(x.traces)
	offsets = make([]int32, nt+1)
	for _, c := range x.spans {
		for i := range c {
			offsets[c[i].trace+1]++
		}
	}
	for t := range nt {
		offsets[t+1] += offsets[t]
	}
	if x.reused && cap(x.order) >= int(x.nspans) {
		order = x.order[:x.nspans]
	} else {
		order = make([]int32, x.nspans)
	}
	next := slices.Clone(offsets[:nt])
	var i int32
	for _, c := range x.spans {
		for k := range c {
			t := c[k].trace
			order[next[t]] = i
			next[t]++
			i++
		}
	}
	return order, offsets
}

// dropDuplicates orders each trace's spans of order (grouped by
// orderByTrace) by span id, stable so the first copy of a duplicate comes
// first, and leaves the later copies out, in place: the result is x.order,
// each trace's range of it set, and x.duplicates counts the copies.
func (x *index) dropDuplicates(order, offsets []int32) {
	kept := order[:0]
	x.duplicates = x.dropped
	for t := range x.traces {
		group := order[offsets[t]:offsets[t+1]]
		slices.SortStableFunc(group, func(a, b int32) int { return cmpUint64(x.sp(a).id, x.sp(b).id) })
		first := int32(len(kept))
		var prev uint64
		for k, si := range group {
			s := x.sp(si)
			s.dup = k > 0 && s.id == prev
			if s.dup {
				x.duplicates++
				continue
			}
			prev = s.id
			kept = append(kept, si) // writes never overtake the read position
		}
		x.traces[t].first, x.traces[t].n = first, int32(len(kept))-first
	}
	x.order = kept
	if !x.reused {
		x.order = slices.Clip(kept)
	}
}

// reset empties x for another round with the same options, keeping the
// memory it grew: its span and attribute chunks (as spares), its tables and
// its lookup maps. Filling a fresh index each time instead costs a
// megabyte of chunks to clear and the maps to grow again, per round. It
// marks x reused (see the field).
func (x *index) reset() {
	x.reused = true
	for _, c := range x.spans {
		x.spareSpans = append(x.spareSpans, c[:0])
	}
	for _, c := range x.attrs {
		x.spareAttrs = append(x.spareAttrs, c[:0])
	}
	clear(x.spans)
	clear(x.attrs)
	x.spans, x.attrs, x.nspans = x.spans[:0], x.attrs[:0], 0
	for i := range x.lastVal {
		x.lastVal[i] = internedVal{id: -1}
	}
	if x.lender != nil {
		x.names, x.vals, x.lender = nil, []string{"false", "true"}, nil
	} else {
		clear(x.names)
		clear(x.vals[2:]) // newIndex's "false" and "true" stay
		x.names, x.vals = x.names[:0], x.vals[:2]
	}
	x.order, x.traces = x.order[:0], x.traces[:0]
	x.resources, x.resAttrs = x.resources[:0], x.resAttrs[:0]
	if x.nameIdx != nil {
		clear(x.nameIdx)
		clear(x.valIdx)
		clear(x.traceIdx)
		clear(x.resIdx)
		for i, v := range x.vals {
			x.valIdx[v] = int32(i)
		}
	}
	if x.recent != nil {
		*x.recent = [recentSlots]recentSpan{}
	}
	x.dirty, x.duplicates, x.dropped, x.strBytes = false, 0, 0, 0
	x.fastBatches, x.incomplete, x.layout, x.inputs = 0, 0, nil, nil
}

// linkParents resolves every parent id to a span index within its trace and
// marks traces with a missing parent, or a parent cycle, incomplete. A cycle
// is broken at the span that closes it so ancestor walks always end.
func (x *index) linkParents() {
	x.incomplete = 0
	state := make([]uint8, len(x.order)) // breakCycles' walk state, per position in order
	var path []int32
	for t := range x.traces {
		tr := &x.traces[t]
		tr.incomplete = false
		group := x.order[tr.first : tr.first+tr.n]
		for _, si := range group {
			s := x.sp(si)
			switch {
			case s.parentID == 0:
				s.parent = parentNone
			case s.parentID == s.id:
				s.parent = parentMissing
				tr.incomplete = true
			default:
				j, found := slices.BinarySearchFunc(group, s.parentID, func(c int32, id uint64) int { return cmpUint64(x.sp(c).id, id) })
				if found {
					s.parent = group[j]
				} else {
					s.parent = parentMissing
					tr.incomplete = true
				}
			}
		}
		var cut bool
		if path, cut = x.breakCycles(group, state[tr.first:tr.first+tr.n], path); cut {
			tr.incomplete = true
		}
		if tr.incomplete {
			x.incomplete++
		}
	}
}

// breakCycles walks every span of one trace (group, sorted by span id) up
// to its root, remembering in state the spans already proven to reach a
// root, and cuts the parent link of any span whose walk comes back to
// itself. It reports whether it cut one; path is scratch space, returned for
// reuse.
func (x *index) breakCycles(group []int32, state []uint8, path []int32) ([]int32, bool) {
	const (
		unseen = iota
		walking
		done
	)
	pos := func(si int32) int {
		j, _ := slices.BinarySearchFunc(group, x.sp(si).id, func(c int32, id uint64) int { return cmpUint64(x.sp(c).id, id) })
		return j
	}
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
				x.sp(group[j]).parent = parentMissing
				cut = true
				break
			}
			state[j] = walking
			path = append(path, int32(j))
			p := x.sp(group[j]).parent
			if p < 0 {
				break
			}
			j = pos(p)
		}
		for _, k := range path {
			state[k] = done
		}
	}
	return path, cut
}

// cmpSpans orders two spans by trace id, then span id: an order that does
// not depend on the order the spans arrived in.
func (x *index) cmpSpans(a, b int32) int {
	sa, sb := x.sp(a), x.sp(b)
	if sa.trace != sb.trace {
		ta, tb := x.traces[sa.trace].id, x.traces[sb.trace].id
		return bytes.Compare(ta[:], tb[:])
	}
	return cmpUint64(sa.id, sb.id)
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

// memBytes estimates the memory the index holds: its chunks, tables and
// interned strings, with the build-time maps that index them (about as
// much again for the traces and strings). Load checks it against the
// memory budget after every batch.
func (x *index) memBytes() int64 {
	n := int64(len(x.spans)) * spanChunk * int64(unsafe.Sizeof(span{}))
	n += int64(len(x.attrs)) * attrChunk * int64(unsafe.Sizeof(attr{}))
	n += int64(cap(x.traces)) * int64(unsafe.Sizeof(traceRec{})) * 2
	n += 2 * (x.strBytes + int64(len(x.names)+len(x.vals))*int64(unsafe.Sizeof("")))
	return n
}

// Spans returns the number of distinct spans indexed.
func (x *index) Spans() int {
	x.finish()
	return len(x.order)
}

// Traces returns the number of distinct traces indexed.
func (x *index) Traces() int {
	x.finish()
	return len(x.traces)
}

// IncompleteTraces returns the number of traces with a span whose parent is
// absent from the dump: a process that had not exported yet, or a lost batch.
func (x *index) IncompleteTraces() int {
	x.finish()
	return x.incomplete
}

// Duplicates returns the number of spans left out because a span with the
// same trace and span id was already indexed.
func (x *index) Duplicates() int {
	x.finish()
	return x.duplicates
}

// Window returns the earliest span start and the latest span end, and false
// when the index is empty. Times are UTC.
func (x *index) Window() (start, end time.Time, ok bool) {
	x.finish()
	if len(x.order) == 0 {
		return time.Time{}, time.Time{}, false
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, c := range x.spans {
		for i := range c {
			lo = min(lo, c[i].start)
			hi = max(hi, c[i].end)
		}
	}
	return time.Unix(0, lo).UTC(), time.Unix(0, hi).UTC(), true
}

// Inputs returns what Load read into the index, one entry per input, in
// input order; nil for an index built with Add alone.
func (x *index) Inputs() []report.InputReport {
	return slices.Clone(x.inputs)
}

// --- queries used by measures and selectors (the index must be finished) ---

// attrVal returns the interned value of a kept span attribute.
func (x *index) attrVal(i int32, key uint16) (int32, bool) {
	for _, a := range x.attrsOf(x.sp(i)) {
		if a.key == key {
			return a.val, true
		}
	}
	return 0, false
}

// resAttrVal returns the interned value of a kept resource attribute of the
// span's resource.
func (x *index) resAttrVal(i int32, key uint16) (int32, bool) {
	r := x.resources[x.sp(i).res]
	for _, a := range x.resAttrs[r.attrs : r.attrs+int32(r.n)] {
		if a.key == key {
			return a.val, true
		}
	}
	return 0, false
}

// traceID returns the hex trace id of trace t.
func (x *index) traceID(t int32) string {
	return x.traces[t].id.String()
}

// valueID returns the id of an interned value, or -1 when no span carries it.
func (x *index) valueID(v string) int32 {
	if x.lender != nil {
		return x.lender.valueID(v)
	}
	if x.valIdx != nil {
		if id, ok := x.valIdx[v]; ok {
			return id
		}
		return -1
	}
	for i, s := range x.vals {
		if s == v {
			return int32(i)
		}
	}
	return -1
}
