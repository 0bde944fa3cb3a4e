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
// skips (scopes, the values of attributes no one keeps, trace states). A
// span is first read in the order its marshaler wrote its fields
// (spanInOrder), as the JSON path reads a span by the shape of an earlier
// one, and by the general loop over its fields when it is not.
//
// What it accepts, pdata's ProtoUnmarshaler accepts too and reads the same
// way, but for an unknown field written as a group (wire types 3 and 4,
// legal protobuf that Go's protobuf skips and pdata refuses), which it
// skips: every field pdata parses is checked as pdata checks it (the wire
// type of each known field, id lengths, the structure of every nested
// message down to the attribute values it skips), repeated scalar fields
// are last-wins and a repeated status merges, as in pdata. Fields pdata
// does not know are skipped as it skips them. It gives up on the record
// (the caller then decodes it with pdata, which also produces the exact
// error of a malformed record) on anything unusual: a malformed field, a
// group where a known field is, an enum value OTLP does not define, a repeated resource, the deprecated
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
	b, _ := decodeFastProtoCharged(data, keep, nil)
	return b, b != nil
}

// decodeFastProtoCharged is decodeFastProto with the batch charged to the
// job's charge c as it grows, as decodeFastOTLPCharged charges a JSON
// line's: nil and no error when the record is left to pdata, nil and the
// cause when the batch could not grow within the budget.
func decodeFastProtoCharged(data []byte, keep *keepSet, c *jobCharge) (*Batch, error) {
	return decodeCharged(c, keep.room, func(out *Batch, sc *stringCache) bool {
		d := protoDec{keep: keep, out: out, strs: sc}
		return d.request(data)
	})
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
	// inOrderMisses counts the record's spans that were not in a layout
	// spanInOrder reads; at maxInOrderMisses it is not asked again.
	inOrderMisses int
	inOrderTries  int // spans spanInOrder was asked to read, for tests
}

// maxInOrderMisses is how many spans of a record spanInOrder may fail to
// read before the record's other spans go straight to span's loop: a
// writer lays out all its spans alike, but one may carry a field the
// others do not (a trace state, a dropped count), and trying again costs
// little next to reading every span of a record twice.
const maxInOrderMisses = 4

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
	case protowire.StartGroupType:
		// A group: no OTLP field is one, so it is an unknown field
		// (a known one's wire type is checked: protoField.is).
		f.b, m = nil, skipGroup(rest, num)
	default:
		m = -1 // an end of group with no start
	}
	if m < 0 {
		it.bad = true
		return false
	}
	it.b = rest[m:]
	return true
}

// maxGroupDepth bounds how deep groups nested in an unknown group are
// walked: deeper ones make the decoder give up on the record.
const maxGroupDepth = maxProtoDepth

// skipGroup returns the length of the group of field num whose content
// starts at b (after its start tag), up to and with its end tag, or -1
// when it is malformed, ends early, closes with another field's number or
// nests more than maxGroupDepth deep. It walks the nested groups with a
// stack of their numbers, not recursion.
func skipGroup(b []byte, num protowire.Number) int {
	var open [maxGroupDepth]protowire.Number
	open[0] = num
	depth, i := 1, 0
	for depth > 0 {
		n, typ, m := protowire.ConsumeTag(b[i:])
		if m < 0 {
			return -1
		}
		i += m
		switch typ {
		case protowire.StartGroupType:
			if depth == len(open) {
				return -1
			}
			open[depth] = n
			depth++
			continue
		case protowire.EndGroupType:
			if n != open[depth-1] {
				return -1
			}
			depth--
			continue
		}
		if m = protowire.ConsumeFieldValue(n, typ, b[i:]); m < 0 {
			return -1
		}
		i += m
	}
	return i
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
	if !d.out.newResource(Resource{Attrs: int32(len(d.out.Attrs))}) {
		return false
	}
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

// span reads one span into the batch: in the layout marshalers write
// (tryInOrder), else field by field (spanFields). A batch that cannot
// grow for it within the budget gives up (Batch.err says why).
func (d *protoDec) span(msg []byte, r int32) bool {
	sp := d.out.newSpan(r)
	if sp == nil {
		return false
	}
	d.attrs = int32(len(d.out.Attrs))
	if done, ok := d.tryInOrder(msg, sp); done {
		return ok
	}
	return d.spanFields(msg, sp)
}

// spanFields reads span msg into sp field by field, in any order. The
// fields exporters write for every span are read in the switch here,
// inline in the loop over its fields; the rest (ones they omit when
// empty) by spanRare.
func (d *protoDec) spanFields(msg []byte, sp *Span) bool {
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
			ok = d.spanRare(f)
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

// The tags of the span fields spanInOrder reads: field number and wire
// type in one byte, as every exporter writes them.
const (
	tagSpanTraceID  = fieldSpanTraceID<<3 | byte(protowire.BytesType)
	tagSpanSpanID   = fieldSpanSpanID<<3 | byte(protowire.BytesType)
	tagSpanParentID = fieldSpanParentSpanID<<3 | byte(protowire.BytesType)
	tagSpanName     = fieldSpanName<<3 | byte(protowire.BytesType)
	tagSpanKind     = fieldSpanKind<<3 | byte(protowire.VarintType)
	tagSpanStart    = fieldSpanStart<<3 | byte(protowire.Fixed64Type)
	tagSpanEnd      = fieldSpanEnd<<3 | byte(protowire.Fixed64Type)
	tagSpanAttr     = fieldSpanAttributes<<3 | byte(protowire.BytesType)
	tagSpanStatus   = fieldSpanStatus<<3 | byte(protowire.BytesType)
	// The flags' tag takes two bytes (field 16): 0x85 0x01.
	tagSpanFlags = fieldSpanFlags<<3 | byte(protowire.Fixed32Type)
)

// tryInOrder reads span msg into sp with spanInOrder, unless
// maxInOrderMisses spans of the record were in another layout already.
// When it reports done false, span's loop reads the span, and sets
// again, from the same bytes, whatever spanInOrder set of it (a kept
// key's attribute is kept once: Batch.newAttr).
func (d *protoDec) tryInOrder(msg []byte, sp *Span) (done, ok bool) {
	if d.inOrderMisses >= maxInOrderMisses {
		return false, false
	}
	d.inOrderTries++
	if done, ok = d.spanInOrder(msg, sp); !done {
		d.inOrderMisses++
	}
	return done, ok
}

// spanInOrder reads a span laid out as a protobuf marshaler writes one:
// its fields in ascending order (Go's protobuf, the OpenTelemetry SDKs'
// exporters) or in descending order (pdata, so the Collector), each at
// most once but the attributes, which keep their order; ids of their
// full length (a parent's may be empty), a name, a kind OTLP defines,
// lengths of one byte but an attribute's; the flags skipped, as span's
// loop skips them. Comparing each tag with the one expected next costs
// less than span's loop, which reads any field in any order. It reports
// done false at the first byte that is not in either layout, for span's
// loop to read the span; done true with ok the span's verdict otherwise.
func (d *protoDec) spanInOrder(b []byte, sp *Span) (done, ok bool) {
	if len(b) > 0 && b[0] == tagSpanTraceID {
		return d.spanAscending(b, sp)
	}
	return d.spanDescending(b, sp)
}

// spanAscending is spanInOrder for fields in ascending order.
func (d *protoDec) spanAscending(b []byte, sp *Span) (done, ok bool) {
	n := len(b)
	if n < 2+16+2+8 || b[1] != 16 || b[18] != tagSpanSpanID || b[19] != 8 {
		return false, false
	}
	copy(sp.TraceID[:], b[2:18])
	copy(sp.SpanID[:], b[20:28])
	i := parentField(b, 28, sp)
	if i = d.nameField(b, i, sp); i < 0 {
		return false, false
	}
	if i = kindField(b, i, sp); i < 0 {
		return false, false
	}
	i = fixedField(b, i, tagSpanStart, &sp.Start)
	i = fixedField(b, i, tagSpanEnd, &sp.End)
	if i, ok = d.attrsInOrder(b, i); i < 0 || !ok {
		return i >= 0, false
	}
	if i, ok = d.statusField(b, i, sp); !ok {
		return true, false
	}
	if skipFlags(b, i) != n {
		return false, false
	}
	sp.Attrs, sp.N = d.keptRange()
	return true, true
}

// spanDescending is spanInOrder for fields in descending order.
func (d *protoDec) spanDescending(b []byte, sp *Span) (done, ok bool) {
	n := len(b)
	i, ok := d.statusField(b, skipFlags(b, 0), sp)
	if !ok {
		return true, false
	}
	if i, ok = d.attrsInOrder(b, i); i < 0 || !ok {
		return i >= 0, false
	}
	i = fixedField(b, i, tagSpanEnd, &sp.End)
	i = fixedField(b, i, tagSpanStart, &sp.Start)
	if i = kindField(b, i, sp); i < 0 {
		return false, false
	}
	if i = d.nameField(b, i, sp); i < 0 {
		return false, false
	}
	i = parentField(b, i, sp)
	if i+10+18 != n || b[i] != tagSpanSpanID || b[i+1] != 8 || b[i+10] != tagSpanTraceID || b[i+11] != 16 {
		return false, false
	}
	copy(sp.SpanID[:], b[i+2:i+10])
	copy(sp.TraceID[:], b[i+12:i+28])
	sp.Attrs, sp.N = d.keptRange()
	return true, true
}

// parentField reads the parent span id at b[i] into sp when it is there,
// eight bytes long or empty (a root's, as pdata writes it: the zero id),
// and returns where it ends; i otherwise. It is protoID's rule for the
// two lengths an exporter writes, on constant-size copies: reading the
// ids through shortField and protoID cost 3.6% more instructions on
// protobuf.
func parentField(b []byte, i int, sp *Span) int {
	switch {
	case i+2 <= len(b) && b[i] == tagSpanParentID && b[i+1] == 0:
		return i + 2
	case i+10 <= len(b) && b[i] == tagSpanParentID && b[i+1] == 8:
		copy(sp.ParentSpanID[:], b[i+2:i+10])
		return i + 10
	}
	return i
}

// nameField reads the name at b[i] into sp and returns where it ends; -1
// when it is not there with a length of one byte.
func (d *protoDec) nameField(b []byte, i int, sp *Span) int {
	name, end := shortField(b, i, tagSpanName)
	if end >= 0 {
		sp.Name = d.strs.str(name)
	}
	return end
}

// kindField reads the kind at b[i] into sp when it is there and returns
// where it ends, i when it is not; -1 for a kind OTLP does not define.
func kindField(b []byte, i int, sp *Span) int {
	if i+2 > len(b) || b[i] != tagSpanKind {
		return i
	}
	if b[i+1] > maxSpanKind {
		return -1
	}
	sp.Kind = b[i+1]
	return i + 2
}

// statusField reads the status at b[i] into sp as status does when it is
// there with a length of one byte, and returns where it ends (i when it
// is not there); ok false when the status fails (the record is given
// up).
func (d *protoDec) statusField(b []byte, i int, sp *Span) (int, bool) {
	st, end := shortField(b, i, tagSpanStatus)
	if end < 0 {
		return i, true
	}
	return end, d.status(st, sp)
}

// shortField returns the value of the field of tag at b[i] and where
// it ends when it is there with a length of one byte; end -1 otherwise.
func shortField(b []byte, i int, tag byte) (val []byte, end int) {
	if i+2 > len(b) || b[i] != tag || b[i+1] >= 0x80 || i+2+int(b[i+1]) > len(b) {
		return nil, -1
	}
	end = i + 2 + int(b[i+1])
	return b[i+2 : end], end
}

// skipFlags returns where the span's flags field at b[i] ends, i when
// they are not there.
func skipFlags(b []byte, i int) int {
	if i+6 <= len(b) && b[i] == 0x80|tagSpanFlags&0x7f && b[i+1] == tagSpanFlags>>7 {
		return i + 6
	}
	return i
}

// fixedField reads the fixed64 field of tag at b[i] into v when it is
// there and returns where it ends; i otherwise.
func fixedField(b []byte, i int, tag byte, v *uint64) int {
	if i+9 > len(b) || b[i] != tag {
		return i
	}
	*v = binary.LittleEndian.Uint64(b[i+1:])
	return i + 9
}

// attrsInOrder reads the run of attribute fields at b[i] as keyValue
// does and returns where it ends, ok false when an attribute failed
// (the record is given up); -1 when a field's length does not fit.
func (d *protoDec) attrsInOrder(b []byte, i int) (int, bool) {
	n := len(b)
	for i+2 <= n && b[i] == tagSpanAttr {
		at, l := i+2, int(b[i+1])
		if l >= 0x80 {
			if i+3 > n || b[i+2] >= 0x80 {
				return -1, false
			}
			at, l = i+3, l&0x7f|int(b[i+2])<<7
		}
		if at+l > n {
			return -1, false
		}
		if !d.keyValue(b[at:at+l], &d.keep.span) {
			return i, false
		}
		i = at + l
	}
	return i, true
}

// spanRare checks the span fields span leaves out of its switch, none of
// them kept; a field pdata does not know is skipped, as pdata skips it.
func (d *protoDec) spanRare(f *protoField) bool {
	switch f.num {
	case fieldSpanTraceState:
		return f.is(protowire.BytesType)
	case fieldSpanDroppedAttrs, fieldSpanDroppedEvents, fieldSpanDroppedLinks:
		return f.is(protowire.VarintType)
	case fieldSpanEvents:
		return f.is(protowire.BytesType) && d.event(f.b) // not indexed: checked as pdata checks it
	case fieldSpanLinks:
		return f.is(protowire.BytesType) && d.link(f.b)
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
