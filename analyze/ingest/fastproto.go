package ingest

import (
	"encoding/binary"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf projection decoder.
//
// Like the JSON lines fast path (fastjson.go), it decodes one OTLP
// ExportTraceServiceRequest record straight into a Batch: ids, name, kind,
// times, status code and the kept span and resource attributes, nothing
// else. It walks the wire format with protowire and never builds what it
// skips (scopes, the values of attributes no one keeps, trace states).
//
// What it accepts, pdata's ProtoUnmarshaler accepts too and reads the same
// way: every field pdata parses is checked as pdata checks it (the wire
// type of each known field, id lengths, the structure of every nested
// message down to the attribute values it skips), repeated scalar fields
// are last-wins and a repeated status merges, as in pdata. Fields pdata
// does not know are skipped as it skips them. It gives up on the record
// (the caller then decodes it with pdata, which also produces the exact
// error of a malformed record) on anything unusual: a malformed field, a
// group, events or links, an enum value OTLP does not define, a repeated resource, the deprecated
// instrumentation_library_spans (field 1000), string-table indexes, values
// nested deeper than maxProtoDepth, a kept attribute whose value is not a
// string, bool or int, or a record without spans.
// FuzzFastOTLPProtoMatchesPdata (in analyze) pins the equivalence.

// maxProtoDepth bounds how deep nested array and map values are walked;
// a record with deeper ones goes to the pdata path, where cutProto
// (depth.go) cuts what is past MaxDepth. It is where the fast path gives up,
// not a limit on the input: it must stay below MaxDepth.
const maxProtoDepth = 16

// Field numbers of the OTLP trace messages (opentelemetry-proto's
// trace/v1/trace.proto and common/v1/common.proto).
const (
	fieldRequestResourceSpans = 1

	fieldRSResource          = 1
	fieldRSScopeSpans        = 2
	fieldRSSchemaURL         = 3
	fieldRSDeprecatedScopes  = 1000
	fieldResourceAttributes  = 1
	fieldResourceDropped     = 2
	fieldResourceEntityRefs  = 3
	fieldSSScope             = 1
	fieldSSSpans             = 2
	fieldSSSchemaURL         = 3
	fieldScopeName           = 1
	fieldScopeVersion        = 2
	fieldScopeAttributes     = 3
	fieldScopeDropped        = 4
	fieldSpanTraceID         = 1
	fieldSpanSpanID          = 2
	fieldSpanTraceState      = 3
	fieldSpanParentSpanID    = 4
	fieldSpanName            = 5
	fieldSpanKind            = 6
	fieldSpanStart           = 7
	fieldSpanEnd             = 8
	fieldSpanAttributes      = 9
	fieldSpanDroppedAttrs    = 10
	fieldSpanEvents          = 11
	fieldSpanDroppedEvents   = 12
	fieldSpanLinks           = 13
	fieldSpanDroppedLinks    = 14
	fieldSpanStatus          = 15
	fieldSpanFlags           = 16
	fieldStatusMessage       = 2
	fieldStatusCode          = 3
	fieldKVKey               = 1
	fieldKVValue             = 2
	fieldKVKeyStrindex       = 3
	fieldValueString         = 1
	fieldValueBool           = 2
	fieldValueInt            = 3
	fieldValueDouble         = 4
	fieldValueArray          = 5
	fieldValueKVList         = 6
	fieldValueBytes          = 7
	fieldValueStringStrindex = 8
	fieldArrayValues         = 1
	fieldKVListValues        = 1

	// The largest enum values OTLP defines (SPAN_KIND_CONSUMER,
	// STATUS_CODE_ERROR): the JSON fast path takes no others either.
	maxSpanKind   = 5
	maxStatusCode = 2
)

// decodeFastProto decodes one ExportTraceServiceRequest record keeping
// what keep names, and reports false when the record is not in the shape
// it handles (the caller then decodes it with pdata).
func decodeFastProto(data []byte, keep *keepSet) (*Batch, bool) {
	c := stringCaches.Get().(*stringCache)
	defer stringCaches.Put(c)
	d := protoDec{keep: keep, out: getBatch(), strs: c}
	if !d.request(data) || len(d.out.Spans) == 0 {
		putBatch(d.out)
		return nil, false
	}
	return d.out, true
}

// protoDec is the state of one decode. Every method returns false to give
// up on the record.
type protoDec struct {
	keep *keepSet
	out  *Batch
	strs *stringCache
	// attrs is where the kept attributes of the span or resource being
	// read start in out.Attrs: keyValue appends them there as it reads
	// them (a record given up drops the whole batch).
	attrs int32
}

// protoValue is one AnyValue as far as the decoder reads it.
type protoValue struct {
	typ pcommon.ValueType
	s   []byte // points into the record
	i   int64
	b   bool
}

// protoField is one field of a message.
type protoField struct {
	num protowire.Number
	typ protowire.Type
	v   uint64 // a varint, fixed32 or fixed64 value
	b   []byte // a length-delimited value
}

// fieldIter walks the fields of one message: for it.next() { use it.f }
// then !it.bad. A loop over it costs no closure call per field, which
// matters: a span is a few dozen fields.
type fieldIter struct {
	b   []byte
	f   protoField
	bad bool // a malformed field or a group ended the walk
}

// next reads the next field into it.f. Nearly every field OTLP writes has
// a one-byte tag (field numbers below 16) and is length-delimited with a
// one- or two-byte length (a span in its scope's list is longer than 127
// bytes), a fixed64 (a span's times) or a one-byte varint (its kind):
// those are read here, the rest by protowire.
func (it *fieldIter) next() bool {
	b := it.b
	if len(b) == 0 {
		return false
	}
	if tag := b[0]; tag < 0x80 && tag>>3 != 0 && len(b) >= 2 {
		f := &it.f
		switch typ := protowire.Type(tag & 7); {
		case typ == protowire.BytesType && b[1] < 0x80:
			return it.take(b, tag, 2, int(b[1]))
		case typ == protowire.BytesType && len(b) >= 3 && b[2] < 0x80:
			return it.take(b, tag, 3, int(b[1]&0x7f)|int(b[2])<<7)
		case typ == protowire.Fixed64Type && len(b) >= 9:
			f.num, f.typ, f.v = protowire.Number(tag>>3), typ, binary.LittleEndian.Uint64(b[1:])
			it.b = b[9:]
			return true
		case typ == protowire.VarintType && b[1] < 0x80:
			f.num, f.typ, f.v = protowire.Number(tag>>3), typ, uint64(b[1])
			it.b = b[2:]
			return true
		}
	}
	return it.nextSlow()
}

// take reads the length-delimited field of tag whose n bytes start at
// b[at], after its tag and length; b is it.b.
func (it *fieldIter) take(b []byte, tag byte, at, n int) bool {
	end := at + n
	if end > len(b) {
		it.bad = true
		return false
	}
	it.f.num, it.f.typ, it.f.b = protowire.Number(tag>>3), protowire.BytesType, b[at:end]
	it.b = b[end:]
	return true
}

// nextSlow reads any other field with protowire.
func (it *fieldIter) nextSlow() bool {
	b := it.b
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		it.bad = true
		return false
	}
	rest := b[n:]
	var m int
	f := &it.f
	f.num, f.typ = num, typ
	switch typ {
	case protowire.VarintType:
		f.v, m = protowire.ConsumeVarint(rest)
	case protowire.Fixed64Type:
		f.v, m = protowire.ConsumeFixed64(rest)
	case protowire.Fixed32Type:
		var v uint32
		v, m = protowire.ConsumeFixed32(rest)
		f.v = uint64(v)
	case protowire.BytesType:
		f.b, m = protowire.ConsumeBytes(rest)
	default:
		m = -1 // groups (never written by OTLP exporters) are left to pdata
	}
	if m < 0 {
		it.bad = true
		return false
	}
	it.b = rest[m:]
	return true
}

// is reports whether f has wire type t: a known field of another wire type
// is an error in pdata, so the decoder gives up.
func (f *protoField) is(t protowire.Type) bool { return f.typ == t }

func (d *protoDec) request(msg []byte) bool {
	it := fieldIter{b: msg}
	for it.next() {
		if f := &it.f; f.num == fieldRequestResourceSpans {
			if !f.is(protowire.BytesType) || !d.resourceSpans(f.b) {
				return false
			}
		} // unknown: skipped, as pdata skips it
	}
	return !it.bad
}

func (d *protoDec) resourceSpans(msg []byte) bool {
	r := int32(len(d.out.Resources))
	d.out.Resources = append(d.out.Resources, Resource{Attrs: int32(len(d.out.Attrs))})
	seenResource := false
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldRSResource:
			// A repeated resource merges in pdata: rare, left to it.
			ok = f.is(protowire.BytesType) && !seenResource && d.resource(f.b, r)
			seenResource = true
		case fieldRSScopeSpans:
			ok = f.is(protowire.BytesType) && d.scopeSpans(f.b, r)
		case fieldRSSchemaURL:
			ok = f.is(protowire.BytesType)
		case fieldRSDeprecatedScopes:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

func (d *protoDec) resource(msg []byte, r int32) bool {
	d.attrs = int32(len(d.out.Attrs))
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldResourceAttributes:
			ok = d.keyValueField(f, &d.keep.res)
		case fieldResourceDropped:
			ok = f.is(protowire.VarintType)
		case fieldResourceEntityRefs:
			ok = false
		}
		if !ok {
			return false
		}
	}
	if it.bad {
		return false
	}
	start, n := d.keptRange()
	d.out.Resources[r] = Resource{Attrs: start, N: n}
	return true
}

func (d *protoDec) scopeSpans(msg []byte, r int32) bool {
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldSSScope:
			ok = f.is(protowire.BytesType) && d.scope(f.b)
		case fieldSSSpans:
			ok = f.is(protowire.BytesType) && d.span(f.b, r)
		case fieldSSSchemaURL:
			ok = f.is(protowire.BytesType)
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// scope checks an InstrumentationScope; nothing of it is kept.
func (d *protoDec) scope(msg []byte) bool {
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldScopeName, fieldScopeVersion:
			ok = f.is(protowire.BytesType)
		case fieldScopeAttributes:
			ok = d.keyValueField(f, nil)
		case fieldScopeDropped:
			ok = f.is(protowire.VarintType)
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// span reads one span into the batch. The fields exporters write for every
// span are read in the switch here, inline in the loop over its fields; the
// rest (ones they omit when empty) by spanRare.
func (d *protoDec) span(msg []byte, r int32) bool {
	sp := d.out.newSpan(r)
	d.attrs = int32(len(d.out.Attrs))
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		var ok bool
		switch f.num {
		case fieldSpanTraceID:
			ok = f.id(sp.TraceID[:])
		case fieldSpanSpanID:
			ok = f.id(sp.SpanID[:])
		case fieldSpanParentSpanID:
			ok = f.id(sp.ParentSpanID[:])
		case fieldSpanName:
			ok = f.is(protowire.BytesType)
			sp.Name = d.strs.str(f.b)
		case fieldSpanKind:
			// An unknown kind is left to pdata.
			ok = f.enum(maxSpanKind)
			sp.Kind = uint8(f.v)
		case fieldSpanStart:
			ok = f.is(protowire.Fixed64Type)
			sp.Start = f.v
		case fieldSpanEnd:
			ok = f.is(protowire.Fixed64Type)
			sp.End = f.v
		case fieldSpanAttributes:
			ok = d.keyValueField(f, &d.keep.span)
		case fieldSpanStatus:
			ok = f.is(protowire.BytesType) && d.status(f.b, sp)
		default:
			ok = spanRare(f)
		}
		if !ok {
			return false
		}
	}
	if it.bad {
		return false
	}
	sp.Attrs, sp.N = d.keptRange()
	return true
}

// spanRare checks the span fields span leaves out of its switch, none of
// them kept; a field pdata does not know is skipped, as pdata skips it.
func spanRare(f *protoField) bool {
	switch f.num {
	case fieldSpanTraceState:
		return f.is(protowire.BytesType)
	case fieldSpanDroppedAttrs, fieldSpanDroppedEvents, fieldSpanDroppedLinks:
		return f.is(protowire.VarintType)
	case fieldSpanEvents, fieldSpanLinks:
		return false // not indexed; pdata validates them
	case fieldSpanFlags:
		return f.is(protowire.Fixed32Type)
	}
	return true
}

// id reads an id field into dst (see protoID).
func (f *protoField) id(dst []byte) bool {
	return f.is(protowire.BytesType) && protoID(dst, f.b)
}

// enum reports whether f is an enum value OTLP defines, at most last: the
// decoder leaves others to pdata.
func (f *protoField) enum(last uint64) bool {
	return f.is(protowire.VarintType) && f.v <= last
}

// keyValueField reads an attribute field, as keyValue does.
func (d *protoDec) keyValueField(f *protoField, kept *keyFilter) bool {
	return f.is(protowire.BytesType) && d.keyValue(f.b, kept)
}

// protoID sets dst from an id field: empty is the zero id, as in pdata;
// any other length but the id's is an error there.
func protoID(dst, b []byte) bool {
	switch len(b) {
	case 0:
		clear(dst)
		return true
	case len(dst):
		copy(dst, b)
		return true
	}
	return false
}

// status reads a Status; a repeated status merges into the span's, as in
// pdata: only a code present changes it.
func (d *protoDec) status(msg []byte, sp *Span) bool {
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldStatusMessage:
			ok = f.is(protowire.BytesType)
		case fieldStatusCode:
			ok = f.enum(maxStatusCode)
			sp.Status = uint8(f.v)
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// keyValue reads one attribute; when its key is in kept (nil keeps
// nothing) it appends it to the batch (Batch.newAttr: the first of a
// repeated key only).
func (d *protoDec) keyValue(msg []byte, kept *keyFilter) bool {
	var val protoValue
	key, ok := compactKV(msg, &val)
	if !ok {
		val = protoValue{}
		if !d.kvFields(msg, &key, &val, 0) {
			return false
		}
	}
	k, ok := kept.lookup(key)
	if !ok {
		return true
	}
	switch val.typ {
	case pcommon.ValueTypeStr, pcommon.ValueTypeBool, pcommon.ValueTypeInt:
	default:
		return false // kept: leave other types (and their formatting) to pdata
	}
	attr := d.out.newAttr(d.attrs, k)
	if attr == nil {
		return true
	}
	attr.Type, attr.Bool, attr.Int = val.typ, val.b, val.i
	if val.typ == pcommon.ValueTypeStr {
		attr.Str = d.strs.str(val.s)
	}
	return true
}

// compactKV reads a KeyValue in the shape exporters write: a key (field
// 1) and a value (field 2) holding one string, bool or int, in either order
// (pdata writes the value first), with one-byte lengths. It is kvFields
// unrolled for the shape nearly every attribute has; on anything else it
// reports false and kvFields reads the attribute.
func compactKV(msg []byte, v *protoValue) (key []byte, ok bool) {
	const keyTag, valueTag = 1<<3 | 2, 2<<3 | 2 // fields 1 and 2, length-delimited
	// The two fields' ends, read by offset: splitting msg into slices
	// field by field cost twice the instructions.
	if len(msg) < 4 || msg[1] >= 0x80 {
		return nil, false
	}
	first := 2 + int(msg[1])
	if first+2 > len(msg) || msg[first+1] >= 0x80 || first+2+int(msg[first+1]) != len(msg) {
		return nil, false
	}
	var val []byte
	switch {
	case msg[0] == keyTag && msg[first] == valueTag:
		key, val = msg[2:first], msg[first+2:]
	case msg[0] == valueTag && msg[first] == keyTag:
		val, key = msg[2:first], msg[first+2:]
	default:
		return nil, false
	}
	return key, compactValue(val, v)
}

// compactValue reads an AnyValue of compactKV's shape: one string with a
// one-byte length, one bool or one int, and nothing else.
func compactValue(val []byte, v *protoValue) bool {
	const strTag, boolTag, intTag = 1<<3 | 2, 2 << 3, 3 << 3
	if len(val) < 2 {
		return false
	}
	switch val[0] {
	case strTag:
		if val[1] >= 0x80 || 2+int(val[1]) != len(val) {
			return false
		}
		v.typ, v.s = pcommon.ValueTypeStr, val[2:]
	case boolTag:
		if len(val) != 2 || val[1] >= 0x80 {
			return false
		}
		v.typ, v.b = pcommon.ValueTypeBool, val[1] != 0
	case intTag:
		x, n := protowire.ConsumeVarint(val[1:])
		if n < 0 || 1+n != len(val) {
			return false
		}
		v.typ, v.i = pcommon.ValueTypeInt, int64(x)
	default:
		return false
	}
	return true
}

// kvFields reads a KeyValue's fields: key and value are last-wins, and a
// repeated value merges (its last field wins), as in pdata.
func (d *protoDec) kvFields(msg []byte, key *[]byte, val *protoValue, depth int) bool {
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldKVKey:
			ok = f.is(protowire.BytesType)
			*key = f.b
		case fieldKVValue:
			ok = f.is(protowire.BytesType) && d.value(f.b, val, depth+1)
		case fieldKVKeyStrindex:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// value reads an AnyValue into v; nested arrays and maps are checked, not
// kept.
func (d *protoDec) value(msg []byte, v *protoValue, depth int) bool {
	if depth > maxProtoDepth {
		return false
	}
	it := fieldIter{b: msg}
	for it.next() {
		f := &it.f
		ok := true
		switch f.num {
		case fieldValueString:
			ok = f.is(protowire.BytesType)
			v.typ, v.s = pcommon.ValueTypeStr, f.b
		case fieldValueBool:
			ok = f.is(protowire.VarintType)
			v.typ, v.b = pcommon.ValueTypeBool, f.v != 0
		case fieldValueInt:
			ok = f.is(protowire.VarintType)
			v.typ, v.i = pcommon.ValueTypeInt, int64(f.v)
		case fieldValueDouble:
			ok = f.is(protowire.Fixed64Type)
			v.typ = pcommon.ValueTypeDouble
		case fieldValueArray:
			ok = f.is(protowire.BytesType) && d.array(f.b, depth)
			v.typ = pcommon.ValueTypeSlice
		case fieldValueKVList:
			ok = f.is(protowire.BytesType) && d.kvList(f.b, depth)
			v.typ = pcommon.ValueTypeMap
		case fieldValueBytes:
			ok = f.is(protowire.BytesType)
			v.typ = pcommon.ValueTypeBytes
		case fieldValueStringStrindex:
			ok = false
		}
		if !ok {
			return false
		}
	}
	return !it.bad
}

// array checks an ArrayValue.
func (d *protoDec) array(msg []byte, depth int) bool {
	it := fieldIter{b: msg}
	for it.next() {
		if f := &it.f; f.num == fieldArrayValues {
			var v protoValue
			if !f.is(protowire.BytesType) || !d.value(f.b, &v, depth+1) {
				return false
			}
		}
	}
	return !it.bad
}

// kvList checks a KeyValueList.
func (d *protoDec) kvList(msg []byte, depth int) bool {
	it := fieldIter{b: msg}
	for it.next() {
		if f := &it.f; f.num == fieldKVListValues {
			var key []byte
			var v protoValue
			if !f.is(protowire.BytesType) || !d.kvFields(f.b, &key, &v, depth+1) {
				return false
			}
		}
	}
	return !it.bad
}

// keptRange returns the range of the attributes keyValue appended for
// the span or resource just read.
func (d *protoDec) keptRange() (start, n int32) {
	return d.attrs, int32(len(d.out.Attrs)) - d.attrs
}
