package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mcptrace/mcptrace/spans"
)

// Jaeger's /api/traces JSON: {"data": [trace...]}, each trace a list of
// spans and a map of processes. A trace becomes one batch: a resource per
// process (service.name plus the process tags), a scope per
// otel.scope.name tag, and spans whose kind, status and scope come back out
// of the tags Jaeger's OTLP translator wrote them into.

type jaegerTrace struct {
	Spans     []jaegerSpan             `json:"spans"`
	Processes map[string]jaegerProcess `json:"processes"`
}

type jaegerSpan struct {
	TraceID       string         `json:"traceID"`
	SpanID        string         `json:"spanID"`
	OperationName jaegerText     `json:"operationName"`
	References    []jaegerRef    `json:"references"`
	StartTime     jaegerInt      `json:"startTime"` // microseconds since the epoch
	Duration      jaegerInt      `json:"duration"`  // microseconds
	Tags          []jaegerKV     `json:"tags"`
	Logs          []jaegerLog    `json:"logs"`
	ProcessID     string         `json:"processID"`
	Process       *jaegerProcess `json:"process"` // embedded form, when processes is absent
}

type jaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type jaegerKV struct {
	Key   jaegerText      `json:"key"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type jaegerLog struct {
	Timestamp jaegerInt  `json:"timestamp"`
	Fields    []jaegerKV `json:"fields"`
}

type jaegerProcess struct {
	ServiceName jaegerText `json:"serviceName"`
	Tags        []jaegerKV `json:"tags"`
}

// jaegerText is a JSON string read with its bytes that are not valid
// UTF-8 kept as they are, as the OTLP JSON readers keep them
// (jsonStringBytes); null is empty.
type jaegerText string

// UnmarshalJSON reads a JSON string or null.
func (t *jaegerText) UnmarshalJSON(b []byte) error {
	if string(bytes.TrimSpace(b)) == "null" {
		*t = ""
		return nil
	}
	s, ok := jsonStringBytes(b)
	if !ok {
		return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[string]()}
	}
	*t = jaegerText(s)
	return nil
}

// jsonKind names the kind of the JSON value b, as encoding/json's errors
// do.
func jsonKind(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "value"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case '"':
		return "string"
	}
	return "number"
}

// jaegerInt is an integer written as a JSON number or a string.
type jaegerInt int64

// UnmarshalJSON accepts 123, "123" and null (zero); a float is truncated.
// A value past the int64 range is held as the int64 bound on its side,
// which no time takes (microsToNanos): it is refused there, not wrapped.
func (n *jaegerInt) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if s == "null" || s == "" {
		*n = 0
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || math.IsNaN(f) {
			// A type error, so encoding/json names the field it was in.
			return &json.UnmarshalTypeError{Value: jsonKind(b), Type: reflect.TypeFor[int64]()}
		}
		v = saturatedInt64(f)
	}
	*n = jaegerInt(v)
	return nil
}

// saturatedInt64 truncates f to an int64, the bound on its side when it
// is past the range (where Go's conversion is implementation-defined).
func saturatedInt64(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// Tags that carry OTLP fields, as Jaeger's OTLP translator names them.
const (
	jaegerTagKind         = "span.kind"
	jaegerTagStatusCode   = "otel.status_code"
	jaegerTagStatusDesc   = "otel.status_description"
	jaegerTagError        = "error"
	jaegerTagScopeName    = "otel.scope.name"
	jaegerTagScopeVersion = "otel.scope.version"
	jaegerTagLibName      = "otel.library.name"
	jaegerTagLibVersion   = "otel.library.version"
	jaegerLogEvent        = "event"
)

var jaegerKinds = map[string]ptrace.SpanKind{
	"client":   ptrace.SpanKindClient,
	"server":   ptrace.SpanKindServer,
	"producer": ptrace.SpanKindProducer,
	"consumer": ptrace.SpanKindConsumer,
	"internal": ptrace.SpanKindInternal,
}

// openJaeger streams the traces of a Jaeger document's data array.
func openJaeger(o openArgs) (producer, func(rec) result, func(), error) {
	return o.s.produceDoc(jaegerDocSpec, o.opts.budget().recordCap()), decodeJaegerTrace(o.s.path, o.share), func() {}, nil
}

// decodeJaegerTrace decodes one element of a Jaeger document's data
// array, charged to share (the budget's share in flight) by what it
// builds: unmarshalJaeger.
func decodeJaegerTrace(path string, share *inflight) func(rec) result {
	return func(r rec) result {
		const expected = "a Jaeger trace object"
		data, cut := r.cutDeep(path)
		c := newPdataCharge(share, r, expected, len(data))
		td, err := unmarshalJaeger(data, c)
		if err != nil {
			return result{prob: &ReadError{Path: path, Offset: r.off, Expected: expected, Err: r.placed(err)}}
		}
		return result{td: td, cut: cut, lone: noteLoneSurrogates(r), held: c.holding()}
	}
}

// unmarshalJaeger decodes one Jaeger trace object into pdata, charged to
// c (nil: nothing) before each step builds: encoding/json's typed tree of
// it, charged first by a bound read off its bytes (jaegerTreeBound) and
// then, decoded, by what it holds; then what pdata builds of the tree
// (both jaegerCosts). Once the traces are built the tree is let go, and c
// keeps only what they hold, for the sink's time. A record that would
// take more than the share is refused (errPdataTooLarge), as any pdata
// record is.
func unmarshalJaeger(data []byte, c *pdataCharge) (ptrace.Traces, error) {
	if err := c.add(jaegerTreeBound(data)); err != nil {
		return ptrace.Traces{}, err
	}
	var jt jaegerTrace
	if err := json.Unmarshal(data, &jt); err != nil {
		c.keep(0)
		return ptrace.Traces{}, jaegerJSONError(err)
	}
	tree, built := jaegerCosts(&jt, len(data))
	if more := tree + built - c.holding(); more > 0 {
		if err := c.add(more); err != nil {
			return ptrace.Traces{}, err
		}
	} else {
		c.keep(tree + built) // the bound's excess
	}
	td, err := jaegerToTraces(&jt)
	if err != nil {
		c.keep(0)
		return ptrace.Traces{}, err
	}
	c.keep(built)
	return td, nil
}

// Sizes of the typed tree's elements, as encoding/json's slices hold them.
var (
	jaegerSpanBytes    = int64(unsafe.Sizeof(jaegerSpan{}))
	jaegerKVBytes      = int64(unsafe.Sizeof(jaegerKV{}))
	jaegerRefBytes     = int64(unsafe.Sizeof(jaegerRef{}))
	jaegerLogBytes     = int64(unsafe.Sizeof(jaegerLog{}))
	jaegerProcessBytes = int64(unsafe.Sizeof(jaegerProcess{}))
)

// jaegerTreeBound bounds what encoding/json's typed tree of a Jaeger
// trace object, data, holds, before it is decoded: its strings and raw
// values (copies of at most data's bytes), and per object (an opening
// brace, counted in strings too: a bound) the largest element the tree
// has, a span, twice over for the room that slices' growth leaves. One
// vectorised count of the bytes: a scan of the record's structure cost a
// twentieth of reading a Jaeger dump.
func jaegerTreeBound(data []byte) int64 {
	return int64(len(data)) + int64(bytes.Count(data, []byte{'{'}))*2*jaegerSpanBytes
}

// jaegerCosts bounds, in one walk of jt (decoded from size bytes by
// encoding/json), what jt holds (tree) and what jaegerToTraces builds of
// it (built). tree: its strings and raw values (copies of at most the
// record's bytes), and each slice's elements twice over (the room that
// growth by append leaves), the processes' map slots included. built:
// pdata's messages at pdataMessageBytes (a span per span, a link per
// reference, an event per log, an attribute and its value per tag and
// field, and the resources and scopes jaegerSpread counts), the strings
// it copies (at most the record's bytes), and an entry of its maps of
// resources and scopes per resource and scope.
func jaegerCosts(jt *jaegerTrace, size int) (tree, built int64) {
	attr := pdataMessageBytes[pbKeyValue] + pdataMessageBytes[pbAnyValue]
	resources, scopes := jaegerSpread(jt)
	tree = int64(size) + int64(len(jt.Processes))*2*(jaegerProcessBytes+treeSlot)
	built = int64(size) + resources*(pdataMessageBytes[pbResourceSpans]+jaegerMapEntry) + scopes*(pdataMessageBytes[pbScopeSpans]+jaegerMapEntry)
	for _, p := range jt.Processes {
		tree += 2 * int64(len(p.Tags)) * jaegerKVBytes
		built += int64(1+len(p.Tags)) * attr
	}
	for i := range jt.Spans {
		sp := &jt.Spans[i]
		tree += 2 * (jaegerSpanBytes + int64(len(sp.Tags))*jaegerKVBytes + int64(len(sp.References))*jaegerRefBytes + int64(len(sp.Logs))*jaegerLogBytes)
		built += pdataMessageBytes[pbSpan] + int64(len(sp.References))*pdataMessageBytes[pbLink] + int64(len(sp.Tags))*attr
		if sp.Process != nil {
			tree += jaegerProcessBytes + 2*int64(len(sp.Process.Tags))*jaegerKVBytes
			built += int64(1+len(sp.Process.Tags)) * attr
		}
		for _, lg := range sp.Logs {
			tree += 2 * int64(len(lg.Fields)) * jaegerKVBytes
			built += pdataMessageBytes[pbEvent] + int64(len(lg.Fields))*attr
		}
	}
	return tree, built
}

// jaegerSpread bounds the resources and scopes jaegerToTraces makes of
// jt: a resource per process, and per span whose process is not one of
// them (embedded, or an id the trace does not list); a scope per resource,
// and per span with a scope tag, the only spans that can add another.
func jaegerSpread(jt *jaegerTrace) (resources, scopes int64) {
	resources = int64(len(jt.Processes))
	for i := range jt.Spans {
		sp := &jt.Spans[i]
		if _, ok := jt.Processes[sp.ProcessID]; !ok {
			resources++
		}
		for _, kv := range sp.Tags {
			if k := string(kv.Key); k == jaegerTagScopeName || k == jaegerTagScopeVersion || k == jaegerTagLibName || k == jaegerTagLibVersion {
				scopes++
				break
			}
		}
	}
	return resources, resources + scopes
}

// jaegerMapEntry is what an entry of jaegerToTraces' maps of resources
// and scopes holds: a key of up to three strings and a value of two
// words, in a swiss table's slot with the room growth leaves.
const jaegerMapEntry = 2 * (48 + 16)

// jaegerJSONError describes a decoding error without quoting the input.
func jaegerJSONError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		field := te.Field
		if field == "" {
			field = "(the trace itself)"
		}
		return fmt.Errorf("field %s holds a JSON %s, expected %s", field, te.Value, jsonWanted(te.Type))
	}
	return err
}

// jsonWanted names what a value of Go type t is in JSON's terms, for an
// error read by people who know the format, not mcptrace's Go types.
func jsonWanted(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number (a JSON number or a string of digits)"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	}
	return "a value of another type"
}

func jaegerToTraces(jt *jaegerTrace) (ptrace.Traces, error) {
	td := ptrace.NewTraces()
	type scopeKey struct{ proc, name, version string }
	resources := map[string]ptrace.ResourceSpans{}
	scopes := map[scopeKey]ptrace.SpanSlice{}
	for i := range jt.Spans {
		js := &jt.Spans[i]
		procKey := js.ProcessID
		proc, ok := jt.Processes[js.ProcessID]
		if js.Process != nil && !ok {
			proc, ok, procKey = *js.Process, true, "\x00span"+strconv.Itoa(i)
		}
		rs, seen := resources[procKey]
		if !seen {
			rs = td.ResourceSpans().AppendEmpty()
			resources[procKey] = rs
			if ok {
				attrs := make([]jaegerAttr, 1, 1+len(proc.Tags))
				attrs[0] = jaegerAttr{key: spans.ResourceServiceName, typ: pcommon.ValueTypeStr, s: string(proc.ServiceName)}
				attrs, err := appendJaegerAttrs(attrs, proc.Tags, nil)
				if err != nil {
					return ptrace.Traces{}, fmt.Errorf("process %q: %w", js.ProcessID, err)
				}
				putJaegerAttrs(rs.Resource().Attributes(), attrs)
			}
		}
		tags := jaegerSpecialTags(js.Tags)
		sk := scopeKey{procKey, tags.scopeName, tags.scopeVersion}
		ss, seen := scopes[sk]
		if !seen {
			sc := rs.ScopeSpans().AppendEmpty()
			sc.Scope().SetName(tags.scopeName)
			sc.Scope().SetVersion(tags.scopeVersion)
			ss = sc.Spans()
			scopes[sk] = ss
		}
		if err := jaegerSpanInto(ss.AppendEmpty(), js, tags); err != nil {
			return ptrace.Traces{}, fmt.Errorf("span %d: %w", i, err)
		}
	}
	return td, nil
}

// jaegerTags is what the special tags of a span say.
type jaegerTags struct {
	kind         ptrace.SpanKind
	status       ptrace.StatusCode
	statusMsg    string
	scopeName    string
	scopeVersion string
	consumed     map[int]bool // tag indexes turned into fields, not attributes
}

// jaegerSpecialTags reads what the tags Jaeger's OTLP translator wrote say
// of the span's kind, status and scope, and marks the tags it turned into
// fields. An error=true tag sets the error status only when no status tag
// says otherwise. Of a repeated kind, status or error tag the first
// decides, as of any repeated key (putJaegerAttrs), and the repeats are
// dropped: a first value that names no kind or status stays an attribute,
// as it would alone.
func jaegerSpecialTags(kvs []jaegerKV) jaegerTags {
	t := jaegerTags{consumed: map[int]bool{}}
	errorTag := -1
	statusSet := false
	var had jaegerTagsHad
	for i, kv := range kvs {
		if had.repeat(string(kv.Key)) {
			t.consumed[i] = true
			continue
		}
		switch kv.Key {
		case jaegerTagKind:
			if k, ok := jaegerKinds[strings.ToLower(jaegerString(kv.Value))]; ok {
				t.kind = k
				t.consumed[i] = true
			}
		case jaegerTagStatusCode:
			if t.statusTag(kv.Value) {
				statusSet = true
				t.consumed[i] = true
			}
		case jaegerTagStatusDesc:
			t.statusMsg = jaegerString(kv.Value)
			t.consumed[i] = true
		case jaegerTagError:
			if strings.EqualFold(jaegerString(kv.Value), "true") {
				errorTag = i
			}
		case jaegerTagScopeName, jaegerTagLibName:
			setOnce(&t.scopeName, kv.Value)
			t.consumed[i] = true
		case jaegerTagScopeVersion, jaegerTagLibVersion:
			setOnce(&t.scopeVersion, kv.Value)
			t.consumed[i] = true
		}
	}
	if errorTag >= 0 && (!statusSet || t.status == ptrace.StatusCodeError) {
		t.status = ptrace.StatusCodeError
		t.consumed[errorTag] = true
	}
	return t
}

// jaegerFirstOnly are the tags of which only a span's first counts, one
// bit each in a jaegerTagsHad. The scope tags need none: setOnce keeps
// the first of those.
var jaegerFirstOnly = [...]string{jaegerTagKind, jaegerTagStatusCode, jaegerTagStatusDesc, jaegerTagError}

// jaegerTagsHad is which of jaegerFirstOnly a span's tags had so far.
type jaegerTagsHad uint8

// repeat reports whether key is one of jaegerFirstOnly that an earlier
// tag had, and notes that this one has it.
func (h *jaegerTagsHad) repeat(key string) bool {
	for i, k := range jaegerFirstOnly {
		if key == k {
			bit := jaegerTagsHad(1) << i
			had := *h&bit != 0
			*h |= bit
			return had
		}
	}
	return false
}

// statusTag reads an otel.status_code tag's value v, in any case, and
// reports whether it names a status OTLP has; any other value stays an
// attribute. UNSET sets no code: it only says the status was given.
func (t *jaegerTags) statusTag(v json.RawMessage) bool {
	switch strings.ToUpper(jaegerString(v)) {
	case "OK":
		t.status = ptrace.StatusCodeOk
	case "ERROR":
		t.status = ptrace.StatusCodeError
	case "UNSET":
	default:
		return false
	}
	return true
}

// setOnce sets *dst to the tag value v unless an earlier tag set it: the
// first of the scope tags (and their older otel.library names) wins.
func setOnce(dst *string, v json.RawMessage) {
	if *dst == "" {
		*dst = jaegerString(v)
	}
}

// jaegerString is a tag value as text: a JSON string's content, or the JSON
// of any other value.
func jaegerString(v json.RawMessage) string {
	if s, ok := jsonStringBytes(v); ok {
		return s
	}
	return string(bytes.TrimSpace(v))
}

// jaegerSpanInto fills sp from a Jaeger span and what its special tags
// said: ids, name, kind, times, status, parent and links, the other tags
// as attributes and the logs as events.
func jaegerSpanInto(sp ptrace.Span, js *jaegerSpan, tags jaegerTags) error {
	tid, err := jaegerTraceID(js.TraceID)
	if err != nil {
		return err
	}
	sid, err := jaegerSpanID("spanID", js.SpanID)
	if err != nil {
		return err
	}
	sp.SetTraceID(tid)
	sp.SetSpanID(sid)
	sp.SetName(string(js.OperationName))
	sp.SetKind(tags.kind)
	start, end, err := jaegerTimes(js)
	if err != nil {
		return err
	}
	sp.SetStartTimestamp(pcommon.Timestamp(start))
	sp.SetEndTimestamp(pcommon.Timestamp(end))
	sp.Status().SetCode(tags.status)
	sp.Status().SetMessage(tags.statusMsg)

	if err := jaegerRefsInto(sp, js.References, tid); err != nil {
		return err
	}
	attrs, err := appendJaegerAttrs(make([]jaegerAttr, 0, len(js.Tags)), js.Tags, tags.consumed)
	if err != nil {
		return err
	}
	putJaegerAttrs(sp.Attributes(), attrs)
	return jaegerLogsInto(sp, js.Logs)
}

// jaegerTimes returns a span's start and end in Unix nanoseconds, or an
// error when either (its startTime, or startTime plus duration, in
// microseconds) lies outside the times the reader takes (microsToNanos).
func jaegerTimes(js *jaegerSpan) (start, end uint64, err error) {
	startUs, dur := int64(js.StartTime), int64(js.Duration)
	if start, err = microsToNanos("startTime", startUs); err != nil {
		return 0, 0, err
	}
	endUs := int64(math.MaxInt64) // past the range: refused below
	if dur <= latestSpanNanos/1000-startUs {
		endUs = startUs + dur
	}
	if end, err = microsToNanos("startTime + duration", endUs); err != nil {
		return 0, 0, err
	}
	return start, end, nil
}

// jaegerRefsInto sets the span's parent and links from its references, the
// way Jaeger's own model reads a parent: the first CHILD_OF reference in the
// same trace (tid) or, when there is none, the first FOLLOWS_FROM reference
// in the same trace. Every other reference is a link. A FOLLOWS_FROM that
// may yet become the parent is appended as a link and taken back out at the
// end, so the common single CHILD_OF reference never costs a link.
func jaegerRefsInto(sp ptrace.Span, refs []jaegerRef, tid pcommon.TraceID) error {
	parentDone := false
	follows := -1 // the link index of the first same-trace FOLLOWS_FROM
	links := sp.Links()
	for _, ref := range refs {
		rtid, rsid, err := jaegerRefIDs(ref)
		if err != nil {
			return err
		}
		sameTrace := rtid == tid
		if !parentDone && sameTrace && strings.EqualFold(ref.RefType, "CHILD_OF") {
			sp.SetParentSpanID(rsid)
			parentDone = true
			continue
		}
		if follows < 0 && sameTrace && strings.EqualFold(ref.RefType, "FOLLOWS_FROM") {
			follows = links.Len()
		}
		l := links.AppendEmpty()
		l.SetTraceID(rtid)
		l.SetSpanID(rsid)
	}
	if !parentDone && follows >= 0 {
		sp.SetParentSpanID(links.At(follows).SpanID())
		at := -1
		links.RemoveIf(func(ptrace.SpanLink) bool {
			at++
			return at == follows
		})
	}
	return nil
}

// jaegerRefIDs reads a reference's trace and span ids.
func jaegerRefIDs(ref jaegerRef) (pcommon.TraceID, pcommon.SpanID, error) {
	rtid, err := jaegerTraceID(ref.TraceID)
	if err != nil {
		return pcommon.TraceID{}, pcommon.SpanID{}, fmt.Errorf("reference: %w", err)
	}
	rsid, err := jaegerSpanID("reference spanID", ref.SpanID)
	if err != nil {
		return pcommon.TraceID{}, pcommon.SpanID{}, err
	}
	return rtid, rsid, nil
}

// jaegerLogsInto turns the span's logs into events: a log's first event
// field names the event, its other fields are the event's attributes.
func jaegerLogsInto(sp ptrace.Span, logs []jaegerLog) error {
	for _, lg := range logs {
		at, err := microsToNanos("a log's timestamp", int64(lg.Timestamp))
		if err != nil {
			return err
		}
		ev := sp.Events().AppendEmpty()
		ev.SetTimestamp(pcommon.Timestamp(at))
		var named map[int]bool
		for i, kv := range lg.Fields {
			if kv.Key == jaegerLogEvent {
				ev.SetName(jaegerString(kv.Value))
				named = map[int]bool{i: true}
				break
			}
		}
		attrs, err := appendJaegerAttrs(nil, lg.Fields, named)
		if err != nil {
			return err
		}
		putJaegerAttrs(ev.Attributes(), attrs)
	}
	return nil
}

// jaegerAttr is a Jaeger tag read into the value an attribute takes.
type jaegerAttr struct {
	key string
	typ pcommon.ValueType
	s   string
	b   bool
	i   int64
	f   float64
	raw []byte
}

// appendJaegerAttrs reads the tags kvs, but those whose index is in skip,
// and appends them to attrs in their order.
func appendJaegerAttrs(attrs []jaegerAttr, kvs []jaegerKV, skip map[int]bool) ([]jaegerAttr, error) {
	for i, kv := range kvs {
		if skip[i] {
			continue
		}
		a, err := jaegerValue(kv)
		if err != nil {
			return nil, err
		}
		attrs = append(attrs, a)
	}
	return attrs, nil
}

// jaegerValue reads a typed Jaeger tag: string, bool, int64, float64 or
// binary (base64), or, when the type is missing or unknown, whatever the
// JSON value is.
func jaegerValue(kv jaegerKV) (jaegerAttr, error) {
	raw := bytes.TrimSpace(kv.Value)
	a := jaegerAttr{key: string(kv.Key)}
	var err error
	switch strings.ToLower(kv.Type) {
	case "string":
		a.typ, a.s = pcommon.ValueTypeStr, jaegerString(raw)
	case "bool":
		a.typ = pcommon.ValueTypeBool
		a.b, err = strconv.ParseBool(jaegerString(raw))
	case "int64":
		a.typ = pcommon.ValueTypeInt
		a.i, err = strconv.ParseInt(jaegerString(raw), 10, 64)
	case "float64":
		a.typ = pcommon.ValueTypeDouble
		a.f, err = strconv.ParseFloat(jaegerString(raw), 64)
	case "binary":
		a.typ = pcommon.ValueTypeBytes
		a.raw, err = base64.StdEncoding.DecodeString(jaegerString(raw))
	default:
		return jaegerUntyped(a, raw), nil
	}
	if err != nil {
		return a, fmt.Errorf("tag %q: the value is not a valid %s", kv.Key, kv.Type)
	}
	return a, nil
}

// jaegerUntyped reads a tag whose type is missing or unknown as what its
// JSON value is: empty for null, a string, a bool, an int, a double, or
// else its JSON text as a string.
func jaegerUntyped(a jaegerAttr, raw []byte) jaegerAttr {
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		a.typ = pcommon.ValueTypeEmpty
	case raw[0] == '"':
		a.typ, a.s = pcommon.ValueTypeStr, jaegerString(raw)
	case bytes.Equal(raw, []byte("true")), bytes.Equal(raw, []byte("false")):
		a.typ, a.b = pcommon.ValueTypeBool, raw[0] == 't'
	default:
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			a.typ, a.i = pcommon.ValueTypeInt, n
		} else if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			a.typ, a.f = pcommon.ValueTypeDouble, f
		} else {
			a.typ, a.s = pcommon.ValueTypeStr, string(raw)
		}
	}
	return a
}

// jaegerFewAttrs is how many attributes putJaegerAttrs stores one by one;
// past it a map's search for a repeated key would cost quadratic time.
const jaegerFewAttrs = 32

// putJaegerAttrs stores attrs into dst, which is empty, in their order;
// of a repeated key the first is kept, as every reader keeps it
// (Batch.newAttr). Few are put one by one; many are encoded as the
// attributes of an OTLP protobuf resource, which pdata decodes without
// searching for each key, and moved into dst.
func putJaegerAttrs(dst pcommon.Map, attrs []jaegerAttr) {
	if len(attrs) <= jaegerFewAttrs || !putJaegerAttrsAtOnce(dst, attrs) {
		for i := range attrs {
			if v, had := dst.GetOrPutEmpty(attrs[i].key); !had {
				attrs[i].into(v)
			}
		}
	}
}

// putJaegerAttrsAtOnce is putJaegerAttrs for many attributes: it reports
// false, dst untouched, if pdata does not decode their encoding.
func putJaegerAttrsAtOnce(dst pcommon.Map, attrs []jaegerAttr) bool {
	seen := make(map[string]struct{}, len(attrs))
	var kvs []byte
	for i := range attrs {
		if _, dup := seen[attrs[i].key]; dup {
			continue
		}
		seen[attrs[i].key] = struct{}{}
		kvs = protowire.AppendTag(kvs, 1, protowire.BytesType) // Resource.attributes
		kvs = protowire.AppendBytes(kvs, attrs[i].appendProto(nil))
	}
	rs := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), kvs) // ResourceSpans.resource
	td := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), rs)  // TracesData.resource_spans
	var u ptrace.ProtoUnmarshaler
	out, err := u.UnmarshalTraces(td)
	if err != nil || out.ResourceSpans().Len() != 1 { // not expected: the encoding is the reader's own
		return false
	}
	out.ResourceSpans().At(0).Resource().Attributes().MoveTo(dst)
	return true
}

// into sets v to the attribute's value.
func (a *jaegerAttr) into(v pcommon.Value) {
	switch a.typ {
	case pcommon.ValueTypeStr:
		v.SetStr(a.s)
	case pcommon.ValueTypeBool:
		v.SetBool(a.b)
	case pcommon.ValueTypeInt:
		v.SetInt(a.i)
	case pcommon.ValueTypeDouble:
		v.SetDouble(a.f)
	case pcommon.ValueTypeBytes:
		v.SetEmptyBytes().FromRaw(a.raw)
	}
}

// appendProto appends the attribute as an OTLP KeyValue message.
func (a *jaegerAttr) appendProto(b []byte) []byte {
	var v []byte // AnyValue; empty for an empty value
	switch a.typ {
	case pcommon.ValueTypeStr:
		v = protowire.AppendString(protowire.AppendTag(v, 1, protowire.BytesType), a.s)
	case pcommon.ValueTypeBool:
		v = protowire.AppendVarint(protowire.AppendTag(v, 2, protowire.VarintType), protowire.EncodeBool(a.b))
	case pcommon.ValueTypeInt:
		v = protowire.AppendVarint(protowire.AppendTag(v, 3, protowire.VarintType), uint64(a.i))
	case pcommon.ValueTypeDouble:
		v = protowire.AppendFixed64(protowire.AppendTag(v, 4, protowire.Fixed64Type), math.Float64bits(a.f))
	case pcommon.ValueTypeBytes:
		v = protowire.AppendBytes(protowire.AppendTag(v, 7, protowire.BytesType), a.raw)
	}
	b = protowire.AppendString(protowire.AppendTag(b, 1, protowire.BytesType), a.key)
	return protowire.AppendBytes(protowire.AppendTag(b, 2, protowire.BytesType), v)
}

// jaegerTraceID parses a Jaeger trace id: up to 32 hex digits, leading
// zeros dropped as Jaeger prints them.
func jaegerTraceID(s string) (pcommon.TraceID, error) {
	var id pcommon.TraceID
	if err := jaegerHexID(s, id[:]); err != nil {
		return id, fmt.Errorf("traceID: %w", err)
	}
	return id, nil
}

func jaegerSpanID(field, s string) (pcommon.SpanID, error) {
	var id pcommon.SpanID
	if err := jaegerHexID(s, id[:]); err != nil {
		return id, fmt.Errorf("%s: %w", field, err)
	}
	return id, nil
}

func jaegerHexID(s string, dst []byte) error {
	if s == "" || len(s) > 2*len(dst) || !isHex(s) {
		return fmt.Errorf("expected 1 to %d hex digits", 2*len(dst))
	}
	padded := strings.Repeat("0", 2*len(dst)-len(s)) + s
	_, err := hex.Decode(dst, []byte(padded))
	return err
}
