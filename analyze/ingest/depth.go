package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// The nesting limit. Every reader hands a record to a decoder that recurses
// once per level of nesting (pdata's JSON unmarshaler, encoding/json, and
// pcommon.Value.AsString, which an index calls on an array or map value),
// and none of them stops on its own early enough: a 28 KB dump of an
// attribute nested a million deep is a stack overflow, a crash no caller
// can recover from. So every JSON record is measured before a decoder sees
// it, by the linear scan jsonDepth, which neither recurses nor allocates;
// a protobuf record is measured by pdata's unmarshaler itself, which stops
// at the same limit before it recurses, and protoDepth, a bounded walk,
// then finds the place. A value nested deeper than MaxDepth is cut at the
// limit (cutJSON, cutProto: nothing readable is lost, the span is read),
// and the input gets one warning, a *ReadError's text wrapping ErrTooDeep
// that names the file, the byte, the path of keys down to the first place
// and the attribute whose value it is, with how many values were cut. The
// projection decoders (fastjson.go, fastproto.go) give up long before the
// limit, so what they take is within it too, and they leave a record with
// a deeper value to the pdata path, which cuts it.

// MaxDepth is how deep a record may nest. In JSON: objects and arrays,
// counted from the record itself (a JSON line's request, a document's
// array element, which is then 1). In protobuf, whose messages above the
// attributes are fixed (request, resource spans, scope spans, span): the
// messages of an attribute, counted from its KeyValue (0) through its
// values (AnyValue, ArrayValue, KeyValueList, KeyValue). Real dumps nest
// about ten JSON levels plus three (two messages) per level of an array or
// map attribute value, so 100 leaves room for any real value while the
// decoders' stack stays small. The protobuf count is exactly pdata's
// (proto.RecursionLimit, 100), which refuses a deeper record before it
// recurses; protoDepth then names the place, and cutProto cuts there
// (TestAValueAtTheDepthLimitIsKeptOnePastIsCut pins that they agree).
const MaxDepth = 100

// ErrTooDeep: a value nests deeper than MaxDepth. The readers cut such a
// value and warn; a record they cannot cut (a document's element nested
// past encoding/json's limit and longer than the record cap) is a bad
// record wrapping it.
var ErrTooDeep = errors.New("nested too deep")

// depthError says where a record passed MaxDepth: at byte at of the record
// (JSON) or of the record's field (protobuf), down path, inside the value of
// attribute attr when there is one.
type depthError struct {
	at   int64
	path string
	attr string
}

func (e *depthError) Error() string {
	var b strings.Builder
	b.WriteString(ErrTooDeep.Error())
	if e.attr != "" {
		b.WriteString(" in the value of attribute ")
		b.WriteString(QuoteText(e.attr))
	}
	if e.path != "" {
		b.WriteString(", at ")
		b.WriteString(e.path)
	}
	return b.String()
}

func (e *depthError) Unwrap() error { return ErrTooDeep }

// expectedDepth is what a ReadError for a record too deep says was
// expected.
var expectedDepth = fmt.Sprintf("a record nested at most %d deep", MaxDepth)

// depthProblem checks a JSON record and returns the ReadError of one too
// deep, or nil. off is the record's offset in the stream when at may be
// added to it (the record's bytes are the stream's), or -1 when not (a
// decompressed record): the record's own byte is named then.
func depthProblem(path string, line int, off int64, data []byte) *ReadError {
	e := jsonDepth(data)
	if e == nil {
		return nil
	}
	if off >= 0 {
		return &ReadError{Path: path, Line: line, Offset: off + e.at, Expected: expectedDepth, Err: e}
	}
	return &ReadError{Path: path, Line: line, Offset: -1, Expected: expectedDepth,
		Err: fmt.Errorf("byte %d of the decompressed record: %w", e.at, e)}
}

// jsonDepth measures how deep data nests, in one pass that allocates
// nothing, and describes the place when it is deeper than MaxDepth. It
// does not validate: malformed JSON is the decoder's to report. The bytes
// between strings are looked at one by one (in a compact record they are
// few: brackets, colons, commas, numbers); a string's body, most of a
// record, is jumped over with IndexByte, many bytes at a time.
func jsonDepth(data []byte) *depthError {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c | 0x20 { // maps '[' onto '{' and ']' onto '}'
		case '"' | 0x20:
			if c == '"' {
				i = stringEnd(data, i)
			}
		case '{':
			if depth++; depth > MaxDepth {
				return jsonDepthPlace(data)
			}
		case '}':
			depth--
		}
	}
	return nil
}

// stringEnd returns the index of the quote that closes the string opened
// at data[i], or len(data): the next quote not escaped (one preceded by an
// even run of backslashes).
func stringEnd(data []byte, i int) int {
	for i++; ; i++ {
		k := bytes.IndexByte(data[i:], '"')
		if k < 0 {
			return len(data)
		}
		i += k
		if data[i-1] != '\\' {
			return i
		}
		n := 0
		for j := i - 1; data[j] == '\\'; j-- { // data[start] is a quote: the run ends
			n++
		}
		if n%2 == 0 {
			return i
		}
	}
}

// jsonFrame is one open object or array of jsonDepthPlace's walk.
type jsonFrame struct {
	arr     bool
	idx     int
	wantKey bool
	key     []byte // the member being read
	attr    []byte // the value of this object's "key" member: an attribute's key
}

// jsonDepthPlace walks data again, keeping the open containers, to the
// point where it passes MaxDepth, and describes it. It runs only on a
// record already found too deep, so its stack of MaxDepth+1 frames is
// bounded.
func jsonDepthPlace(data []byte) *depthError {
	var st []jsonFrame
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch c {
		case '"':
			end := stringEnd(data, i)
			s := data[i+1 : min(end, len(data))]
			i = end
			if n := len(st); n > 0 {
				f := &st[n-1]
				switch {
				case !f.arr && f.wantKey:
					f.key, f.wantKey = s, false
				case !f.arr && string(f.key) == "key":
					f.attr = s
				}
			}
		case '{', '[':
			if len(st) == MaxDepth {
				return &depthError{at: int64(i), path: jsonPath(st), attr: jsonAttr(st)}
			}
			st = append(st, jsonFrame{arr: c == '[', wantKey: c == '{'})
		case '}', ']':
			if len(st) > 0 {
				st = st[:len(st)-1]
			}
		case ',':
			if n := len(st); n > 0 {
				f := &st[n-1]
				if f.arr {
					f.idx++
				} else {
					f.wantKey, f.key = true, nil
				}
			}
		}
	}
	return nil
}

// maxPathSteps is how many steps of a path an error shows: enough to reach
// an attribute in any OTLP, Jaeger or Tempo record.
const maxPathSteps = 16

// jsonPath renders the open containers as a path, resourceSpans[0].spans[3]…
func jsonPath(st []jsonFrame) string {
	var b strings.Builder
	steps := 0
	for _, f := range st {
		if steps == maxPathSteps {
			fmt.Fprintf(&b, "… (%d levels)", len(st))
			break
		}
		steps++
		if f.arr {
			b.WriteString("[" + strconv.Itoa(f.idx) + "]")
			continue
		}
		if f.key == nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(pathKey(string(f.key)))
	}
	return b.String()
}

// pathKey writes a key as is when it is a plain name, else quoted.
func pathKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return QuoteText(k)
		}
	}
	if k == "" || len(k) > 40 {
		return QuoteText(k)
	}
	return k
}

// jsonAttr returns the key of the outermost attribute open on the stack.
func jsonAttr(st []jsonFrame) string {
	for _, f := range st {
		if f.attr != nil {
			return string(f.attr)
		}
	}
	return ""
}

// The protobuf walk follows the OTLP messages that can nest (resource,
// scope, span, event and link attributes, and the values inside them),
// with their field numbers; every other field is skipped unread. A
// malformed field ends the walk quietly: the decoder then reports it.
type protoLevel uint8

const (
	pbRequest protoLevel = iota
	pbResourceSpans
	pbResource
	pbScopeSpans
	pbScope
	pbSpan
	pbEvent
	pbLink
	pbKeyValue
	pbAnyValue
	pbArrayValue
	pbKVList
)

// protoChild is a field of a message that holds a nested message the walk
// follows.
type protoChild struct {
	num   protowire.Number
	level protoLevel
}

// protoChildren says, per message, which fields the walk follows.
var protoChildren = [...][]protoChild{
	pbRequest:       {{fieldRequestResourceSpans, pbResourceSpans}},
	pbResourceSpans: {{fieldRSResource, pbResource}, {fieldRSScopeSpans, pbScopeSpans}, {fieldRSDeprecatedScopes, pbScopeSpans}},
	pbResource:      {{fieldResourceAttributes, pbKeyValue}},
	pbScopeSpans:    {{fieldSSScope, pbScope}, {fieldSSSpans, pbSpan}},
	pbScope:         {{fieldScopeAttributes, pbKeyValue}},
	pbSpan:          {{fieldSpanAttributes, pbKeyValue}, {fieldSpanEvents, pbEvent}, {fieldSpanLinks, pbLink}},
	pbEvent:         {{fieldEventAttributes, pbKeyValue}},
	pbLink:          {{fieldLinkAttributes, pbKeyValue}},
	pbKeyValue:      {{fieldKVValue, pbAnyValue}},
	pbAnyValue:      {{fieldValueArray, pbArrayValue}, {fieldValueKVList, pbKVList}},
	pbArrayValue:    {{fieldArrayValues, pbAnyValue}},
	pbKVList:        {{fieldKVListValues, pbKeyValue}},
}

// Field numbers of the nesting fields fastproto.go does not name.
const (
	fieldEventAttributes = 3 // Span.Event.attributes
	fieldLinkAttributes  = 4 // Span.Link.attributes
)

// protoNames names the nesting fields for the path of an error.
var protoNames = [...]string{
	pbResourceSpans: "resource_spans", pbResource: "resource", pbScopeSpans: "scope_spans", pbScope: "scope",
	pbSpan: "spans", pbEvent: "events", pbLink: "links", pbKeyValue: "attributes",
	pbAnyValue: "value", pbArrayValue: "array_value", pbKVList: "kvlist_value",
}

// protoDepth measures how deep an ExportTraceServiceRequest record nests
// and describes the place when it passes MaxDepth.
func protoDepth(data []byte) *depthError {
	var p protoWalk
	p.walk(data, pbRequest, -1, 0)
	return p.err
}

// protoStep is one message on the way down: which, its index among its
// parent's fields of the same number, its bytes (for the key of a
// KeyValue, read only when an error names it) and its depth as MaxDepth
// counts it (-1 above the attributes).
type protoStep struct {
	level protoLevel
	idx   int
	msg   []byte
	depth int
}

// protoWalk is the state of protoDepth: the steps down to the current
// message (bounded by MaxDepth) and the first problem.
type protoWalk struct {
	steps []protoStep
	err   *depthError
}

// walk visits msg, which starts at byte base of the record and is at
// depth (-1 above the attributes). It recurses once per level and stops at
// MaxDepth, so its own stack is bounded.
func (p *protoWalk) walk(msg []byte, lvl protoLevel, depth int, base int64) {
	if depth >= MaxDepth {
		p.err = &depthError{at: base, path: p.path(), attr: p.attr()}
		return
	}
	var counts [3]int
	for pos := 0; pos < len(msg) && p.err == nil; {
		num, typ, n := protowire.ConsumeTag(msg[pos:])
		if n < 0 {
			return
		}
		pos += n
		if typ != protowire.BytesType {
			m := protowire.ConsumeFieldValue(num, typ, msg[pos:])
			if m < 0 {
				return
			}
			pos += m
			continue
		}
		v, m := protowire.ConsumeBytes(msg[pos:])
		if m < 0 {
			return
		}
		at := base + int64(pos+m-len(v))
		pos += m
		for k, c := range protoChildren[lvl] {
			if c.num != num {
				continue
			}
			d := -1 // above the attributes
			switch {
			case c.level == pbKeyValue && lvl != pbKVList:
				d = 0 // an attribute
			case depth >= 0:
				d = depth + 1
			}
			p.steps = append(p.steps, protoStep{level: c.level, idx: counts[k], msg: v, depth: d})
			counts[k]++
			p.walk(v, c.level, d, at)
			p.steps = p.steps[:len(p.steps)-1]
			break
		}
	}
}

// attr is the key of the outermost attribute on the way down, or "".
func (p *protoWalk) attr() string {
	for _, s := range p.steps {
		if s.level == pbKeyValue {
			return string(protoKVKey(s.msg))
		}
	}
	return ""
}

// protoKVKey returns a KeyValue's key (its last, as pdata reads it).
func protoKVKey(msg []byte) []byte {
	var key []byte
	for pos := 0; pos < len(msg); {
		num, typ, n := protowire.ConsumeTag(msg[pos:])
		if n < 0 {
			break
		}
		pos += n
		m := protowire.ConsumeFieldValue(num, typ, msg[pos:])
		if m < 0 {
			break
		}
		if num == fieldKVKey && typ == protowire.BytesType {
			if v, k := protowire.ConsumeBytes(msg[pos:]); k > 0 {
				key = v
			}
		}
		pos += m
	}
	return key
}

// path renders the steps, resource_spans[0].scope_spans[0].spans[3]…
func (p *protoWalk) path() string {
	var b strings.Builder
	parent := pbRequest
	for i, s := range p.steps {
		if i == maxPathSteps {
			fmt.Fprintf(&b, "… (%d levels)", len(p.steps))
			break
		}
		if i > 0 {
			b.WriteByte('.')
		}
		switch {
		case s.level == pbResource, s.level == pbScope, s.level == pbArrayValue, s.level == pbKVList,
			s.level == pbAnyValue && parent == pbKeyValue:
			b.WriteString(protoNames[s.level])
		case parent == pbArrayValue, parent == pbKVList:
			fmt.Fprintf(&b, "values[%d]", s.idx)
		default:
			fmt.Fprintf(&b, "%s[%d]", protoNames[s.level], s.idx)
		}
		parent = s.level
	}
	return b.String()
}

// ValueTooDeep reports whether v, an attribute value from a sink's pdata
// (which need not come from these readers: the Collector connector gets
// pdata from receivers), nests deeper than MaxDepth. It walks at most
// MaxDepth levels, so an index can check before it calls AsString, whose
// JSON encoding recurses without a limit.
func ValueTooDeep(v pcommon.Value) bool { return valueDepthOver(v, 0) }

func valueDepthOver(v pcommon.Value, depth int) bool {
	if depth > MaxDepth {
		return true
	}
	switch v.Type() {
	case pcommon.ValueTypeSlice:
		s := v.Slice()
		for i := 0; i < s.Len(); i++ {
			if valueDepthOver(s.At(i), depth+1) {
				return true
			}
		}
	case pcommon.ValueTypeMap:
		over := false
		v.Map().Range(func(_ string, e pcommon.Value) bool {
			over = valueDepthOver(e, depth+1)
			return !over
		})
		return over
	}
	return false
}

// protoDepthProblem is the ReadError of a protobuf record at off too deep:
// the byte is the stream's when the record's bytes are (recOff >= 0), else
// the decompressed record's own.
func protoDepthProblem(path string, off, recOff int64, e *depthError) *ReadError {
	if recOff >= 0 {
		return &ReadError{Path: path, Offset: recOff + e.at, Expected: expectedDepth, Err: e}
	}
	return &ReadError{Path: path, Offset: off, Expected: expectedDepth, Err: fmt.Errorf("byte %d of the decompressed record: %w", e.at, e)}
}

// A value nested past MaxDepth is cut rather than its record refused: the
// span it belongs to, and everything else in the record, is read, and the
// input gets one warning naming the place of the first cut and how many
// values were cut (fileState.noteCut). Cutting is linear and does not
// recurse past MaxDepth: a value nested a million deep costs a scan.

// deepCut is what cutting a record's values past MaxDepth did: the place
// of the first (nil: nothing was cut) and how many were cut.
type deepCut struct {
	at *ReadError
	n  int
}

// cutDeep is cutJSONRecord for a record of a JSON reader: the place names
// the line or the document's element.
func (r rec) cutDeep(path string) ([]byte, deepCut) {
	data, at, n := cutJSONRecord(path, r.line, r.off, r.data)
	if at != nil {
		at.Err = r.placed(at.Err)
	}
	return data, deepCut{at: at, n: n}
}

// cutJSONRecord returns a JSON record to decode: data itself when it nests
// at most MaxDepth deep, else data with every value past the limit cut
// (cutJSON), with the place of the first cut (as depthProblem names it)
// and the number of values cut.
func cutJSONRecord(path string, line int, off int64, data []byte) ([]byte, *ReadError, int) {
	p := depthProblem(path, line, off, data)
	if p == nil {
		return data, nil, 0
	}
	out, n := cutJSON(data)
	return out, p, n
}

// cutJSON empties every object or array at depth MaxDepth that holds
// another ({…} becomes {}, […] becomes []), so the record nests at most
// MaxDepth deep and stays valid JSON: an empty container is a valid value
// wherever a container is (an empty AnyValue, array or map in OTLP JSON).
// It returns the new record and the number of containers emptied, in one
// pass that copies data only once it cuts.
func cutJSON(data []byte) ([]byte, int) {
	var out []byte
	copied, cuts, depth, open := 0, 0, 0, -1 // open: where the container at depth MaxDepth opened
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c | 0x20 {
		case '"' | 0x20:
			if c == '"' {
				i = stringEnd(data, i)
			}
		case '{':
			if depth++; depth == MaxDepth {
				open = i
			}
			if depth > MaxDepth {
				end := containerEnd(data, i, 2) // the container opened at i, and the one at MaxDepth holding it
				out = append(out, data[copied:open+1]...)
				out = append(out, data[open]+2) // '{'+2 is '}', '['+2 is ']'
				copied, cuts, depth, i = min(end+1, len(data)), cuts+1, MaxDepth-1, end
			}
		case '}':
			depth = max(depth-1, 0) // a stray closer opens no room: the depth is the decoders'
		}
	}
	if cuts == 0 {
		return data, 0
	}
	return append(out, data[copied:]...), cuts
}

// containerEnd returns the index of the bracket that closes the outermost
// of levels containers open at data[i] (which opens the innermost), or
// len(data) when the record ends first.
func containerEnd(data []byte, i, levels int) int {
	depth := levels
	for i++; i < len(data); i++ {
		switch c := data[i]; c | 0x20 {
		case '"' | 0x20:
			if c == '"' {
				i = stringEnd(data, i)
			}
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return len(data)
}

// cutProtoRecord returns a protobuf record to decode: data itself when it
// nests within MaxDepth (as pdata counts), else data with every message
// past the limit dropped (cutProto), with the place of the first one and
// the number dropped.
func cutProtoRecord(path string, off, recOff int64, data []byte) ([]byte, *ReadError, int) {
	e := protoDepth(data)
	if e == nil {
		return data, nil, 0
	}
	out, n := cutProto(data, pbRequest, -1)
	return out, protoDepthProblem(path, off, recOff, e), n
}

// cutProto returns msg, a message of level lvl at depth (as protoWalk
// counts it), with every nested message that would be at MaxDepth or
// deeper dropped from its parent (an AnyValue loses its array or map, an
// array or map the elements past the limit), and the number dropped. The
// messages on the way down are re-encoded with their new lengths; every
// other field is copied as is. It recurses once per level and never past
// MaxDepth, and copies a message only once something in it is dropped.
func cutProto(msg []byte, lvl protoLevel, depth int) ([]byte, int) {
	var out []byte
	cuts := 0
	copied := 0
	for pos := 0; pos < len(msg); {
		start := pos
		num, typ, n := protowire.ConsumeTag(msg[pos:])
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(num, typ, msg[pos+n:])
		if m < 0 {
			break
		}
		pos += n + m
		c, ok := protoChildOf(lvl, num, typ)
		if !ok {
			continue
		}
		d := childDepth(c, lvl, depth)
		v, _ := protowire.ConsumeBytes(msg[start+n:])
		var sub []byte
		k := 1
		if d < MaxDepth {
			if sub, k = cutProto(v, c.level, d); k == 0 {
				continue
			}
		}
		out = append(out, msg[copied:start]...)
		if d < MaxDepth {
			out = protowire.AppendTag(out, num, typ)
			out = protowire.AppendBytes(out, sub)
		}
		copied, cuts = pos, cuts+k
	}
	if cuts == 0 {
		return msg, 0
	}
	return append(out, msg[copied:]...), cuts
}

// protoChildOf returns the nesting field num of a message of level lvl,
// if it is one (and length-delimited, as a message is).
func protoChildOf(lvl protoLevel, num protowire.Number, typ protowire.Type) (protoChild, bool) {
	if typ != protowire.BytesType {
		return protoChild{}, false
	}
	for _, c := range protoChildren[lvl] {
		if c.num == num {
			return c, true
		}
	}
	return protoChild{}, false
}

// childDepth is the depth of child c of a message of level lvl at depth,
// as MaxDepth counts it: -1 above the attributes, 0 for an attribute, one
// more than its parent below.
func childDepth(c protoChild, lvl protoLevel, depth int) int {
	switch {
	case c.level == pbKeyValue && lvl != pbKVList:
		return 0
	case depth >= 0:
		return depth + 1
	}
	return -1
}
