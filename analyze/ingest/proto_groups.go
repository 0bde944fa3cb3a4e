package ingest

import (
	"google.golang.org/protobuf/encoding/protowire"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Protobuf groups (wire types 3 and 4) are legal in any message as unknown
// fields: Go's protobuf skips them. pdata's decoder mishandles them (a
// group holding a field, or one that ends the record, is an error there),
// so a record that carries one would be refused whole though nothing in it
// is damaged. unmarshalOTLPProto reads such a record by dropping its
// groups, walking the OTLP messages by the fields that nest messages, and
// decoding what is left; the projection decoder skips them as it reads
// (fastproto.go: fieldIter.nextSlow, skipGroup).

// protoMsg names the OTLP trace messages whose fields nest messages.
type protoMsg uint8

const (
	msgRequest protoMsg = iota
	msgResourceSpans
	msgResource
	msgScopeSpans
	msgScope
	msgSpan
	msgEvent
	msgLink
	msgStatus
	msgEntityRef
	msgKeyValue
	msgAnyValue
	msgArrayValue
	msgKVList
)

// protoNested lists, for each message, its fields that hold a message and
// that message (opentelemetry-proto's trace.proto, common.proto and
// resource.proto): every message may hold a group, so every one is
// walked, a Status and an EntityRef too, though they nest none.
var protoNested = [...]map[protowire.Number]protoMsg{
	msgRequest:       {fieldRequestResourceSpans: msgResourceSpans},
	msgResourceSpans: {fieldRSResource: msgResource, fieldRSScopeSpans: msgScopeSpans, fieldRSDeprecatedScopes: msgScopeSpans},
	msgResource:      {fieldResourceAttributes: msgKeyValue, fieldResourceEntityRefs: msgEntityRef},
	msgScopeSpans:    {fieldSSScope: msgScope, fieldSSSpans: msgSpan},
	msgScope:         {fieldScopeAttributes: msgKeyValue},
	msgSpan:          {fieldSpanAttributes: msgKeyValue, fieldSpanEvents: msgEvent, fieldSpanLinks: msgLink, fieldSpanStatus: msgStatus},
	msgEvent:         {3: msgKeyValue},
	msgLink:          {4: msgKeyValue},
	msgStatus:        {},
	msgEntityRef:     {},
	msgKeyValue:      {fieldKVValue: msgAnyValue},
	msgAnyValue:      {fieldValueArray: msgArrayValue, fieldValueKVList: msgKVList},
	msgArrayValue:    {fieldArrayValues: msgAnyValue},
	msgKVList:        {fieldKVListValues: msgKeyValue},
}

// maxGroupStripDepth bounds how deep groupStripper walks nested messages:
// a group deeper than that stays, and pdata refuses the record. It is
// past the deepest value the projection decoder reads (maxProtoDepth
// below an attribute, itself a few messages down), so the two paths read
// the same records, and it keeps the walk linear: each level moves its
// content once to put its new length before it.
const maxGroupStripDepth = 8 + maxProtoDepth

// unmarshalOTLPProto decodes an ExportTraceServiceRequest record with
// pdata; when pdata refuses it and it holds groups, it decodes the record
// without them. That copy, and what pdata builds of it again (the first
// attempt's messages are garbage the collector may not have taken yet),
// are charged to c first, each at most what the record itself takes. Any
// other failure is pdata's error on the record as it is, or c's when the
// retry does not fit the share in flight.
func unmarshalOTLPProto(data []byte, c *pdataCharge) (ptrace.Traces, error) {
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(data)
	if err == nil || !holdsGroups(data) {
		return td, err
	}
	if cerr := c.add(int64(len(data)) + c.proto(data)); cerr != nil {
		return td, cerr
	}
	if stripped, ok := withoutGroups(data); ok {
		if td2, err2 := u.UnmarshalTraces(stripped); err2 == nil {
			return td2, nil
		}
	}
	return td, err
}

// holdsGroups reports whether the record holds a group and is otherwise
// well formed as far as groupStripper walks it: a walk that only looks,
// so a damaged record without one costs no copy.
func holdsGroups(data []byte) bool {
	s := groupStripper{}
	return s.walk(data, msgRequest, 0) && s.found
}

// withoutGroups returns the record without its groups, and true, when it
// is well formed as far as groupStripper walks it (holdsGroups).
func withoutGroups(data []byte) ([]byte, bool) {
	s := groupStripper{write: true, out: make([]byte, 0, len(data))}
	if !s.walk(data, msgRequest, 0) {
		return nil, false
	}
	return s.out, true
}

// groupStripper copies a message without its groups (write), or only
// notes whether it holds one (found).
type groupStripper struct {
	write bool
	found bool
	out   []byte
}

// walk copies msg, a message of kind, field by field, leaving out groups
// and walking the fields that nest messages, down to maxGroupStripDepth;
// false when a field is malformed.
func (s *groupStripper) walk(msg []byte, kind protoMsg, depth int) bool {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 || typ == protowire.EndGroupType {
			return false
		}
		if typ == protowire.StartGroupType {
			m := skipGroup(msg[n:], num)
			if m < 0 {
				return false
			}
			s.found = true
			msg = msg[n+m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[n:])
		if m < 0 {
			return false
		}
		child, nests := protoNested[kind][num]
		if typ != protowire.BytesType || !nests || depth >= maxGroupStripDepth {
			s.copy(msg[:n+m])
		} else if !s.nested(msg[:n], msg[n:n+m], child, depth) {
			return false
		}
		msg = msg[n+m:]
	}
	return true
}

// nested walks the length-delimited field whose tag is tag and whose
// length and content are field, a message of kind child: its tag, then
// its content without groups after the length that content now has.
func (s *groupStripper) nested(tag, field []byte, child protoMsg, depth int) bool {
	v, _ := protowire.ConsumeBytes(field)
	s.copy(tag)
	at := len(s.out)
	if !s.walk(v, child, depth+1) {
		return false
	}
	if s.write {
		l := len(s.out) - at
		size := protowire.SizeVarint(uint64(l))
		s.out = append(s.out, make([]byte, size)...)
		copy(s.out[at+size:], s.out[at:at+l])
		protowire.AppendVarint(s.out[at:at], uint64(l))
	}
	return true
}

// copy appends b when the stripper writes.
func (s *groupStripper) copy(b []byte) {
	if s.write {
		s.out = append(s.out, b...)
	}
}
