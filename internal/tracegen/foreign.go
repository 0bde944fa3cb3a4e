package tracegen

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// Jaeger's /api/traces JSON, as jaeger-query writes it.
type jaegerDoc struct {
	Data   []jaegerTrace `json:"data"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
	Errors any           `json:"errors"`
}

type jaegerTrace struct {
	TraceID   string                   `json:"traceID"`
	Spans     []jaegerSpan             `json:"spans"`
	Processes map[string]jaegerProcess `json:"processes"`
	Warnings  []string                 `json:"warnings"`
}

type jaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	Flags         uint32      `json:"flags"`
	OperationName string      `json:"operationName"`
	References    []jaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"`
	Duration      int64       `json:"duration"`
	Tags          []jaegerTag `json:"tags"`
	Logs          []jaegerLog `json:"logs"`
	ProcessID     string      `json:"processID"`
	Warnings      []string    `json:"warnings"`
}

type jaegerRef struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jaegerLog struct {
	Timestamp int64       `json:"timestamp"`
	Fields    []jaegerTag `json:"fields"`
}

type jaegerProcess struct {
	ServiceName string      `json:"serviceName"`
	Tags        []jaegerTag `json:"tags"`
}

// jaegerTraceID formats a trace id as Jaeger does: hex without leading
// zeros (the high half is dropped when it is zero).
func jaegerTraceID(id pcommon.TraceID) string {
	hi := binary.BigEndian.Uint64(id[:8])
	lo := binary.BigEndian.Uint64(id[8:])
	if hi == 0 {
		return strconv.FormatUint(lo, 16)
	}
	return strconv.FormatUint(hi, 16) + fmt.Sprintf("%016x", lo)
}

// jaegerSpanID formats a span id as Jaeger does: hex without leading zeros.
func jaegerSpanID(id pcommon.SpanID) string {
	return strconv.FormatUint(binary.BigEndian.Uint64(id[:]), 16)
}

func jaegerTags(attrs pcommon.Map, skip string) []jaegerTag {
	tags := []jaegerTag{}
	for k, v := range attrs.All() {
		if k == skip {
			continue
		}
		tags = append(tags, jaegerTagOf(k, v))
	}
	return tags
}

func jaegerTagOf(k string, v pcommon.Value) jaegerTag {
	switch v.Type() {
	case pcommon.ValueTypeBool:
		return jaegerTag{k, "bool", v.Bool()}
	case pcommon.ValueTypeInt:
		return jaegerTag{k, "int64", v.Int()}
	case pcommon.ValueTypeDouble:
		return jaegerTag{k, "float64", v.Double()}
	case pcommon.ValueTypeBytes:
		return jaegerTag{k, "binary", base64.StdEncoding.EncodeToString(v.Bytes().AsRaw())}
	default:
		return jaegerTag{k, "string", v.AsString()}
	}
}

var jaegerKinds = map[ptrace.SpanKind]string{
	ptrace.SpanKindClient:   "client",
	ptrace.SpanKindServer:   "server",
	ptrace.SpanKindProducer: "producer",
	ptrace.SpanKindConsumer: "consumer",
	ptrace.SpanKindInternal: "internal",
}

// WriteJaeger writes td as Jaeger's /api/traces JSON: one entry in data per
// trace (in order of first appearance), a process per resource, span kind,
// status and scope as the tags Jaeger's OTLP translator writes (span.kind,
// otel.status_code, otel.status_description, error, otel.scope.name,
// otel.scope.version), ids without leading zeros, times in microseconds.
func WriteJaeger(w io.Writer, td ptrace.Traces) error {
	doc := jaegerDoc{Data: []jaegerTrace{}}
	traces := map[pcommon.TraceID]int{}
	type procKey struct {
		trace int
		res   int
	}
	procs := map[procKey]string{}
	for ri := 0; ri < td.ResourceSpans().Len(); ri++ {
		rs := td.ResourceSpans().At(ri)
		for si := 0; si < rs.ScopeSpans().Len(); si++ {
			sc := rs.ScopeSpans().At(si)
			for i := 0; i < sc.Spans().Len(); i++ {
				sp := sc.Spans().At(i)
				ti, ok := traces[sp.TraceID()]
				if !ok {
					ti = len(doc.Data)
					traces[sp.TraceID()] = ti
					doc.Data = append(doc.Data, jaegerTrace{
						TraceID:   jaegerTraceID(sp.TraceID()),
						Spans:     []jaegerSpan{},
						Processes: map[string]jaegerProcess{},
					})
				}
				jt := &doc.Data[ti]
				pid, ok := procs[procKey{ti, ri}]
				if !ok {
					pid = "p" + strconv.Itoa(len(jt.Processes)+1)
					procs[procKey{ti, ri}] = pid
					svc, _ := rs.Resource().Attributes().Get(spans.ResourceServiceName)
					jt.Processes[pid] = jaegerProcess{ServiceName: svc.AsString(), Tags: jaegerTags(rs.Resource().Attributes(), spans.ResourceServiceName)}
				}
				jt.Spans = append(jt.Spans, jaegerSpanOf(sp, sc.Scope(), pid))
			}
		}
	}
	return writeJSON(w, doc)
}

func jaegerSpanOf(sp ptrace.Span, scope pcommon.InstrumentationScope, pid string) jaegerSpan {
	js := jaegerSpan{
		TraceID:       jaegerTraceID(sp.TraceID()),
		SpanID:        jaegerSpanID(sp.SpanID()),
		Flags:         1,
		OperationName: sp.Name(),
		References:    []jaegerRef{},
		StartTime:     int64(sp.StartTimestamp()) / 1000,
		Duration:      int64(sp.EndTimestamp()-sp.StartTimestamp()) / 1000,
		Tags:          jaegerTags(sp.Attributes(), ""),
		Logs:          []jaegerLog{},
		ProcessID:     pid,
	}
	if !sp.ParentSpanID().IsEmpty() {
		js.References = append(js.References, jaegerRef{"CHILD_OF", js.TraceID, jaegerSpanID(sp.ParentSpanID())})
	}
	for i := 0; i < sp.Links().Len(); i++ {
		l := sp.Links().At(i)
		js.References = append(js.References, jaegerRef{"FOLLOWS_FROM", jaegerTraceID(l.TraceID()), jaegerSpanID(l.SpanID())})
	}
	if k, ok := jaegerKinds[sp.Kind()]; ok {
		js.Tags = append(js.Tags, jaegerTag{"span.kind", "string", k})
	}
	switch sp.Status().Code() {
	case ptrace.StatusCodeOk:
		js.Tags = append(js.Tags, jaegerTag{"otel.status_code", "string", "OK"})
	case ptrace.StatusCodeError:
		js.Tags = append(js.Tags, jaegerTag{"otel.status_code", "string", "ERROR"}, jaegerTag{"error", "bool", true})
	}
	if msg := sp.Status().Message(); msg != "" {
		js.Tags = append(js.Tags, jaegerTag{"otel.status_description", "string", msg})
	}
	if scope.Name() != "" {
		js.Tags = append(js.Tags, jaegerTag{"otel.scope.name", "string", scope.Name()})
	}
	if scope.Version() != "" {
		js.Tags = append(js.Tags, jaegerTag{"otel.scope.version", "string", scope.Version()})
	}
	for i := 0; i < sp.Events().Len(); i++ {
		ev := sp.Events().At(i)
		fields := []jaegerTag{{"event", "string", ev.Name()}}
		fields = append(fields, jaegerTags(ev.Attributes(), "")...)
		js.Logs = append(js.Logs, jaegerLog{Timestamp: int64(ev.Timestamp()) / 1000, Fields: fields})
	}
	return js
}

// TempoShape selects which of Grafana Tempo's trace JSON shapes to write.
type TempoShape int

const (
	// TempoBatches is the older /api/traces/<id> shape: {"batches": [...]}
	// with instrumentationLibrarySpans.
	TempoBatches TempoShape = iota
	// TempoTrace is the v2 API shape: {"trace": {"resourceSpans": [...]}}.
	TempoTrace
)

// WriteTempoBatches writes td in Tempo's older shape (see [TempoBatches]).
func WriteTempoBatches(w io.Writer, td ptrace.Traces) error {
	return WriteTempo(w, td, TempoBatches)
}

// WriteTempoTrace writes td in Tempo's v2 shape (see [TempoTrace]).
func WriteTempoTrace(w io.Writer, td ptrace.Traces) error {
	return WriteTempo(w, td, TempoTrace)
}

// WriteTempo writes td as Grafana Tempo's trace JSON in the given shape:
// protobuf JSON with base64 trace and span ids, enum names
// (SPAN_KIND_CLIENT, STATUS_CODE_ERROR) and 64-bit integers as strings.
func WriteTempo(w io.Writer, td ptrace.Traces, shape TempoShape) error {
	var m ptrace.JSONMarshaler
	buf, err := m.MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("marshal OTLP JSON: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(buf))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("re-read OTLP JSON: %w", err)
	}
	rss, _ := doc["resourceSpans"].([]any)
	if rss == nil {
		rss = []any{}
	}
	for _, rs := range rss {
		rsm, _ := rs.(map[string]any)
		scopes, _ := rsm["scopeSpans"].([]any)
		for _, sc := range scopes {
			scm, _ := sc.(map[string]any)
			sps, _ := scm["spans"].([]any)
			for _, sp := range sps {
				if err := tempoSpan(sp.(map[string]any)); err != nil {
					return err
				}
			}
			if shape == TempoBatches {
				if s, ok := scm["scope"]; ok {
					delete(scm, "scope")
					scm["instrumentationLibrary"] = s
				}
			}
		}
		if shape == TempoBatches {
			delete(rsm, "scopeSpans")
			rsm["instrumentationLibrarySpans"] = scopes
		}
	}
	var out any
	switch shape {
	case TempoBatches:
		out = map[string]any{"batches": rss}
	default:
		out = map[string]any{"trace": map[string]any{"resourceSpans": rss}}
	}
	return writeJSON(w, out)
}

var (
	tempoKinds    = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	tempoStatuses = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// tempoSpan rewrites one span of pdata's JSON the way Tempo writes it.
func tempoSpan(sp map[string]any) error {
	for _, k := range []string{"traceId", "spanId", "parentSpanId"} {
		if err := hexToBase64(sp, k); err != nil {
			return err
		}
	}
	links, _ := sp["links"].([]any)
	for _, l := range links {
		lm := l.(map[string]any)
		for _, k := range []string{"traceId", "spanId"} {
			if err := hexToBase64(lm, k); err != nil {
				return err
			}
		}
	}
	sp["kind"] = enumName(sp["kind"], tempoKinds)
	if st, ok := sp["status"].(map[string]any); ok {
		if c, ok := st["code"]; ok {
			st["code"] = enumName(c, tempoStatuses)
		}
	}
	return nil
}

func hexToBase64(m map[string]any, key string) error {
	s, ok := m[key].(string)
	if !ok || s == "" {
		return nil
	}
	raw, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%s %q is not hex: %w", key, s, err)
	}
	m[key] = base64.StdEncoding.EncodeToString(raw)
	return nil
}

func enumName(v any, names []string) any {
	n, ok := v.(json.Number)
	if !ok {
		if v == nil {
			return names[0]
		}
		return v
	}
	i, err := n.Int64()
	if err != nil || i < 0 || int(i) >= len(names) {
		return v
	}
	return names[i]
}

// writeJSON writes v as indented JSON (map keys sorted, so deterministic)
// with HTML escaping off, as the real APIs write it.
func writeJSON(w io.Writer, v any) error {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err := io.WriteString(w, buf.String())
	return err
}
