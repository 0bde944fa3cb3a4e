package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// Generators of hostile inputs: small to write, linear in their size, each a
// shape the readers must answer with a bad record naming its place rather
// than a crash.

const (
	hostileTraceID = "5ca1ab1e0000000000000000000000aa"
	hostileSpanHex = `"traceId":"` + hostileTraceID + `","spanId":"40000000000000%02d","name":"plugin.mcp.invoke","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600000001000"`
)

// hostileSpanJSON is an OTLP JSON span (without its closing brace) with id n.
func hostileSpanJSON(n int) string {
	return strings.Replace(hostileSpanHex, "%02d", string([]byte{'0' + byte(n/10), '0' + byte(n%10)}), 1)
}

// nestedAnyValueJSON is an OTLP JSON AnyValue nesting depth arrays (or
// kvlists) around a string.
func nestedAnyValueJSON(depth int, kvlist bool) string {
	open, close := `{"arrayValue":{"values":[`, `]}}`
	if kvlist {
		open, close = `{"kvlistValue":{"values":[{"key":"k","value":`, `}]}}`
	}
	return strings.Repeat(open, depth) + `{"stringValue":"x"}` + strings.Repeat(close, depth)
}

// otlpLineWithValue is one OTLP JSON line: a span whose attribute key has
// value v.
func otlpLineWithValue(n int, key, v string) string {
	return `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) +
		`,"attributes":[{"key":"` + key + `","value":` + v + `}]}]}]}]}` + "\n"
}

// otlpLine is a plain one-span OTLP JSON line.
func otlpLine(n int) string {
	return `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) + `}]}]}]}` + "\n"
}

// otlpLineBrackets is a one-span line whose span has an unknown field of
// n nested arrays: its depth is 7 + n (request, resourceSpans, a resource
// spans, scopeSpans, a scope spans, spans, the span).
func otlpLineBrackets(id, n int) string {
	return `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + hostileSpanJSON(id) +
		`,"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]}]}]}` + "\n"
}

// nestedAnyValueProto is a KeyValue key whose value nests depth
// ArrayValues, written in one pass: each level's length is known from the
// inside out before a byte is written.
func nestedAnyValueProto(key string, depth int) []byte {
	return nestedAnyValueProtoAround(key, depth, protowire.AppendString(protowire.AppendTag(nil, fieldValueString, protowire.BytesType), "x"))
}

// nestedAnyValueProtoAround is nestedAnyValueProto with leaf, the fields
// of the innermost AnyValue, in place of a string "x".
func nestedAnyValueProtoAround(key string, depth int, leaf []byte) []byte {
	// sizes[i]: the size of the AnyValue i levels out from the leaf.
	sizes := make([]int, depth+1)
	sizes[0] = len(leaf)
	for i := 1; i <= depth; i++ {
		arr := 1 + protowire.SizeVarint(uint64(sizes[i-1])) + sizes[i-1] // ArrayValue{values: inner}
		sizes[i] = 1 + protowire.SizeVarint(uint64(arr)) + arr           // AnyValue{array_value: arr}
	}
	out := protowire.AppendString(protowire.AppendTag(nil, fieldKVKey, protowire.BytesType), key)
	out = protowire.AppendTag(out, fieldKVValue, protowire.BytesType)
	out = protowire.AppendVarint(out, uint64(sizes[depth]))
	for i := depth; i >= 1; i-- {
		arr := 1 + protowire.SizeVarint(uint64(sizes[i-1])) + sizes[i-1]
		out = protowire.AppendVarint(protowire.AppendTag(out, fieldValueArray, protowire.BytesType), uint64(arr))
		out = protowire.AppendVarint(protowire.AppendTag(out, fieldArrayValues, protowire.BytesType), uint64(sizes[i-1]))
	}
	return append(out, leaf...)
}

// framed returns rec length-prefixed.
func framed(rec []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(rec))), rec...)
}

// zstdFramed returns rec compressed into its own zstd frame, length-prefixed,
// as the Collector's file exporter writes with compression: zstd.
func zstdFramed(t testing.TB, rec []byte) []byte {
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return framed(enc.EncodeAll(rec, nil))
}

// TestValuesNestedPastTheLimitAreCutNamingThePlace pins the one depth
// limit on every reader: a value nested deeper than MaxDepth is cut there
// and its span read, with one warning naming the file, the byte, the path
// and the attribute (the input is whole: nothing readable was lost), in
// strict mode too; the records around it are read. Each input is a few
// megabytes at most and nests 100k deep, which overflowed the stack of
// pdata's JSON unmarshaler or AsString before, and which a document's
// decoder refuses past 10000 levels.
func TestValuesNestedPastTheLimitAreCutNamingThePlace(t *testing.T) {
	const deep = 100_000 // a thousand times the limit; a few megabytes
	const key = "plugin.mcp.cache_key"
	deepProto := request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, nestedAnyValueProto(key, deep))))
	okProto := request(baseResource, baseSpan())
	tests := []struct {
		name     string
		data     []byte
		force    Format
		kept     int
		wantMsg  []string
		wantOff  int64 // -1: not checked
		wantLine int
	}{
		{name: "json line, array value 100k deep", data: []byte(otlpLine(1) + otlpLineWithValue(2, key, nestedAnyValueJSON(deep, false)) + otlpLine(3)),
			kept: 3, wantLine: 2, wantOff: int64(len(otlpLine(1)) + nthOpening(otlpLineWithValue(2, key, nestedAnyValueJSON(deep, false)), MaxDepth+1)), wantMsg: []string{":2 (byte ", "expected a record nested at most 100 deep", `nested too deep in the value of attribute "plugin.mcp.cache_key"`,
				"at resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.arrayValue.values[0]", "… (100 levels)"}},
		{name: "json line, kvlist value 100k deep", data: []byte(otlpLine(1) + otlpLineWithValue(2, key, nestedAnyValueJSON(deep, true))),
			kept: 2, wantLine: 2, wantOff: -1, wantMsg: []string{":2 (byte ", `attribute "plugin.mcp.cache_key"`, "value.kvlistValue.values[0].value"}},
		{name: "json line, bare arrays 100k deep", data: []byte(otlpLineBrackets(1, deep) + otlpLine(2)),
			kept: 2, wantLine: 1, wantOff: int64(nthOpening(otlpLineBrackets(1, deep), MaxDepth+1)), wantMsg: []string{":1 (byte ", "nested too deep, at resourceSpans[0].scopeSpans[0].spans[0].x[0][0]"}},
		{name: "otlp json document", data: []byte("{\"resourceSpans\": [\n" + strings.TrimSuffix(strings.TrimPrefix(otlpLineWithValue(2, key, nestedAnyValueJSON(deep, false)), `{"resourceSpans":[`), "]}\n") +
			`,{"scopeSpans":[{"spans":[{` + hostileSpanJSON(3) + `}]}]}]}`),
			kept: 2, wantOff: docOff, wantMsg: []string{"(byte ", `attribute "plugin.mcp.cache_key"`, "at scopeSpans[0].spans[0].attributes[0].value.arrayValue"}},
		{name: "tempo document", force: FormatTempo, data: []byte(`{"batches":[{"scopeSpans":[{"spans":[{` + hostileSpanJSON(2) + `,"attributes":[{"key":"k","value":` + nestedAnyValueJSON(deep, false) + `}]}]}]},` +
			`{"scopeSpans":[{"spans":[{` + hostileSpanJSON(3) + `}]}]}]}`),
			kept: 2, wantOff: docOff, wantMsg: []string{`attribute "k"`, "at scopeSpans[0].spans[0].attributes[0].value.arrayValue.values[0]"}},
		{name: "jaeger document, deep tag value", data: []byte(`{"data":[{"spans":[{"traceID":"` + hostileTraceID + `","spanID":"4000000000000002","operationName":"x","startTime":1,"duration":1,` +
			`"tags":[{"key":"deep","type":"string","value":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + `}]}]},` +
			`{"spans":[{"traceID":"` + hostileTraceID + `","spanID":"4000000000000003","operationName":"y","startTime":1,"duration":1}]}]}`),
			kept: 2, wantOff: docOff, wantMsg: []string{`attribute "deep"`, "at spans[0].tags[0].value[0]"}},
		{name: "protobuf record, array value deep", data: append(framed(okProto), framed(deepProto)...),
			kept: 2, wantOff: -1, wantMsg: []string{"(byte ", `attribute "plugin.mcp.cache_key"`, "at resource_spans[0].scope_spans[0].spans[0].attributes[3].value.array_value.values[0]"}},
		{name: "zstd protobuf record, array value deep", data: append(zstdFramed(t, okProto), zstdFramed(t, deepProto)...),
			kept: 2, wantOff: -1, wantMsg: []string{"of the decompressed record: nested too deep", `attribute "plugin.mcp.cache_key"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantOff == docOff {
				// A document's record is its array's element, at the
				// document's third level: its 101st is the document's 103rd.
				tc.wantOff = int64(nthOpening(string(tc.data), MaxDepth+3))
			}
			for _, sink := range []string{"pdata", "batches", "pdata strict"} {
				opts := ReadOptions{Format: tc.force, Strict: sink == "pdata strict"}
				if sink == "batches" {
					opts.Keep = KeepAttrs{Span: []string{key, "k", "deep"}}
				}
				inputs, spans, err := readHostile(t, tc.data, opts, sink == "batches")
				if err != nil {
					t.Fatalf("%s: %v", sink, err)
				}
				in := inputs[0]
				if spans != tc.kept || in.Partial || len(in.Warnings) != 1 {
					t.Fatalf("%s: %d spans, partial %v, warnings %q; want %d spans, whole, one warning", sink, spans, in.Partial, in.Warnings, tc.kept)
				}
				want := append(tc.wantMsg, "expected a record nested at most 100 deep", ": cut there, the rest of the record kept (values cut in this input: 1)")
				if tc.wantOff >= 0 {
					want = append(want, fmt.Sprintf("(byte %d)", tc.wantOff))
				}
				if tc.wantLine != 0 {
					want = append(want, fmt.Sprintf("-:%d (byte ", tc.wantLine))
				}
				for _, m := range want {
					if !strings.Contains(in.Warnings[0], m) {
						t.Errorf("%s: warning %q does not say %q", sink, in.Warnings[0], m)
					}
				}
				if len(in.Warnings[0]) > 600 {
					t.Errorf("%s: warning of %d bytes, want a bounded one", sink, len(in.Warnings[0]))
				}
			}
		})
	}
}

// TestAMillionLevelsDeepIsCutInBoundedMemory pins that cutting stays
// bounded however deep a value nests: a span whose attribute nests a
// million levels (a record of megabytes) is read with its value cut and
// one warning, without a stack overflow (pdata's decoders and
// encoding/json recurse per level), and what the read allocates is a
// small multiple of the input (the cut is a scan, plus one copy of the
// record), in every format with nesting.
func TestAMillionLevelsDeepIsCutInBoundedMemory(t *testing.T) {
	const levels = 1_000_000
	value := nestedAnyValueJSON(levels/3, false) // three JSON levels per array level
	elem := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `,"attributes":[{"key":"k","value":` + value + `}]}]}]}`
	for _, tc := range []struct {
		name  string
		data  []byte
		force Format
	}{
		{"json line", []byte(otlpLineWithValue(1, "k", value)), FormatAuto},
		{"otlp json document", []byte("{\"resourceSpans\": [\n" + elem + "]}"), FormatAuto},
		{"tempo document", []byte("{\"batches\": [\n" + elem + "]}"), FormatTempo},
		{"jaeger document", []byte(`{"data":[{"spans":[{"traceID":"` + hostileTraceID + `","spanID":"4000000000000001","operationName":"x","startTime":1,"duration":1,` +
			`"tags":[{"key":"k","type":"string","value":` + strings.Repeat("[", levels) + strings.Repeat("]", levels) + `}]}]}]}`), FormatAuto},
		{"protobuf record", framed(request(nil, baseSpan(pb(nil).bytes(fieldSpanAttributes, nestedAnyValueProto("k", levels/2))))), FormatAuto},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inputs []Input
			var spans int
			var err error
			alloc := allocatedBy(func() { inputs, spans, err = readHostile(t, tc.data, ReadOptions{Format: tc.force}, false) })
			if err != nil || spans != 1 || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], "cut there") {
				t.Fatalf("%d spans, %v, warnings %q; want the span read and one warning of the cut", spans, err, inputs[0].Warnings)
			}
			if limit := 8*uint64(len(tc.data)) + 16<<20; alloc > limit {
				t.Errorf("reading %d bytes allocated %d MiB, want at most %d MiB", len(tc.data), alloc>>20, limit>>20)
			}
			// The projection decoders give it to the pdata path.
			inputs, spans, err = readHostile(t, tc.data, ReadOptions{Format: tc.force, Keep: KeepAttrs{Span: []string{"k"}}}, true)
			if err != nil || spans != 1 || len(inputs[0].Warnings) != 1 {
				t.Fatalf("batches: %d spans, %v, warnings %q; want the span read and one warning of the cut", spans, err, inputs[0].Warnings)
			}
		})
	}
}

// TestAValueAtTheDepthLimitIsKeptOnePastIsCut pins the limit itself on
// every reader with nesting: a span with an attribute nested exactly
// MaxDepth deep (as the format counts it: JSON containers from the record,
// protobuf messages from the attribute's KeyValue as pdata counts them)
// is read whole, with no warning; one level more, the span is read with
// that attribute cut at the limit (its innermost value emptied) and one
// warning naming the place. The projection decoders give such spans to
// the pdata path, so each is read with both sinks.
func TestAValueAtTheDepthLimitIsKeptOnePastIsCut(t *testing.T) {
	const str, kv, arr = `{"stringValue":"x"}`, `{"kvlistValue":{}}`, `{"arrayValue":{"values":[]}}` // a leaf of 1, 2 and 3 levels
	// A JSON line reaches its attribute's value at depth 9, a document's
	// element at 7 (a document of more than one line: a one-line document
	// is a JSON line); each array level adds 3 (AnyValue, ArrayValue,
	// values).
	line := func(n int, leaf string) []byte {
		return []byte(otlpLineWithValue(1, "k", strings.Repeat(`{"arrayValue":{"values":[`, n)+leaf+strings.Repeat(`]}}`, n)))
	}
	doc := func(top string, n int, leaf string) []byte {
		v := strings.Repeat(`{"arrayValue":{"values":[`, n) + leaf + strings.Repeat(`]}}`, n)
		return []byte(`{"` + top + `": [` + "\n" + `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `,"attributes":[{"key":"k","value":` + v + `}]}]}]}]}`)
	}
	jaeger := func(n int) []byte { // a trace element reaches its tag's value at depth 5
		return []byte(`{"data":[{"spans":[{"traceID":"` + hostileTraceID + `","spanID":"4000000000000001","operationName":"x","startTime":1,"duration":1,` +
			`"tags":[{"key":"k","type":"string","value":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}]}]}]}`)
	}
	// protobuf: the KeyValue is 0, its AnyValue 1, each array level 2
	// more; pdata refuses a message at MaxDepth.
	proto := func(n int) []byte {
		return request(nil, baseSpan(pb(nil).bytes(fieldSpanAttributes, nestedAnyValueProto("k", n))))
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		force Format
		cut   bool
		leaf  pcommon.ValueType // the innermost value of "k" read (pdata sink; 0: not looked at)
	}{
		{"json line at the limit", line(30, str), FormatAuto, false, pcommon.ValueTypeStr},
		{"json line one past", line(30, kv), FormatAuto, true, pcommon.ValueTypeEmpty},
		{"zstd json record at the limit", zstdFramed(t, line(30, str)), FormatAuto, false, pcommon.ValueTypeStr},
		{"zstd json record one past", zstdFramed(t, line(30, kv)), FormatAuto, true, pcommon.ValueTypeEmpty},
		{"otlp json document at the limit", doc("resourceSpans", 30, arr), FormatAuto, false, pcommon.ValueTypeSlice},
		{"otlp json document one past", doc("resourceSpans", 31, str), FormatAuto, true, pcommon.ValueTypeEmpty},
		{"tempo document at the limit", doc("batches", 30, arr), FormatTempo, false, pcommon.ValueTypeSlice},
		{"tempo document one past", doc("batches", 31, str), FormatTempo, true, pcommon.ValueTypeEmpty},
		{"jaeger document at the limit", jaeger(95), FormatAuto, false, 0},
		{"jaeger document one past", jaeger(96), FormatAuto, true, 0},
		{"protobuf record at the limit", framed(proto((MaxDepth - 2) / 2)), FormatAuto, false, pcommon.ValueTypeStr},
		{"protobuf record one past", framed(proto((MaxDepth-2)/2 + 1)), FormatAuto, true, pcommon.ValueTypeEmpty},
		// The innermost AnyValue at MaxDepth-1 holds an empty ArrayValue,
		// a message at MaxDepth with nothing in it: pdata refuses it, so
		// the walk must name it and the cut drop it.
		{"protobuf record with an empty message at the limit", framed(request(nil, baseSpan(pb(nil).bytes(fieldSpanAttributes,
			nestedAnyValueProtoAround("k", (MaxDepth-2)/2, protowire.AppendBytes(protowire.AppendTag(nil, fieldValueArray, protowire.BytesType), nil)))))),
			FormatAuto, true, pcommon.ValueTypeEmpty},
		{"zstd protobuf record one past", zstdFramed(t, proto((MaxDepth-2)/2+1)), FormatAuto, true, pcommon.ValueTypeEmpty},
		{"brackets in a string with escaped quotes do not count", []byte(strings.Replace(otlpLine(1), `"name":"plugin.mcp.invoke"`,
			`"name":"a\\\"`+strings.Repeat("[", 2*MaxDepth)+`\\\""`, 1)), FormatAuto, false, 0},
		{"an escaped backslash ends the string before real brackets", []byte(strings.Replace(otlpLineBrackets(1, MaxDepth), `"name":"plugin.mcp.invoke"`,
			`"name":"a\\\\"`, 1)), FormatAuto, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, batches := range []bool{false, true} {
				opts := ReadOptions{Format: tc.force, Strict: true}
				if batches {
					opts.Keep = KeepAttrs{Span: []string{"k"}}
				}
				inputs, spans, err := readHostile(t, tc.data, opts, batches)
				if err != nil || spans != 1 || inputs[0].Partial {
					t.Fatalf("batches %v: %d spans, %v, partial %v; want the span read whole", batches, spans, err, err == nil && inputs[0].Partial)
				}
				if w := inputs[0].Warnings; tc.cut != (len(w) == 1) || len(w) > 1 || tc.cut && !strings.Contains(w[0], "cut there") {
					t.Errorf("batches %v: warnings %q; want one saying the value is cut: %v", batches, w, tc.cut)
				}
			}
			if tc.leaf == 0 {
				return
			}
			_, tds, err := readBytes(t, tc.data, ReadOptions{Format: tc.force})
			if err != nil || len(tds) != 1 {
				t.Fatalf("%d batches, %v", len(tds), err)
			}
			v, ok := tds[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Get("k")
			if !ok || ValueTooDeep(v) {
				t.Fatalf("attribute k read %v, too deep %v; want it, within the limit", ok, ok && ValueTooDeep(v))
			}
			for v.Type() == pcommon.ValueTypeSlice && v.Slice().Len() == 1 {
				v = v.Slice().At(0)
			}
			if v.Type() != tc.leaf {
				t.Errorf("the innermost value of k is %v, want %v", v.Type(), tc.leaf)
			}
		})
	}
}

// docOff says a document's record offset is to be worked out.
const docOff = -2

// nthOpening is the index of the '{' or '[' of s that opens its n-th
// level of nesting (the generators put none inside strings).
func nthOpening(s string, n int) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '{', '[':
			if depth++; depth == n {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

// readHostile reads data through stdin into a pdata sink or a batch sink
// and returns the inputs and the spans read.
func readHostile(t *testing.T, data []byte, opts ReadOptions, batches bool) ([]Input, int, error) {
	t.Helper()
	opts.Stdin = bytes.NewReader(data)
	sink := &countingSink{t: t}
	var s Sink = SinkFunc(sink.ConsumeTraces)
	if batches {
		s = sink
	}
	inputs, err := Read(t.Context(), []string{"-"}, opts, s)
	return inputs, sink.spans, err
}

// bigAttrRecord is a protobuf request of one span with a string attribute
// of n bytes: a record of about n bytes that compresses to almost nothing.
func bigAttrRecord(n int) []byte {
	return request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, strAttr("big", strings.Repeat("a", n)))))
}

// TestFramedRecordsHoldTheMemoryBudget pins the budget on length-prefixed
// records: a record longer than the record cap (a sixteenth of the budget),
// as stored or once decompressed, is cut like a long JSON line (skipped
// with a warning naming --max-memory; the records around it are read), and
// a stored one is skipped unread rather than buffered. A zstd stream whose
// window is larger than the budget's share stops with ErrMemoryLimit.
func TestFramedRecordsHoldTheMemoryBudget(t *testing.T) {
	const budget = 32 << 20 // record cap 2 MiB
	okRec := request(baseResource, baseSpan())
	for _, tc := range []struct {
		name     string
		data     []byte
		maxAlloc uint64 // 0: not measured
	}{
		{"zstd record decompressing past the cap", append(append(zstdFramed(t, okRec), zstdFramed(t, bigAttrRecord(3<<20))...), zstdFramed(t, okRec)...), 0},
		{"zstd record without its size, past the cap", append(zstdFramedNoSize(t, bigAttrRecord(3<<20)), zstdFramed(t, okRec)...), 0},
		// Buffered, the 24 MiB record alone would allocate 24 MiB and more.
		{"stored record past the cap", append(append(framed(okRec), framed(bigAttrRecord(24<<20))...), framed(okRec)...), 12 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := bytes.Count(tc.data, []byte("plugin.mcp.connection.acquire")) - 1
			var inputs []Input
			var spans int
			var err error
			alloc := allocatedBy(func() {
				inputs, spans, err = readHostile(t, tc.data, ReadOptions{MaxMemory: budget, MaxDecompressionRatio: -1}, true)
			})
			if err != nil {
				t.Fatal(err)
			}
			if spans != want || !inputs[0].Partial || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], "--max-memory") {
				t.Fatalf("%d spans, partial %v, warnings %q; want %d, partial, the record cut naming --max-memory", spans, inputs[0].Partial, inputs[0].Warnings, want)
			}
			if tc.maxAlloc > 0 && alloc > tc.maxAlloc {
				t.Errorf("reading allocated %d MiB: the cut record was held (record cap 2 MiB)", alloc>>20)
			}
		})
	}

	t.Run("zstd stream with a window past the budget's share", func(t *testing.T) {
		var buf bytes.Buffer
		zw, err := zstd.NewWriter(&buf, zstd.WithWindowSize(64<<20), zstd.WithSingleSegment(false))
		if err != nil {
			t.Fatal(err)
		}
		lines := (1 << 20) / len(otlpLine(1)) // past the first block: the encoder then says its window
		zw.Write([]byte(strings.Repeat(otlpLine(1), lines)))
		zw.Close()
		_, _, err = readHostile(t, buf.Bytes(), ReadOptions{MaxMemory: budget}, true)
		if !errors.Is(err, ErrMemoryLimit) || !strings.Contains(err.Error(), "--max-memory") {
			t.Fatalf("err %v, want ErrMemoryLimit naming --max-memory", err)
		}
		// The default budget's share takes it.
		if _, n, err := readHostile(t, buf.Bytes(), ReadOptions{MaxMemory: 1 << 30}, true); err != nil || n != lines {
			t.Fatalf("with a 1 GiB budget: %d spans, %v", n, err)
		}
	})
}

// zstdFramedNoSize is zstdFramed without the frame's content size, so the
// decoder learns the size only by decoding.
func zstdFramedNoSize(t testing.TB, rec []byte) []byte {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(rec)
	zw.Close()
	return framed(buf.Bytes())
}

// allocatedBy returns the bytes f allocates.
func allocatedBy(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// jaegerTraceJSON is one Jaeger trace of one span with id n.
func jaegerTraceJSON(n int) string {
	return `{"traceID":"` + hostileTraceID + `","spans":[{"traceID":"` + hostileTraceID + `","spanID":"40000000000000` +
		string([]byte{'0' + byte(n/10), '0' + byte(n%10)}) + `","operationName":"x","startTime":1,"duration":1}]}`
}

// TestASourcesWordAboutMissingDataMakesTheInputPartial pins the fields in
// which a trace store says its answer is incomplete: the traces it did
// return are read, and the input is partial with the reason (an error in
// strict mode); the same fields saying nothing is missing change nothing.
func TestASourcesWordAboutMissingDataMakesTheInputPartial(t *testing.T) {
	tempoRS := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`
	otlpRS := tempoRS
	for _, tc := range []struct {
		name    string
		doc     string
		force   Format
		partial string // "" the input is whole; else the warning holds this
	}{
		{"jaeger errors after the data", `{"data":[` + jaegerTraceJSON(1) + `],"total":4,"errors":[{"code":500,"msg":"trace not found"},{"code":500,"msg":"x"},{"code":500,"msg":"y"}]}`, FormatAuto,
			`the source says data is missing: "errors" says 3 trace(s) were not loaded (first: "trace not found")`},
		{"jaeger errors before the data", `{"errors":[{"code":504}],` + "\n" + `"data":[` + jaegerTraceJSON(1) + `]}`, FormatJaeger, `"errors" says 1 trace(s) were not loaded (first: "code 504")`},
		{"jaeger error message with control bytes", `{"data":[` + jaegerTraceJSON(1) + `],"errors":[{"code":1,"msg":"\u001b[31mred\u202e"}]}`, FormatAuto, `(first: "\x1b[31mred\u202e")`},
		{"jaeger errors null", `{"data":[` + jaegerTraceJSON(1) + `],"errors":null}`, FormatAuto, ""},
		{"jaeger errors empty", `{"data":[` + jaegerTraceJSON(1) + `],"errors":[]}`, FormatAuto, ""},
		{"tempo status PARTIAL", `{"trace":{"resourceSpans":[` + tempoRS + `]},"status":"PARTIAL","message":"trace exceeds max size"}`, FormatTempo, `"status" says the trace is partial (PARTIAL)`},
		{"tempo status 1", `{"status":1,"trace":{"resourceSpans":[` + tempoRS + `]}}`, FormatTempo, `"status" says the trace is partial (status "1")`},
		{"tempo status COMPLETE", `{"trace":{"resourceSpans":[` + tempoRS + `]},"status":"COMPLETE"}`, FormatTempo, ""},
		{"tempo error string", `{"batches":[` + tempoRS + `],"error":"querier timed out"}`, FormatTempo, `"error" says the source reports an error: "querier timed out"`},
		{"otlp partial success with rejected spans", "{\"resourceSpans\":[\n" + otlpRS + `],"partialSuccess":{"rejectedSpans":"3","errorMessage":"queue full"}}`, FormatAuto,
			`"partialSuccess" says 3 span(s) were rejected ("queue full")`},
		{"otlp partial success with a count that is no number", "{\"resourceSpans\":[\n" + otlpRS + `],"partialSuccess":{"rejectedSpans":1.5}}`, FormatAuto,
			`"partialSuccess" says rejected spans, a count that cannot be read`},
		{"otlp partial success without rejected spans", "{\"resourceSpans\":[\n" + otlpRS + `],"partialSuccess":{"rejectedSpans":0,"errorMessage":"slow down"}}`, FormatAuto, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, spans, err := readHostile(t, []byte(tc.doc), ReadOptions{Format: tc.force}, false)
			if err != nil {
				t.Fatal(err)
			}
			in := inputs[0]
			if spans != 1 {
				t.Errorf("%d spans, want the 1 the answer holds", spans)
			}
			if tc.partial == "" {
				if in.Partial || len(in.Warnings) > 0 {
					t.Errorf("partial %v, warnings %q; want a whole input", in.Partial, in.Warnings)
				}
				return
			}
			if !in.Partial || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], tc.partial) {
				t.Fatalf("partial %v, warnings %q; want partial, saying %q", in.Partial, in.Warnings, tc.partial)
			}
			if !strings.HasPrefix(in.Warnings[0], "- (byte ") {
				t.Errorf("warning %q does not name the file and the byte", in.Warnings[0])
			}
			_, _, err = readHostile(t, []byte(tc.doc), ReadOptions{Format: tc.force, Strict: true}, false)
			if !errors.Is(err, ErrSourceIncomplete) {
				t.Errorf("strict: %v, want ErrSourceIncomplete", err)
			}
		})
	}
}

// TestCrashLeftoversInADirectoryMakeItPartial pins what a walk makes of a
// file beside the dumps that is empty or NUL bytes only (what a crash or a
// full disk leaves of a dump): skipped, and the run partial, with the
// file named. A README beside them is only skipped.
func TestCrashLeftoversInADirectoryMakeItPartial(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		data       []byte
		partial    string // "": skipped, the run whole
	}{
		{"empty file", "b.jsonl", nil, "b.jsonl: skipped: empty file (a dump cut short by a crash or a full disk?): the input is partial"},
		{"NUL bytes", "b.jsonl", make([]byte, 4096), "b.jsonl: skipped: not a trace dump: NUL bytes only"},
		{"NUL bytes past the detection window", "b.pb", make([]byte, 200<<10), "b.pb: skipped: not a trace dump: NUL bytes only"},
		{"empty gzip", "b.jsonl.gz", tracegen.GzipBytes(nil), "b.jsonl.gz: skipped: empty file"},
		{"a README", "README.md", []byte("# dumps\n"), ""},
		{"a report beside the dumps", "base.json", []byte(`{"schema":"mcptrace.analysis/v1"}`), ""},
		{"junk named as a dump", "b.jsonl", []byte("\v"), "b.jsonl: skipped: not a trace dump, though its name says it is one"},
		{"a .json that is not even JSON", "b.json", []byte{0, '{', 0}, "b.json: skipped: not a trace dump, nor JSON at all, though named .json"},
		{"junk named as a compressed protobuf dump", "b.PB.zst", []byte("hello, not a dump\n"), "b.PB.zst: skipped: not a trace dump, though its name says it is one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeInputFile(t, dir, "0-good.jsonl", []byte(otlpLine(1))) // first in lexical order
			writeInputFile(t, dir, tc.file, tc.data)
			inputs, _, err := readPaths(t, []string{dir}, ReadOptions{})
			if err != nil || len(inputs) != 2 || inputs[0].Spans != 1 || inputs[0].Partial {
				t.Fatalf("inputs %+v, %v; want the good dump read whole and the other input", inputs, err)
			}
			bad := inputs[1]
			if tc.partial == "" {
				if bad.Partial || len(bad.Warnings) != 1 {
					t.Errorf("%s: partial %v, warnings %q; want skipped, not partial", tc.file, bad.Partial, bad.Warnings)
				}
				return
			}
			if !bad.Partial || len(bad.Warnings) != 1 || !strings.Contains(bad.Warnings[0], tc.partial) {
				t.Errorf("%s: partial %v, warnings %q; want partial, saying %q", tc.file, bad.Partial, bad.Warnings, tc.partial)
			}
		})
	}
}

// TestReadErrorsPrintNoRawBytes pins the text of read errors over input
// whose bytes would act on a terminal or hide text: the error names the
// file and the place, and every control byte, invalid UTF-8 byte and bidi
// control, from the input or from the file's name, is shown escaped; a
// huge bad token stays a short error.
func TestReadErrorsPrintNoRawBytes(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		data       []byte
		force      Format
		says       []string
	}{
		{"tempo: a raw 0xff where an element starts", "t.json", []byte("{\"batches\":[\xff]}"), FormatTempo,
			[]string{"t.json (byte 12): ", `invalid character '\xff' looking for beginning of value`, `(in element 0 of "batches")`}},
		{"tempo: a bad id in the second element", "t2.json", []byte(`{"batches":[{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]},{"scopeSpans":[{"spans":[{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA==","spanId":"@@\u001b","name":"a"}]}]}]}`), FormatTempo,
			[]string{"expected a Tempo ResourceSpans JSON object: spanId is neither", `(in element 1 of "batches")`}},
		{"jaeger: a control byte in the second element", "j.json", []byte(`{"data":[` + jaegerTraceJSON(1) + ",\x01]}"), FormatJaeger,
			[]string{`invalid character '\x01'`, `(in element 1 of "data")`}},
		{"json line: an escape sequence where an array was expected", "l.jsonl", []byte(otlpLine(1) + "{\"resourceSpans\": [\x1b[2J]}\n"), FormatAuto,
			[]string{"l.jsonl:2 (byte ", `\x1b`}},
		{"a file name with an escape sequence and a bidi override", "a\x1b[31m\u202egol.jsonl", []byte("{\"resourceSpans\": [oops]}\n"), FormatAuto,
			[]string{`a\x1b[31m\u202egol.jsonl (byte 19)`}},
		{"json line: a megabyte of junk", "big.jsonl", []byte("{\"resourceSpans\": [" + strings.Repeat("\xfe", 1<<20) + "]}\n"), FormatAuto,
			[]string{"big.jsonl:1 (byte 0): ", `found \xfe`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeInputFile(t, t.TempDir(), tc.file, tc.data)
			_, _, err := readPaths(t, []string{path}, ReadOptions{Strict: true, Format: tc.force})
			if err == nil {
				t.Fatal("read without an error")
			}
			msg := err.Error()
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("error %q does not say %q", msg, s)
				}
			}
			if !utf8.ValidString(msg) || strings.ContainsFunc(msg, func(r rune) bool {
				return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
			}) {
				t.Errorf("error %q prints a raw control, invalid or bidi byte", msg)
			}
			if len(msg) > 1200+len(path) {
				t.Errorf("error of %d bytes, want a bounded one", len(msg))
			}
		})
	}
}

// TestZstdRecordsInFlightStayWithinTheBudget pins the share of the budget
// the records in flight hold: zstd records that compress well (3.2 MiB
// each from 20 KB, within the decompression ratio) fill a read block by
// the dozen, and each decompresses to most of the record cap. What the
// workers decompress, and what the decoded records hold until the sink
// takes them, is charged to the in-flight share of the budget before it is
// taken, whether the frame says its size or not and however many workers
// decode, so the live heap, looked at each time the sink gets a batch,
// stays under the 64 MiB budget (the whole dump decompresses to 128 MiB).
func TestZstdRecordsInFlightStayWithinTheBudget(t *testing.T) {
	chunk := make([]byte, 32<<10)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range chunk {
		chunk[i] = byte('a' + r.IntN(26)) // random letters: the chunk compresses little, its repeats to nothing
	}
	value := strings.Repeat(string(chunk), 100) // 3.2 MiB
	rec := request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, strAttr("big", value))))
	for _, tc := range []struct {
		name    string
		frame   []byte
		workers int
	}{
		{"frames that say their size, 2 workers", zstdFramed(t, rec), 2},
		{"frames that say their size, 16 workers", zstdFramed(t, rec), 16},
		{"frames without their size, 2 workers", framed(zstdFrame(t, rec, false, 8<<20)), 2},
		{"frames without their size, 16 workers", framed(zstdFrame(t, rec, false, 8<<20)), 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := bytes.Repeat(tc.frame, 40)
			var peak uint64
			var ms runtime.MemStats
			n := 0
			runtime.GC()
			runtime.ReadMemStats(&ms)
			base := ms.HeapAlloc
			_, err := Read(t.Context(), []string{"-"}, ReadOptions{Stdin: bytes.NewReader(data), MaxMemory: 64 << 20, Workers: tc.workers},
				SinkFunc(func(_ *Input, td ptrace.Traces) error {
					n += td.SpanCount()
					runtime.GC()
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapAlloc-min(base, ms.HeapAlloc))
					return nil
				}))
			if err != nil || n != 40 {
				t.Fatalf("read %d spans, %v; want 40", n, err)
			}
			if peak > 64<<20 {
				t.Errorf("live heap grew by %d MiB while reading with a 64 MiB budget", peak>>20)
			}
		})
	}
}

// A walked entry named like a dump that is no regular file (a link to a
// device, a FIFO, a link that leads nowhere) stands where a dump should
// be: it is not read, and the run is partial, naming what it is; such an
// entry with another name is not an input and is passed over.
func TestSpecialEntriesNamedLikeDumpsMakeAWalkPartial(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		make       func(t *testing.T, path string)
		partial    string // "": passed over, the run whole
	}{
		{"a link to /dev/zero", "zero.jsonl", func(t *testing.T, p string) { symlink(t, "/dev/zero", p) }, "zero.jsonl: skipped: a device, not a file"},
		{"a dangling link", "gone.pb.zst", func(t *testing.T, p string) { symlink(t, "nowhere.pb.zst", p) }, "gone.pb.zst: skipped: a link that leads to no readable file"},
		{"a link to itself", "loop.jsonl", func(t *testing.T, p string) { symlink(t, "loop.jsonl", p) }, "loop.jsonl: skipped: a link that leads to no readable file"},
		{"a FIFO", "fifo.ndjson", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("mkfifo: %v", err)
			}
		}, "fifo.ndjson: skipped: a FIFO, not a file"},
		{"a link to a directory", "dir.otlp.jsonl", func(t *testing.T, p string) { symlink(t, t.TempDir(), p) }, "dir.otlp.jsonl: skipped: a link to a directory, not a file"},
		{"a link to a device under another name", "notes.txt", func(t *testing.T, p string) { symlink(t, "/dev/zero", p) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeInputFile(t, dir, "0-good.jsonl", []byte(otlpLine(1)))
			tc.make(t, filepath.Join(dir, tc.file))
			inputs, _, err := readPaths(t, []string{dir}, ReadOptions{})
			if err != nil || len(inputs) == 0 || inputs[0].Spans != 1 || inputs[0].Partial {
				t.Fatalf("inputs %+v, %v; want the good dump read whole first", inputs, err)
			}
			if tc.partial == "" {
				if len(inputs) != 1 {
					t.Errorf("inputs %+v; want %s passed over", inputs, tc.file)
				}
				return
			}
			if len(inputs) != 2 || !inputs[1].Partial || len(inputs[1].Warnings) != 1 || !strings.Contains(inputs[1].Warnings[0], tc.partial) {
				t.Errorf("inputs %+v; want %s partial, saying %q", inputs, tc.file, tc.partial)
			}
		})
	}
}

func symlink(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Skipf("symlink: %v", err)
	}
}

// TestCutsAreOneWarningPerInput pins that cutting never floods the
// warnings: however many spans carry a value past MaxDepth, their input
// gets one warning, naming the first place and counting every value cut,
// and every span is read.
func TestCutsAreOneWarningPerInput(t *testing.T) {
	const deep = 1000
	deepProto := request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, nestedAnyValueProto("k", deep))))
	var lines strings.Builder
	var records []byte
	for i := 1; i <= 5; i++ {
		lines.WriteString(otlpLineWithValue(i, "k", nestedAnyValueJSON(deep, i%2 == 0)))
		records = append(records, framed(deepProto)...)
	}
	for _, tc := range []struct {
		name  string
		data  []byte
		first string
	}{
		{"json lines", []byte(lines.String()), "-:1 (byte "},
		{"protobuf records", records, "- (byte "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, spans, err := readHostile(t, tc.data, ReadOptions{}, false)
			if err != nil || spans != 5 || inputs[0].Partial || len(inputs[0].Warnings) != 1 {
				t.Fatalf("%d spans, %v, partial %v, warnings %q; want 5 spans, whole, one warning", spans, err, err == nil && inputs[0].Partial, inputs[0].Warnings)
			}
			if w := inputs[0].Warnings[0]; !strings.HasPrefix(w, tc.first) || !strings.HasSuffix(w, "(values cut in this input: 5)") {
				t.Errorf("warning %q; want the first place (%s…) and 5 values cut", w, tc.first)
			}
		})
	}
}
