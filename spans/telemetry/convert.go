package telemetry

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OTLP span flag bits above the W3C trace flags (the low 8 bits). The OTLP
// exporters always set flagHasIsRemote, saying "this producer knows whether
// the parent was remote", and flagIsRemote when it was; ToTraces does the
// same so a dump reads exactly like what a collector would have received.
const (
	flagHasIsRemote uint32 = 0x100 // SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK
	flagIsRemote    uint32 = 0x200 // SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK
)

// ToTraces converts finished OpenTelemetry SDK spans into pdata traces, the
// in-memory form of an OTLP ExportTraceServiceRequest, so that a file dump, a
// test assertion and the analyzer all look at the same data model the
// Collector uses.
//
// Spans are grouped by resource (attributes and schema URL) and then by
// instrumentation scope, each group in order of first appearance, and spans
// keep their input order inside a scope, so the output is deterministic for a
// given input (the OTLP exporters group through a map and are not). Every
// field the OTLP exporters carry is copied: ids, parent id, trace state,
// flags (including the parent-is-remote bits), name, kind, times, status,
// attributes of every value type, events, links and dropped counts, plus
// resource and scope attributes, versions and schema URLs. Links also keep
// their trace state, an OTLP field the Go OTLP exporter leaves empty. Nil
// spans are skipped. The result shares no memory with the input.
func ToTraces(spans []sdktrace.ReadOnlySpan) ptrace.Traces {
	td := ptrace.NewTraces()
	if len(spans) == 0 {
		return td
	}

	type resourceKey struct {
		attrs     attribute.Distinct
		schemaURL string
	}
	type scopeKey struct {
		res   resourceKey
		scope instrumentation.Scope
	}
	resources := make(map[resourceKey]ptrace.ResourceSpans)
	scopes := make(map[scopeKey]ptrace.SpanSlice)

	for _, s := range spans {
		if s == nil {
			continue
		}
		res := s.Resource()
		rk := resourceKey{attrs: res.Equivalent(), schemaURL: res.SchemaURL()}
		rs, ok := resources[rk]
		if !ok {
			rs = td.ResourceSpans().AppendEmpty()
			rs.SetSchemaUrl(res.SchemaURL())
			putResource(rs.Resource(), res)
			resources[rk] = rs
		}
		scope := s.InstrumentationScope()
		sk := scopeKey{res: rk, scope: scope}
		ss, ok := scopes[sk]
		if !ok {
			scopeSpans := rs.ScopeSpans().AppendEmpty()
			scopeSpans.SetSchemaUrl(scope.SchemaURL)
			putScope(scopeSpans.Scope(), scope)
			ss = scopeSpans.Spans()
			scopes[sk] = ss
		}
		putSpan(ss.AppendEmpty(), s)
	}
	return td
}

// putResource copies the resource attributes (sorted by key, as the SDK
// keeps them) into dst. A nil resource leaves dst empty.
func putResource(dst pcommon.Resource, res *resource.Resource) {
	if res == nil {
		return
	}
	putIter(dst.Attributes(), res.Iter())
}

// putScope copies the instrumentation scope's name, version and attributes.
func putScope(dst pcommon.InstrumentationScope, scope instrumentation.Scope) {
	dst.SetName(scope.Name)
	dst.SetVersion(scope.Version)
	putIter(dst.Attributes(), scope.Attributes.Iter())
}

// putSpan copies one finished span into dst.
func putSpan(dst ptrace.Span, s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	dst.SetTraceID(pcommon.TraceID(sc.TraceID()))
	dst.SetSpanID(pcommon.SpanID(sc.SpanID()))
	dst.TraceState().FromRaw(sc.TraceState().String())
	parent := s.Parent()
	if parent.SpanID().IsValid() {
		dst.SetParentSpanID(pcommon.SpanID(parent.SpanID()))
	}
	dst.SetFlags(spanFlags(sc.TraceFlags(), parent))
	dst.SetName(s.Name())
	dst.SetKind(spanKind(s.SpanKind()))
	dst.SetStartTimestamp(timestamp(s.StartTime()))
	dst.SetEndTimestamp(timestamp(s.EndTime()))

	st := s.Status()
	dst.Status().SetCode(statusCode(st.Code))
	dst.Status().SetMessage(st.Description)

	putAttributes(dst.Attributes(), s.Attributes())
	dst.SetDroppedAttributesCount(clampUint32(s.DroppedAttributes()))

	events := s.Events()
	dst.Events().EnsureCapacity(len(events))
	for _, e := range events {
		de := dst.Events().AppendEmpty()
		de.SetName(e.Name)
		de.SetTimestamp(timestamp(e.Time))
		putAttributes(de.Attributes(), e.Attributes)
		de.SetDroppedAttributesCount(clampUint32(e.DroppedAttributeCount))
	}
	dst.SetDroppedEventsCount(clampUint32(s.DroppedEvents()))

	links := s.Links()
	dst.Links().EnsureCapacity(len(links))
	for _, l := range links {
		dl := dst.Links().AppendEmpty()
		dl.SetTraceID(pcommon.TraceID(l.SpanContext.TraceID()))
		dl.SetSpanID(pcommon.SpanID(l.SpanContext.SpanID()))
		dl.TraceState().FromRaw(l.SpanContext.TraceState().String())
		dl.SetFlags(spanFlags(l.SpanContext.TraceFlags(), l.SpanContext))
		putAttributes(dl.Attributes(), l.Attributes)
		dl.SetDroppedAttributesCount(clampUint32(l.DroppedAttributeCount))
	}
	dst.SetDroppedLinksCount(clampUint32(s.DroppedLinks()))
}

// spanFlags builds the OTLP flags word: the W3C trace flags, the bit saying
// remoteness is known, and the bit saying ctx (the parent, or the linked
// span) was remote.
func spanFlags(tf trace.TraceFlags, ctx trace.SpanContext) uint32 {
	flags := uint32(tf) | flagHasIsRemote
	if ctx.IsRemote() {
		flags |= flagIsRemote
	}
	return flags
}

// spanKind maps an API span kind to its OTLP value; unknown kinds become
// unspecified rather than guessing.
func spanKind(k trace.SpanKind) ptrace.SpanKind {
	switch k {
	case trace.SpanKindInternal:
		return ptrace.SpanKindInternal
	case trace.SpanKindServer:
		return ptrace.SpanKindServer
	case trace.SpanKindClient:
		return ptrace.SpanKindClient
	case trace.SpanKindProducer:
		return ptrace.SpanKindProducer
	case trace.SpanKindConsumer:
		return ptrace.SpanKindConsumer
	default:
		return ptrace.SpanKindUnspecified
	}
}

// statusCode maps an API status code to its OTLP value.
func statusCode(c codes.Code) ptrace.StatusCode {
	switch c {
	case codes.Ok:
		return ptrace.StatusCodeOk
	case codes.Error:
		return ptrace.StatusCodeError
	default:
		return ptrace.StatusCodeUnset
	}
}

// timestamp converts t to OTLP nanoseconds since the epoch. Times before the
// epoch (including the zero time.Time of a span that never ended) become 0,
// as in the OTLP exporters, instead of wrapping around to a far future.
func timestamp(t time.Time) pcommon.Timestamp {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return pcommon.Timestamp(uint64(t.UnixNano())) // non-negative: checked above
}

// clampUint32 converts a count to the OTLP uint32, saturating instead of
// overflowing.
func clampUint32(n int) uint32 {
	switch {
	case n < 0:
		return 0
	case int64(n) > math.MaxUint32:
		return math.MaxUint32
	default:
		return uint32(n)
	}
}

// putIter copies the attributes of a sorted attribute iterator into dst.
func putIter(dst pcommon.Map, it attribute.Iterator) {
	dst.EnsureCapacity(it.Len())
	for it.Next() {
		kv := it.Attribute()
		putValue(dst.PutEmpty(string(kv.Key)), kv.Value)
	}
}

// putAttributes copies kvs into dst. A repeated key keeps its last value, as
// OTLP maps hold each key once.
func putAttributes(dst pcommon.Map, kvs []attribute.KeyValue) {
	dst.EnsureCapacity(len(kvs))
	for _, kv := range kvs {
		putValue(dst.PutEmpty(string(kv.Key)), kv.Value)
	}
}

// putValue copies one attribute value into dst, covering every value type of
// the attribute package: scalars, typed slices (as OTLP arrays), byte
// slices, heterogeneous slices, maps and the empty value.
func putValue(dst pcommon.Value, v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		dst.SetBool(v.AsBool())
	case attribute.INT64:
		dst.SetInt(v.AsInt64())
	case attribute.FLOAT64:
		dst.SetDouble(v.AsFloat64())
	case attribute.STRING:
		dst.SetStr(v.AsString())
	case attribute.BOOLSLICE:
		putSlice(dst, v.AsBoolSlice(), pcommon.Value.SetBool)
	case attribute.INT64SLICE:
		putSlice(dst, v.AsInt64Slice(), pcommon.Value.SetInt)
	case attribute.FLOAT64SLICE:
		putSlice(dst, v.AsFloat64Slice(), pcommon.Value.SetDouble)
	case attribute.STRINGSLICE:
		putSlice(dst, v.AsStringSlice(), pcommon.Value.SetStr)
	case attribute.BYTESLICE:
		dst.SetEmptyBytes().FromRaw(v.AsByteSlice())
	case attribute.SLICE:
		putSlice(dst, v.AsSlice(), putValue)
	case attribute.MAP:
		putAttributes(dst.SetEmptyMap(), v.AsMap())
	default:
		// attribute.EMPTY: an OTLP AnyValue with no value set, which is what
		// PutEmpty/AppendEmpty already produced.
	}
}

// putSlice makes dst an OTLP array of vals, each element set by set.
func putSlice[T any](dst pcommon.Value, vals []T, set func(pcommon.Value, T)) {
	s := dst.SetEmptySlice()
	s.EnsureCapacity(len(vals))
	for _, v := range vals {
		set(s.AppendEmpty(), v)
	}
}
