package ingest

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

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
	OperationName string         `json:"operationName"`
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
	Key   string          `json:"key"`
	Type  string          `json:"type"`
	Value json.RawMessage `json:"value"`
}

type jaegerLog struct {
	Timestamp jaegerInt  `json:"timestamp"`
	Fields    []jaegerKV `json:"fields"`
}

type jaegerProcess struct {
	ServiceName string     `json:"serviceName"`
	Tags        []jaegerKV `json:"tags"`
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
			return errors.New("expected an integer")
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
	return o.s.produceDoc(jaegerDocSpec, o.opts.budget().recordCap()), decodeJaegerTrace(o.s.path), func() {}, nil
}

// decodeJaegerTrace decodes one element of a Jaeger document's data array.
func decodeJaegerTrace(path string) func(rec) result {
	return func(r rec) result {
		data, cut := r.cutDeep(path)
		var jt jaegerTrace
		if err := json.Unmarshal(data, &jt); err != nil {
			return result{prob: &ReadError{Path: path, Offset: r.off, Expected: "a Jaeger trace object", Err: r.placed(jaegerJSONError(err))}}
		}
		td, err := jaegerToTraces(&jt)
		if err != nil {
			return result{prob: &ReadError{Path: path, Offset: r.off, Expected: "a Jaeger trace object", Err: r.placed(err)}}
		}
		return result{td: td, cut: cut}
	}
}

// jaegerJSONError describes a decoding error without quoting the input.
func jaegerJSONError(err error) error {
	if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("field %s holds a JSON %s, expected %s", te.Field, te.Value, te.Type)
	}
	return err
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
				attrs := rs.Resource().Attributes()
				attrs.PutStr(spans.ResourceServiceName, proc.ServiceName)
				for _, kv := range proc.Tags {
					if err := putJaegerValue(attrs, kv); err != nil {
						return ptrace.Traces{}, fmt.Errorf("process %q: %w", js.ProcessID, err)
					}
				}
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
// says otherwise.
func jaegerSpecialTags(kvs []jaegerKV) jaegerTags {
	t := jaegerTags{consumed: map[int]bool{}}
	errorTag := -1
	statusSet := false
	for i, kv := range kvs {
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
	var s string
	if json.Unmarshal(v, &s) == nil {
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
	sp.SetName(js.OperationName)
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
	attrs := sp.Attributes()
	attrs.EnsureCapacity(len(js.Tags))
	for i, kv := range js.Tags {
		if tags.consumed[i] {
			continue
		}
		if err := putJaegerValue(attrs, kv); err != nil {
			return err
		}
	}
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

// jaegerRefsInto sets the span's parent and links from its references: the
// parent is the first CHILD_OF reference in the same trace (tid); every
// other reference is a link.
func jaegerRefsInto(sp ptrace.Span, refs []jaegerRef, tid pcommon.TraceID) error {
	parentDone := false
	for _, ref := range refs {
		rtid, err := jaegerTraceID(ref.TraceID)
		if err != nil {
			return fmt.Errorf("reference: %w", err)
		}
		rsid, err := jaegerSpanID("reference spanID", ref.SpanID)
		if err != nil {
			return err
		}
		if !parentDone && strings.EqualFold(ref.RefType, "CHILD_OF") && rtid == tid {
			sp.SetParentSpanID(rsid)
			parentDone = true
			continue
		}
		l := sp.Links().AppendEmpty()
		l.SetTraceID(rtid)
		l.SetSpanID(rsid)
	}
	return nil
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
		for _, kv := range lg.Fields {
			if kv.Key == jaegerLogEvent && ev.Name() == "" {
				ev.SetName(jaegerString(kv.Value))
				continue
			}
			if err := putJaegerValue(ev.Attributes(), kv); err != nil {
				return err
			}
		}
	}
	return nil
}

// putJaegerValue stores a typed Jaeger tag as an attribute: string, bool,
// int64, float64 or binary (base64), or, when the type is missing or
// unknown, whatever the JSON value is.
func putJaegerValue(attrs pcommon.Map, kv jaegerKV) error {
	raw := bytes.TrimSpace(kv.Value)
	bad := func() error { return fmt.Errorf("tag %q: the value is not a valid %s", kv.Key, kv.Type) }
	switch strings.ToLower(kv.Type) {
	case "string":
		attrs.PutStr(kv.Key, jaegerString(raw))
	case "bool":
		b, err := strconv.ParseBool(jaegerString(raw))
		if err != nil {
			return bad()
		}
		attrs.PutBool(kv.Key, b)
	case "int64":
		n, err := strconv.ParseInt(jaegerString(raw), 10, 64)
		if err != nil {
			return bad()
		}
		attrs.PutInt(kv.Key, n)
	case "float64":
		f, err := strconv.ParseFloat(jaegerString(raw), 64)
		if err != nil {
			return bad()
		}
		attrs.PutDouble(kv.Key, f)
	case "binary":
		b, err := base64.StdEncoding.DecodeString(jaegerString(raw))
		if err != nil {
			return bad()
		}
		attrs.PutEmptyBytes(kv.Key).FromRaw(b)
	default:
		putJaegerUntyped(attrs, kv.Key, raw)
	}
	return nil
}

// putJaegerUntyped stores a tag whose type is missing or unknown as what
// its JSON value is: empty for null, a string, a bool, an int, a double, or
// else its JSON text as a string.
func putJaegerUntyped(attrs pcommon.Map, key string, raw []byte) {
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		attrs.PutEmpty(key)
	case raw[0] == '"':
		attrs.PutStr(key, jaegerString(raw))
	case bytes.Equal(raw, []byte("true")), bytes.Equal(raw, []byte("false")):
		attrs.PutBool(key, raw[0] == 't')
	default:
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			attrs.PutInt(key, n)
		} else if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			attrs.PutDouble(key, f)
		} else {
			attrs.PutStr(key, string(raw))
		}
	}
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
