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
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// Shape is one hostile input: a name and a writer of n units (spans, bytes
// or lines, as Unit says).
type Shape struct {
	// Name identifies the shape on the command line and in reports.
	Name string
	// Unit says what n counts: "spans", "bytes" or "lines".
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
