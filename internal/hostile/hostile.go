// Package hostile writes trace dumps shaped to hurt a trace analyzer: deep
// parent chains, huge fan-out, a line of gigabytes, a document with a huge
// unknown field, one enormous trace, duplicates without end, a compression
// bomb of empty protobuf frames. Each shape is small to describe and, if
// compressed, small on disk, while the work or memory a naive reader spends
// on it grows with a size parameter. The generator streams: memory stays
// constant whatever the size, so CI can make gigabytes of input on the fly
// (scripts/hostile.sh) instead of storing them.
//
// Every writer is deterministic: one shape and size, one byte stream.
package hostile

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// Shape is one hostile input: a name and a writer of n units (spans, bytes
// or lines, as Unit says).
type Shape struct {
	// Name identifies the shape on the command line and in reports.
	Name string
	// Unit says what n counts: "spans", "bytes", "lines", "levels" (of
	// nesting), "executions", "scopes" (pool scopes), "records" or
	// "traces".
	Unit string
	// Ext is the file extension the dump is written with.
	Ext string
	// Zstd is true when the dump is written zstd-compressed (a bomb: small
	// on disk, large once decompressed).
	Zstd bool
	// Write writes the dump of size n to w.
	Write func(w io.Writer, n int64) error
}

// Shapes returns every shape, sorted by name.
func Shapes() []Shape {
	out := []Shape{
		{"invoke-chain", "spans", "otlp.jsonl", false, func(w io.Writer, n int64) error { return Chain(w, n, spans.SpanInvoke) }},
		{"handshake-chain", "spans", "otlp.jsonl", false, func(w io.Writer, n int64) error { return Chain(w, n, spans.SpanHandshake) }},
		{"acquire-fanout", "spans", "otlp.jsonl", false, FanOut},
		{"long-line", "bytes", "otlp.jsonl.zst", true, LongLine},
		{"unknown-field-otlp", "bytes", "otlp.json.zst", true, func(w io.Writer, n int64) error { return UnknownField(w, "otlp", n) }},
		{"unknown-field-jaeger", "bytes", "jaeger.json.zst", true, func(w io.Writer, n int64) error { return UnknownField(w, "jaeger", n) }},
		{"unknown-field-tempo", "bytes", "tempo.json.zst", true, func(w io.Writer, n int64) error { return UnknownField(w, "tempo", n) }},
		{"jaeger-big-trace", "spans", "jaeger.json.zst", true, JaegerTrace},
		{"duplicate-lines", "lines", "otlp.jsonl.zst", true, DuplicateLines},
		{"proto-zeros", "bytes", "otlp.pb.zst", true, ProtoZeros},
		{"deep-cache-key", "levels", "otlp.jsonl", false, DeepCacheKey},
		{"executions", "executions", "otlp.jsonl", false, Executions},
		{"pool-scopes", "scopes", "otlp.jsonl.zst", true, PoolScopes},
		{"wide-cell", "scopes", "otlp.jsonl.zst", true, WideCell},
		{"span-names", "spans", "otlp.jsonl", false, SpanNames},
		{"zstd-records", "record-spans", "otlp-proto-zstd-records.bin", false, ZstdRecords},
		{"jaeger-errors", "traces", "jaeger.json", false, JaegerErrors},
		{"tempo-raw-error", "bytes", "tempo.json", false, TempoRawError},
		{"tempo-wide-batches", "bytes", "tempo.json", false, TempoWideBatches},
		{"jaeger-wide-traces", "bytes", "jaeger.json", false, JaegerWideTraces},
		{"tiny-span-lines", "bytes", "otlp.jsonl", false, TinySpanLines},
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ShapeByName returns the shape called name.
func ShapeByName(name string) (Shape, error) {
	var names []string
	for _, s := range Shapes() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Shape{}, fmt.Errorf("unknown shape %q: expected one of %q", name, names)
}

// WriteShape writes shape s of size n to w, through a zstd stream when the
// shape is compressed.
func WriteShape(w io.Writer, s Shape, n int64) error {
	if !s.Zstd {
		return s.Write(w, n)
	}
	zw, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return fmt.Errorf("zstd encoder: %w", err)
	}
	if err := s.Write(zw, n); err != nil {
		zw.Close()
		return err
	}
	return zw.Close()
}

// traceID is the one trace of the span shapes.
const traceID = "5ca1ab1e0000000000000000000000aa"

// baseNanos is the start of every span shape (2026-04-30T09:00:00Z).
const baseNanos = 1777539600_000000000

// spansPerLine is how many spans one JSON line of the span shapes holds.
const spansPerLine = 1000

// spanID is the hex id of span i (1-based; 0 is no span).
func spanID(b []byte, i int64) []byte {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(i)|1<<62)
	const hex = "0123456789abcdef"
	for _, c := range id {
		b = append(b, hex[c>>4], hex[c&15])
	}
	return b
}

// lineHead opens one OTLP JSON line of one resource and scope.
const lineHead = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"hostile"}},` +
	`{"key":"service.instance.id","value":{"stringValue":"hostile-1"}}]},"scopeSpans":[{"scope":{"name":"` + spans.ScopeName + `"},"spans":[`

// lineTail closes what lineHead opened.
const lineTail = "]}]}]}\n"

// appendSpan appends one OTLP JSON span: id i, parent p (0: none), the
// name, a start at i microseconds after the base, lasting long enough to
// cover its children, and the attributes given as ready JSON (may be empty).
func appendSpan(b []byte, i, p int64, name string, end int64, attrs string) []byte {
	b = append(b, `{"traceId":"`+traceID+`","spanId":"`...)
	b = spanID(b, i)
	if p > 0 {
		b = append(b, `","parentSpanId":"`...)
		b = spanID(b, p)
	}
	b = append(b, `","name":"`...)
	b = append(b, name...)
	b = append(b, `","kind":1,"startTimeUnixNano":"`...)
	b = strconv.AppendInt(b, baseNanos+i*1000, 10)
	b = append(b, `","endTimeUnixNano":"`...)
	b = strconv.AppendInt(b, baseNanos+end*1000, 10)
	b = append(b, '"')
	if attrs != "" {
		b = append(b, `,"attributes":[`...)
		b = append(b, attrs...)
		b = append(b, ']')
	}
	return append(b, '}')
}

// writeSpans writes n spans as OTLP JSON lines of spansPerLine spans; span
// i (1-based) is made by add.
func writeSpans(w io.Writer, n int64, add func(b []byte, i int64) []byte) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	for i := int64(1); i <= n; {
		b = append(b[:0], lineHead...)
		for k := 0; k < spansPerLine && i <= n; k, i = k+1, i+1 {
			if k > 0 {
				b = append(b, ',')
			}
			b = add(b, i)
		}
		b = append(b, lineTail...)
		bw.Write(b) // bufio errors are sticky: Flush reports the first
	}
	return bw.Flush()
}

// Chain writes n spans of one trace, each the parent of the next: a runaway
// recursion. Every span is named name (plugin.mcp.invoke or
// plugin.mcp.connection.handshake make the built-in rules' subtree scopes
// and under() walks as deep as the chain).
func Chain(w io.Writer, n int64, name string) error {
	return writeSpans(w, n, func(b []byte, i int64) []byte {
		return appendSpan(b, i, i-1, name, n+1, "")
	})
}

// FanOut writes one invoke span with n-1 acquire children, each a hit with
// the same cache key: the pool measure sorts an invocation's acquires.
func FanOut(w io.Writer, n int64) error {
	const acqAttrs = `{"key":"` + spans.AttrCacheHit + `","value":{"boolValue":true}},` +
		`{"key":"` + spans.AttrCacheKey + `","value":{"stringValue":"k1"}}`
	return writeSpans(w, n, func(b []byte, i int64) []byte {
		if i == 1 {
			return appendSpan(b, 1, 0, spans.SpanInvoke, n+1, "")
		}
		// Children start in decreasing order so an insertion into a list
		// kept in start order walks the whole list each time.
		return appendSpan(b, n+2-i, 1, spans.SpanAcquire, n+2-i, acqAttrs)
	})
}

// LongLine writes one OTLP JSON line of n bytes (at least a few dozen): a
// resource attribute whose string value is the whole line.
func LongLine(w io.Writer, n int64) error {
	const head = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"`
	const tail = `"}}]},"scopeSpans":[]}]}` + "\n"
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(head)
	if err := fill(bw, n-int64(len(head)+len(tail)), 'a'); err != nil {
		return err
	}
	bw.WriteString(tail)
	return bw.Flush()
}

// fill writes n copies of c.
func fill(w io.Writer, n int64, c byte) error {
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = c
	}
	for n > 0 {
		k := min(n, int64(len(chunk)))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// UnknownField writes one document of format (otlp, jaeger or tempo) of
// about n bytes, holding one valid span after an unknown top-level field
// whose value is an array of n bytes of numbers: a reader that buffers a
// value it skips holds all of it.
func UnknownField(w io.Writer, format string, n int64) error {
	var head, tail string
	span := `{"traceId":"` + traceID + `","spanId":"4000000000000001","name":"` + spans.SpanInvoke +
		`","kind":1,"startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600000001000"}`
	otlpRS := `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"hostile"}}]},"scopeSpans":[{"scope":{"name":"x"},"spans":[` + span + `]}]}`
	switch format {
	// A newline after the opening brace makes the file a document, not a
	// JSON line.
	case "otlp":
		head, tail = "{\n"+`"x_unknown":[`, `],"resourceSpans":[`+otlpRS+"]}\n"
	case "tempo":
		head, tail = "{\n"+`"x_unknown":[`, `],"batches":[`+otlpRS+"]}\n"
	case "jaeger":
		head = "{\n" + `"x_unknown":[`
		tail = `],"data":[{"traceID":"` + traceID + `","spans":[{"traceID":"` + traceID +
			`","spanID":"4000000000000001","operationName":"` + spans.SpanInvoke +
			`","references":[],"startTime":1777539600000000,"duration":1,"tags":[],"processID":"p1"}],` +
			`"processes":{"p1":{"serviceName":"hostile","tags":[]}}}]}` + "\n"
	default:
		return fmt.Errorf("unknown document format %q: expected otlp, jaeger or tempo", format)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(head)
	// "1,1,1,...": n bytes of a valid array body.
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = "1,"[i%2]
	}
	rest := n - 1
	for rest > int64(len(chunk)) {
		bw.Write(chunk)
		rest -= int64(len(chunk))
	}
	bw.Write(chunk[:max(rest, 0)&^1]) // "1,1,...1," then a last "1"
	bw.WriteString("1")
	bw.WriteString(tail)
	return bw.Flush()
}

// JaegerTrace writes one Jaeger /api/traces document holding one trace of
// n spans: a reader that buffers a whole trace holds all of them.
func JaegerTrace(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"data":[{"traceID":"` + traceID + `","spans":[`)
	var b []byte
	for i := int64(1); i <= n; i++ {
		b = b[:0]
		if i > 1 {
			b = append(b, ',')
		}
		b = append(b, `{"traceID":"`+traceID+`","spanID":"`...)
		b = spanID(b, i)
		b = append(b, `","operationName":"`+spans.SpanInvoke+`","references":[`...)
		if i > 1 {
			b = append(b, `{"refType":"CHILD_OF","traceID":"`+traceID+`","spanID":"`...)
			b = spanID(b, 1)
			b = append(b, `"}`...)
		}
		b = append(b, `],"startTime":`...)
		b = strconv.AppendInt(b, baseNanos/1000+i, 10)
		b = append(b, `,"duration":1,"tags":[],"processID":"p1"}`...)
		bw.Write(b)
	}
	bw.WriteString(`],"processes":{"p1":{"serviceName":"hostile","tags":[]}}}]}` + "\n")
	return bw.Flush()
}

// DuplicateLines writes the same OTLP JSON line of one span n times.
func DuplicateLines(w io.Writer, n int64) error {
	line := appendSpan([]byte(lineHead), 1, 0, spans.SpanInvoke, 2, "")
	line = append(line, lineTail...)
	bw := bufio.NewWriterSize(w, 1<<20)
	for range n {
		bw.Write(line)
	}
	return bw.Flush()
}

// ProtoZeros writes one valid length-prefixed OTLP protobuf record followed
// by zero bytes up to about n bytes in all: every 4 zeros read as an empty
// record.
func ProtoZeros(w io.Writer, n int64) error {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spans.ResourceServiceName, "hostile")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetName(spans.SpanInvoke)
	sp.SetTraceID([16]byte{0x5c, 0xa1, 0xab, 0x1e, 15: 0xaa})
	sp.SetSpanID([8]byte{0x40, 7: 1})
	sp.SetStartTimestamp(baseNanos)
	sp.SetEndTimestamp(baseNanos + 1000)
	var m ptrace.ProtoMarshaler
	rec, err := m.MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("marshal the valid record: %w", err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(rec)))
	bw.Write(hdr[:])
	bw.Write(rec)
	zeros := (n - int64(len(rec)+4)) &^ 3 // whole empty frames
	if err := fill(bw, zeros, 0); err != nil {
		return err
	}
	return bw.Flush()
}

// Shapes against the defences by principle: each is what one defence must
// hold against, at a size that breaks a defence by special case.

// DeepCacheKey writes one OTLP JSON line of an invocation whose acquire's
// plugin.mcp.cache_key (an attribute the index keeps) is an array nested n
// deep: a decoder or an AsString that recurses without a limit overflows
// the stack (a million levels is 25 MB raw, 28 KB in zstd).
func DeepCacheKey(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	b := append([]byte(lineHead), appendSpan(nil, 1, 0, spans.SpanInvoke, 3, "")...)
	b = append(b, ',')
	b = appendSpan(b, 2, 1, spans.SpanAcquire, 3, `{"key":"`+spans.AttrCacheHit+`","value":{"boolValue":false}},{"key":"`+spans.AttrCacheKey+`","value":@@`)
	head, tail, _ := bytes.Cut(b, []byte("@@"))
	bw.Write(head)
	const open, shut = `{"arrayValue":{"values":[`, `]}}`
	for range n {
		bw.WriteString(open)
	}
	bw.WriteString(`{"stringValue":"k"}`)
	for range n {
		bw.WriteString(shut)
	}
	bw.WriteString("}")
	bw.Write(tail)
	bw.WriteString(lineTail)
	return bw.Flush()
}

// Executions writes n executions over 64 pool scopes, each its own trace
// of an invocation (invoke, a cold acquire of its own key, a handshake of
// its own session, call_tool): check's per-execution work must stay O(1)
// amortized however many distinct values the dump holds.
func Executions(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	for e := int64(0); e < n; e++ {
		scope := e % 64
		b = b[:0]
		// Every execution is its own session (a cold miss on its own
		// key): the value table grows with the executions.
		b = append(b, `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gateway"}},{"key":"service.instance.id","value":{"stringValue":"scope-`...)
		b = strconv.AppendInt(b, scope, 10)
		b = append(b, `"}}]},"scopeSpans":[{"scope":{"name":"`+spans.ScopeName+`"},"spans":[`...)
		b = appendExecution(b, e, true)
		b = append(b, lineTail...)
		bw.Write(b)
	}
	return bw.Flush()
}

// appendExecution appends the spans of execution e (a trace of its own,
// ids from e) as OTLP JSON, a miss with a handshake when miss is true.
func appendExecution(b []byte, e int64, miss bool) []byte {
	tid := fmt.Sprintf("%016x%016x", uint64(e)|1<<60, uint64(e))
	base := e*8 + 1
	sid := func(i int64) string { return string(spanID(nil, base+i)) }
	at := baseNanos + e*1_000_000
	span := func(i, parent int64, name string, start, end int64, attrs string) {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"traceId":"`+tid+`","spanId":"`+sid(i)+`"`...)
		if parent >= 0 {
			b = append(b, `,"parentSpanId":"`+sid(parent)+`"`...)
		}
		b = append(b, `,"name":"`+name+`","kind":1,"startTimeUnixNano":"`...)
		b = strconv.AppendInt(b, at+start, 10)
		b = append(b, `","endTimeUnixNano":"`...)
		b = strconv.AppendInt(b, at+end, 10)
		b = append(b, `","attributes":[`+attrs+`]}`...)
	}
	session := `{"key":"` + spans.AttrSessionID + `","value":{"stringValue":"s-` + strconv.FormatInt(e, 10) + `"}}`
	hit := `{"key":"` + spans.AttrCacheKey + `","value":{"stringValue":"k-` + strconv.FormatInt(e, 10) + `"}},{"key":"` + spans.AttrCacheHit + `","value":{"boolValue":` + strconv.FormatBool(!miss) + `}}`
	if miss {
		hit += `,{"key":"` + spans.AttrMissReason + `","value":{"stringValue":"` + spans.MissCold + `"}}`
	}
	span(0, -1, spans.SpanInvoke, 0, 900, `{"key":"`+spans.AttrToolName+`","value":{"stringValue":"t"}}`)
	span(1, 0, spans.SpanAcquire, 10, 300, hit)
	if miss {
		span(2, 1, spans.SpanHandshake, 20, 290, session)
	}
	span(3, 0, spans.SpanCallTool, 400, 800, session+`,{"key":"`+spans.AttrMethodName+`","value":{"stringValue":"tools/call"}}`)
	return b
}

// PoolScopes writes n pool scopes (n resources, each its own
// service.instance.id) of one execution each: every per-scope list of a
// report grows with n.
func PoolScopes(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	for e := int64(0); e < n; e++ {
		b = append(b[:0], `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gateway"}},{"key":"service.instance.id","value":{"stringValue":"pool-scope-`...)
		b = strconv.AppendInt(b, e, 10)
		b = append(b, `"}}]},"scopeSpans":[{"scope":{"name":"`+spans.ScopeName+`"},"spans":[`...)
		b = appendExecution(b, e, true)
		b = append(b, lineTail...)
		bw.Write(b)
	}
	return bw.Flush()
}

// WideCell writes n pool scopes with short names and one whose name is
// 64 KiB: a table padded to its widest cell writes n times 64 KiB.
func WideCell(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	wide := strings.Repeat("W", 64<<10)
	var b []byte
	for e := int64(0); e <= n; e++ {
		name := "s" + strconv.FormatInt(e, 10)
		if e == 0 {
			name = wide
		}
		b = append(b[:0], `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gateway"}},{"key":"service.instance.id","value":{"stringValue":"`+name+`"}}]},"scopeSpans":[{"scope":{"name":"`+spans.ScopeName+`"},"spans":[`...)
		b = appendExecution(b, e, true)
		b = append(b, lineTail...)
		bw.Write(b)
	}
	return bw.Flush()
}

// SpanNames writes n spans, each its own trace, under 80 distinct names of
// 1 KiB: a regex of thousands of states costs its states times the name's
// length on each name it is run on, so a rule must run it once per name.
func SpanNames(w io.Writer, n int64) error {
	long := strings.Repeat("segment.", 128)
	return writeSpans(w, n, func(b []byte, i int64) []byte {
		start := len(b)
		b = appendSpan(b, i, 0, "app.operation."+strconv.FormatInt(i%80, 10)+"."+long, i+1, "")
		// One trace per span: the trace id, the span's first field, is
		// rewritten in place (same length).
		copy(b[start+len(`{"traceId":"`):], fmt.Sprintf("%032x", uint64(i)|1<<62))
		return b
	})
}

// ZstdRecords writes 8 of the Collector's per-record zstd frames, each a
// length-prefixed zstd frame of one OTLP protobuf record of n spans (75
// bytes a span decompressed, a few compressed): the budget must hold on the
// framed-records path too, a record past it refused before it is inflated.
func ZstdRecords(w io.Writer, n int64) error {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(spans.ResourceServiceName, "hostile")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	for i := range n {
		sp := ss.AppendEmpty()
		sp.SetName(spans.SpanInvoke)
		sp.SetTraceID([16]byte{0x5c, 0xa1, 14: byte(i >> 8), 15: byte(i)})
		sp.SetSpanID([8]byte{0x40, 6: byte(i >> 8), 7: byte(i)})
		sp.SetStartTimestamp(baseNanos)
		sp.SetEndTimestamp(baseNanos + 1000)
		sp.Attributes().PutStr(spans.AttrToolName, "a-tool-name-long-enough-to-take-some-room")
	}
	var m ptrace.ProtoMarshaler
	rec, err := m.MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("marshal the record: %w", err)
	}
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("zstd encoder: %w", err)
	}
	frame := enc.EncodeAll(rec, nil)
	enc.Close()
	bw := bufio.NewWriterSize(w, 1<<20)
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(frame)))
	for range 8 {
		bw.Write(hdr[:])
		bw.Write(frame)
	}
	return bw.Flush()
}

// JaegerErrors writes a Jaeger /api/traces answer for n traces of which
// only the first was loaded (a complete, passing execution): its errors
// array names the other n-1, so the dump is missing data by the source's
// own word.
func JaegerErrors(w io.Writer, n int64) error {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty()
	ss.Resource().Attributes().PutStr(spans.ResourceServiceName, "gateway")
	sl := ss.ScopeSpans().AppendEmpty().Spans()
	tid := [16]byte{0x5c, 0xa1, 0xab, 0x1e, 15: 0xaa}
	add := func(id, parent byte, name string, start, end int64) pcommon.Map {
		sp := sl.AppendEmpty()
		sp.SetTraceID(tid)
		sp.SetSpanID([8]byte{0x40, 7: id})
		if parent > 0 {
			sp.SetParentSpanID([8]byte{0x40, 7: parent})
		}
		sp.SetName(name)
		sp.SetStartTimestamp(pcommon.Timestamp(baseNanos + start*1000))
		sp.SetEndTimestamp(pcommon.Timestamp(baseNanos + end*1000))
		return sp.Attributes()
	}
	add(1, 0, spans.SpanInvoke, 0, 900).PutStr(spans.AttrToolName, "t")
	acq := add(2, 1, spans.SpanAcquire, 10, 300)
	acq.PutBool(spans.AttrCacheHit, false)
	acq.PutStr(spans.AttrCacheKey, "k")
	acq.PutStr(spans.AttrMissReason, spans.MissCold)
	add(3, 2, spans.SpanHandshake, 20, 290).PutStr(spans.AttrSessionID, "s1")
	call := add(4, 1, spans.SpanCallTool, 400, 800)
	call.PutStr(spans.AttrSessionID, "s1")
	call.PutStr(spans.AttrMethodName, "tools/call")
	var doc bytes.Buffer
	if err := tracegen.WriteJaeger(&doc, td); err != nil {
		return err
	}
	var errs []byte
	for i := int64(1); i < n; i++ {
		if i > 1 {
			errs = append(errs, ',')
		}
		errs = fmt.Appendf(errs, `{"code":500,"msg":"trace not found","traceID":"%032x"}`, i)
	}
	out := bytes.Replace(doc.Bytes(), []byte(`"errors": null`), append(append([]byte(`"errors":[`), errs...), ']'), 1)
	_, err := w.Write(out)
	return err
}

// TempoRawError writes what a Tempo proxy answered instead of trace JSON:
// an error body whose 12th byte starts raw 0xff bytes, padded to n bytes.
func TempoRawError(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(`{"batches":[` + "\xff\xfe\xfd" + ` upstream error: trace not found`)
	if err := fill(bw, n-int64(bw.Buffered())-1, ' '); err != nil {
		return err
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// tempoBatchBytes is the size of TempoWideBatches' batches: just under
// the 4 MiB record cap of --max-memory 64MiB.
const tempoBatchBytes = 4_000_000

// TempoWideBatches writes a Tempo trace document ({"batches": [...]}) of
// n bytes whose batches are one span of tiny attributes each, of
// tempoBatchBytes (the last one less, the rest padded with spaces): the
// reader normalises each batch through encoding/json's map[string]any
// and then pdata, which hold some twenty and four times its size, so a
// reader that does not charge them to the budget holds a hundred MB per
// batch in flight.
func TempoWideBatches(w io.Writer, n int64) error {
	return wideArray(w, n, "{\"batches\":[\n", "]}\n", tempoWideBatch)
}

// wideArray writes a JSON document of n bytes, head and tail around an
// array of elements of tempoBatchBytes each, element(i, size) making
// element i of at most size bytes (nil: none fits), each padded with
// spaces to size, and the rest of the n bytes padded with spaces.
func wideArray(w io.Writer, n int64, head, tail string, element func(i int, size int64) []byte) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	bw.WriteString(head)
	left := n - int64(len(head)+len(tail))
	for i := 0; ; i++ {
		sep := min(i, 1) // the comma before every element but the first
		size := min(left-int64(sep), tempoBatchBytes)
		b := element(i, size)
		if b == nil {
			break
		}
		b = append(b, bytes.Repeat([]byte{' '}, int(size)-len(b))...) // each element is size bytes
		if sep == 1 {
			bw.WriteString(",")
		}
		bw.Write(b)
		left -= int64(sep + len(b))
	}
	if err := fill(bw, left, ' '); err != nil {
		return err
	}
	bw.WriteString(tail)
	return bw.Flush()
}

// tempoWideBatch is batch i of TempoWideBatches, of at most size bytes:
// as many attributes as fit; nil when not even a span fits.
func tempoWideBatch(i int, size int64) []byte {
	const attr = `{"key":"a","value":{"intValue":"1"}}`
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], uint64(i+1)|1<<62)
	head := `{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"hostile"}}]},` +
		`"instrumentationLibrarySpans":[{"instrumentationLibrary":{"name":"` + spans.ScopeName + `"},"spans":[{` +
		`"traceId":"XKGrHgAAAAAAAAAAAAAAqg==","spanId":"` + base64.StdEncoding.EncodeToString(id[:]) + `","name":"` + spans.SpanInvoke + `",` +
		`"kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600000001000","attributes":[`
	const tail = `]}]}]}`
	room := size - int64(len(head)+len(tail))
	if room < 0 {
		return nil
	}
	k := (room + 1) / int64(len(attr)+1)
	b := make([]byte, 0, size)
	b = append(b, head...)
	for j := range k {
		if j > 0 {
			b = append(b, ',')
		}
		b = append(b, attr...)
	}
	return append(b, tail...)
}

// tinySpanLineBytes is the size of TinySpanLines' lines.
const tinySpanLineBytes = 140_000

// TinySpanLines writes n bytes of OTLP JSON lines of tinySpanLineBytes
// each (the last one less): one span with a valid trace id, then as many
// empty spans ({}) as fit, padded with spaces. A decoder holds a span at
// 80 bytes whatever its size in the line, some thirty times an empty
// one's: a reader that does not charge its spans to the budget holds
// some 5 MB per line in flight, on every worker. The empty spans' trace
// ids are invalid: they are left out, with a warning, once decoded; the
// valid span of each line is read.
func TinySpanLines(w io.Writer, n int64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var b []byte
	for i := int64(1); n > 0; i++ {
		b = append(append(b[:0], lineHead...), appendSpan(nil, i, 0, spans.SpanInvoke, i+1, "")...)
		size := min(n, tinySpanLineBytes)
		fixed := int64(len(b) + len(lineTail))
		if size < fixed {
			break
		}
		for k := (size - fixed) / 3; k > 0; k-- {
			b = append(b, ",{}"...)
		}
		b = append(b, lineTail[:len(lineTail)-1]...)
		for int64(len(b)) < size-1 {
			b = append(b, ' ')
		}
		b = append(b, '\n')
		bw.Write(b) // bufio errors are sticky: Flush reports the first
		n -= size
	}
	if err := fill(bw, n, ' '); err != nil {
		return err
	}
	return bw.Flush()
}

// JaegerWideTraces writes a Jaeger document ({"data": [...]}) of n bytes
// whose traces are spans of two tags each, of tempoBatchBytes (the last
// one less, the rest padded with spaces): each trace fits the record cap
// of --max-memory 64MiB, and decoding it (encoding/json's typed tree,
// then pdata) holds several times its size, so a reader that does not
// charge them to the budget holds tens of MB per trace in flight.
func JaegerWideTraces(w io.Writer, n int64) error {
	return wideArray(w, n, "{\"data\":[\n", "]}\n", jaegerWideTrace)
}

// jaegerWideTrace is trace i of JaegerWideTraces, of at most size bytes:
// as many spans as fit; nil when not even a span fits.
func jaegerWideTrace(i int, size int64) []byte {
	tid := fmt.Sprintf("%032x", uint64(i+1)|1<<62)
	head := `{"traceID":"` + tid + `","processes":{"p1":{"serviceName":"hostile","tags":[]}},"spans":[`
	const tail = `]}`
	span := func(b []byte, k int64) []byte {
		b = append(b, `{"traceID":"`+tid+`","spanID":"`...)
		b = fmt.Appendf(b, "%016x", uint64(k+1)|1<<62)
		return append(b, `","operationName":"`+spans.SpanInvoke+`","startTime":1777539600000000,"duration":1,"processID":"p1",`+
			`"tags":[{"key":"a","type":"int64","value":1},{"key":"b","type":"string","value":"x"}]}`...)
	}
	one := int64(len(span(nil, 0)))
	room := size - int64(len(head)+len(tail))
	if room < one {
		return nil
	}
	k := (room + 1) / (one + 1)
	b := make([]byte, 0, size)
	b = append(b, head...)
	for j := range k {
		if j > 0 {
			b = append(b, ',')
		}
		b = span(b, j)
	}
	return append(b, tail...)
}
