package ingest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/spans"
)

// testKeep keeps what analyze's index keeps of the vocabulary, plus one
// extra span and resource attribute, as a selector or --scope-attr would.
var testKeep = KeepAttrs{
	Span: []string{spans.AttrCacheHit, spans.AttrCacheKey, spans.AttrAttempt, spans.AttrMissReason, spans.AttrPoolID,
		spans.AttrSessionID, spans.AttrMethodName, spans.AttrErrorType, spans.AttrServerAddress, spans.AttrServerPort,
		"mcp.tool.name", "x"},
	Resource: []string{spans.ResourceServiceInstanceID, spans.ResourceServiceName, "deployment.environment", "x"},
}

// keptView is what analyze's index reads of a batch, with keys filtered as the
// index filters them: one line per resource and per span.
func keptView(td ptrace.Traces, keys *keepSet) []string {
	var out []string
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		out = append(out, "resource "+keptAttrs(rs.Resource().Attributes(), keys.res.keys()))
		sss := rs.ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			ss := sss.At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				sp := ss.At(k)
				out = append(out, fmt.Sprintf("span %s %s %s %q kind=%d status=%d %d..%d %s",
					sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), sp.Name(), sp.Kind(), sp.Status().Code(),
					sp.StartTimestamp(), sp.EndTimestamp(), keptAttrs(sp.Attributes(), keys.span.keys())))
			}
		}
	}
	return out
}

// keptAttrs lists the kept attributes of m in order, the first of a
// repeated key only, as type:AsString.
func keptAttrs(m pcommon.Map, kept map[string]string) string {
	var b strings.Builder
	seen := map[string]bool{}
	for k, v := range m.All() {
		if _, ok := kept[k]; !ok || seen[k] {
			continue
		}
		seen[k] = true
		fmt.Fprintf(&b, "%s=%s:%s ", k, v.Type(), v.AsString())
	}
	return b.String()
}

// batchTraces rebuilds a batch as a ptrace.Traces holding what it keeps,
// one scope per resource, so that keptView can compare it with pdata's
// decode of the same record.
func batchTraces(b *Batch) ptrace.Traces {
	td := ptrace.NewTraces()
	for r, res := range b.Resources {
		rs := td.ResourceSpans().AppendEmpty()
		putBatchAttrs(rs.Resource().Attributes(), b.ResourceAttrs(res))
		ss := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range b.Spans {
			fs := &b.Spans[i]
			if fs.Resource != int32(r) {
				continue
			}
			sp := ss.AppendEmpty()
			sp.SetTraceID(fs.TraceID)
			sp.SetSpanID(fs.SpanID)
			sp.SetParentSpanID(fs.ParentSpanID)
			sp.SetName(fs.Name)
			sp.SetKind(ptrace.SpanKind(fs.Kind))
			sp.Status().SetCode(ptrace.StatusCode(fs.Status))
			sp.SetStartTimestamp(pcommon.Timestamp(fs.Start))
			sp.SetEndTimestamp(pcommon.Timestamp(fs.End))
			putBatchAttrs(sp.Attributes(), b.SpanAttrs(fs))
		}
	}
	return td
}

func putBatchAttrs(m pcommon.Map, attrs []Attr) {
	for _, a := range attrs {
		switch a.Type {
		case pcommon.ValueTypeStr:
			m.PutStr(a.Key, a.Str)
		case pcommon.ValueTypeBool:
			m.PutBool(a.Key, a.Bool)
		case pcommon.ValueTypeInt:
			m.PutInt(a.Key, a.Int)
		default:
			panic("a batch holds a " + a.Type.String() + " attribute")
		}
	}
}

// checkFastMatchesPdata decodes line with the fast path and, when it does
// not fall back, requires pdata to read the same kept content from it.
func checkFastMatchesPdata(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	return checkFastMatchesPdataKeeping(t, line, testKeep)
}

// checkFastMatchesPdataKeeping is checkFastMatchesPdata keeping keep.
func checkFastMatchesPdataKeeping(t *testing.T, line []byte, keep KeepAttrs) (fast bool) {
	t.Helper()
	keys := newKeepSet(keep)
	b, ok := decodeFastOTLP(line, keys)
	if !ok {
		return false
	}
	got := batchTraces(b)
	want, err := unmarshalOTLPJSON(line, nil)
	if err != nil {
		t.Fatalf("the fast path accepted a line pdata refuses (%v):\n%s", err, line)
	}
	if g, w := got.SpanCount(), want.SpanCount(); g != w {
		t.Fatalf("fast path read %d spans, pdata %d:\n%s", g, w, line)
	}
	g, w := keptView(got, keys), keptView(want, keys)
	if !slices.Equal(g, w) {
		t.Fatalf("fast path and pdata differ on\n%s\nfast:  %q\npdata: %q", line, g, w)
	}
	return true
}

// fastSeedLines returns the lines of the committed OTLP JSON lines dumps
// and of the spelling examples.
func fastSeedLines(t testing.TB) [][]byte {
	paths, err := filepath.Glob(filepath.Join("..", "..", "testdata", "traces", "*.otlp.jsonl"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no OTLP JSON lines dumps in testdata/traces (%v)", err)
	}
	var lines [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for l := range bytes.Lines(data) {
			if l = bytes.TrimSpace(l); len(l) > 0 {
				lines = append(lines, l)
			}
		}
	}
	for _, s := range []string{otlpCamelNumbers, otlpSnakeNames, otlpBase64IDs, otlpLibrarySpans} {
		lines = append(lines, []byte(s))
	}
	return lines
}

func TestFastOTLPJSONMatchesPdataOnCommittedDumps(t *testing.T) {
	fast := 0
	lines := fastSeedLines(t)
	for _, l := range lines {
		if checkFastMatchesPdata(t, l) {
			fast++
		}
	}
	// Every generated line is in the common shape: the fast path must
	// take them (only the base64 and pre-1.0 spellings fall back).
	if want := len(lines) - 2; fast != want {
		t.Errorf("fast path took %d of %d lines, want %d", fast, len(lines), want)
	}
}

func TestFastOTLPJSONFallsBack(t *testing.T) {
	base := otlpCamelNumbers
	tests := map[string]string{
		"base64 ids":                     otlpBase64IDs,
		"pre-1.0 library spans":          otlpLibrarySpans,
		"unknown key":                    strings.Replace(base, `"kind":3`, `"kind":3,"zzz":1`, 1),
		"repeated key":                   strings.Replace(base, `"kind":3`, `"kind":3,"kind":2`, 1),
		"escaped name":                   strings.Replace(base, `"name":"plugin.mcp.connection.acquire"`, `"name":"a\"b"`, 1),
		"escaped kept value":             strings.Replace(base, `{"stringValue":"gw"}`, `{"stringValue":"g\\nw"}`, 1),
		"kept double":                    strings.Replace(base, `{"intValue":2}`, `{"doubleValue":2.5}`, 1),
		"kept array":                     strings.Replace(base, `{"intValue":2}`, `{"arrayValue":{}}`, 1),
		"events":                         strings.Replace(base, `"kind":3`, `"kind":3,"events":[{"name":"e"}]`, 1),
		"kind out of range":              strings.Replace(base, `"kind":3`, `"kind":9`, 1),
		"kind one past the last":         strings.Replace(base, `"kind":3`, `"kind":6`, 1),
		"code one past the last":         strings.Replace(base, `"code":2`, `"code":3`, 1),
		"short trace id":                 strings.Replace(base, `"0102030405060708090a0b0c0d0e0f10"`, `"0102"`, 1),
		"trace id a digit short":         strings.Replace(base, `"0102030405060708090a0b0c0d0e0f10"`, `"0102030405060708090a0b0c0d0e0f1"`, 1),
		"trace id a digit long":          strings.Replace(base, `"0102030405060708090a0b0c0d0e0f10"`, `"0102030405060708090a0b0c0d0e0f100"`, 1),
		"escaped trace id digit":         strings.Replace(base, `"0102030405060708090a0b0c0d0e0f10"`, `"\u0030102030405060708090a0b0c0d0e0f10"`, 1),
		"trace id's quote replaced":      strings.Replace(base, `"0102030405060708090a0b0c0d0e0f10"`, `"0102030405060708090a0b0c0d0e0f10x`, 1),
		"quoted time at the input's end": otlpSnakeNames[:strings.Index(otlpSnakeNames, `1777539600000000000`)+19],
		"quoted time with a sign":        strings.Replace(otlpSnakeNames, `"1777539600000000000"`, `"+1777539600000000000"`, 1),
		"quoted time past uint64":        strings.Replace(otlpSnakeNames, `"1777539600000000000"`, `"18446744073709551616"`, 1),
		"span key at the input's end":    `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId`,
		"span key without its quote":     strings.Replace(base, `"kind":3`, `"kindX:3`, 1),
		"span key repeated by a guess":   strings.Replace(base, `"kind":3`, `"kind":3,"startTimeUnixNano":1`, 1),
		"trace id at the input's end":    base[:strings.Index(base, `0102030405060708090a0b0c0d0e0f10`)+32],
		"no spans":                       `{"resourceSpans":[]}`,
		"trailing garbage":               base + `x`,
		"truncated":                      base[:len(base)/2],
		"timestamp with a fraction":      strings.Replace(base, `1777539600000000000`, `1.5`, 1),
		"two values in one attribute":    strings.Replace(base, `{"intValue":2}`, `{"intValue":2,"stringValue":"2"}`, 1),
	}
	keys := newKeepSet(testKeep)
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if _, ok := decodeFastOTLP([]byte(line), keys); ok {
				t.Errorf("the fast path took a line it must leave to pdata:\n%s", line)
			}
		})
	}
}

func TestFastOTLPJSONKeepsOnlyKeptAttributes(t *testing.T) {
	line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}},{"key":"host.name","value":{"stringValue":"h"}},{"key":"x","value":{"intValue":"7"}}]},"scopeSpans":[{"scope":{"name":"s","attributes":[{"key":"q","value":{"doubleValue":0.5}}]},"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","parentSpanId":"","name":"n","kind":"SPAN_KIND_SERVER","startTimeUnixNano":"5","endTimeUnixNano":"6","attributes":[{"key":"jsonrpc.request.id","value":{"stringValue":"1"}},{"value":{"boolValue":true},"key":"plugin.mcp.cache_hit"},{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}},{"key":"ratio","value":{"doubleValue":-1.25}}],"status":{"code":"STATUS_CODE_OK"}}]}]}]}`
	if !checkFastMatchesPdata(t, []byte(line)) {
		t.Fatal("the fast path fell back on a line in the common shape")
	}
	b, _ := decodeFastOTLP([]byte(line), newKeepSet(testKeep))
	rs := batchTraces(b).ResourceSpans().At(0)
	if got := rs.Resource().Attributes().Len(); got != 2 { // service.name and x
		t.Errorf("resource kept %d attributes, want 2", got)
	}
	sp := rs.ScopeSpans().At(0).Spans().At(0)
	if got := sp.Attributes().Len(); got != 1 {
		t.Errorf("span kept %d attributes, want 1 (the first cache_hit)", got)
	}
	if v, _ := sp.Attributes().Get("plugin.mcp.cache_hit"); !v.Bool() {
		t.Error("a repeated key kept the later value; the index keeps the first")
	}
}

// FuzzFastOTLPJSONMatchesPdata feeds arbitrary lines to the fast decoder:
// either it falls back, or pdata accepts the line too and reads the same
// kept spans and attributes from it.
func FuzzFastOTLPJSONMatchesPdata(f *testing.F) {
	for _, l := range fastSeedLines(f) {
		f.Add(l)
	}
	// Small lines in the common shape give the mutator room to explore.
	for _, l := range []string{
		`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"g"}}]},"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","name":"n","kind":1,"startTimeUnixNano":"5","endTimeUnixNano":"6","attributes":[{"key":"plugin.mcp.cache_hit","value":{"boolValue":true}},{"key":"x","value":{"intValue":"-7"}}],"status":{}}]}]}]}`,
		`{"resource_spans":[{"scope_spans":[{"spans":[{"trace_id":"0102030405060708090A0B0C0D0E0F10","span_id":"1112131415161718","parent_span_id":"","kind":"SPAN_KIND_CLIENT","start_time_unix_nano":5,"status":{"code":"STATUS_CODE_ERROR"}}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","attributes":[{"value":{"stringValue":"v"},"key":"x"},{"key":"y","value":{"doubleValue":1.5}}]}]}]}]}`,
	} {
		f.Add([]byte(l))
	}
	// And every spelling the fast path takes (fast_shapes_test.go).
	for _, l := range fastJSONShapes() {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastMatchesPdata(t, line)
	})
}

func TestStringStopFindsTheFirstSpecialByte(t *testing.T) {
	naive := func(b []byte) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 {
				return i
			}
		}
		return -1
	}
	var cases [][]byte
	for n := 0; n < 20; n++ {
		for _, c := range []byte{'"', '\\', 0, 0x1f, '\n', ' ', '!'} {
			b := bytes.Repeat([]byte{'a'}, n)
			cases = append(cases, b, append(bytes.Clone(b), c, '"'))
			hi := bytes.Repeat([]byte{0xe2, 0x80, 0x9c, 0x21, 0x5b}, n) // UTF-8 and the bytes next to '"' and '\'
			cases = append(cases, hi, append(bytes.Clone(hi), c, 'x'))
		}
	}
	for _, b := range cases {
		if got, want := stringStop(b), naive(b); got != want {
			t.Errorf("stringStop(%q) = %d, want %d", b, got, want)
		}
	}
}

func TestFastOTLPJSONMatchesPdataOnEdgeCases(t *testing.T) {
	tests := map[string]string{
		"invalid UTF-8 kept as is":             "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"1112131415161718\",\"name\":\"a\xff\xfeb\",\"attributes\":[{\"key\":\"x\",\"value\":{\"stringValue\":\"\xc3\x28\"}}]}]}]}]}",
		"spaces between tokens":                strings.ReplaceAll(strings.ReplaceAll(otlpCamelNumbers, `":`, `" : `), `,"`, ` , "`),
		"snake case and enum names":            otlpSnakeNames,
		"numbers as numbers":                   otlpCamelNumbers,
		"resources without spans and repeated": `{"resourceSpans":[{"resource":{"attributes":[{"key":"x","value":{"intValue":"-3"}},{"key":"service.name","value":{"stringValue":"a"}}]}},{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"b"}},{"key":"service.name","value":{"stringValue":"c"}}]},"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","name":"n","attributes":[{"key":"x","value":{"boolValue":true}},{"key":"mcp.tool.name","value":{"stringValue":"t"}}]}]},{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f11","spanId":"1112131415161718","name":"n","endTimeUnixNano":"1","startTimeUnixNano":"9"}]}]},{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"2112131415161718","parentSpanId":"1112131415161718","attributes":[{"key":"mcp.tool.name","value":{"stringValue":"t"}}]}]}]}]}`,
		"value before key":                     `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","attributes":[{"value":{"intValue":"0042"},"key":"plugin.mcp.attempt"}]}]}]}]}`,
		"escapes in skipped strings":           `{"resourceSpans":[{"scopeSpans":[{"scope":{"name":"a\"b\u00e9"},"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","traceState":"k=\\v","attributes":[{"key":"jsonrpc.request.id","value":{"stringValue":"\n"}}]}]}]}]}`,
		// span guesses a span's keys in the exporters' order; these
		// come in other orders and near-misses of it.
		"span keys reversed":         `{"resourceSpans":[{"scopeSpans":[{"spans":[{"status":{},"attributes":[{"key":"mcp.tool.name","value":{"stringValue":"t"}}],"endTimeUnixNano":"2","startTimeUnixNano":"1","kind":3,"name":"n","parentSpanId":"2122232425262728","spanId":"1112131415161718","traceId":"0102030405060708090a0b0c0d0e0f10"}]}]}]}`,
		"span keys past the guesses": `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","attributes":[],"spanId":"1112131415161718","name":"n","kind":3}]}]}]}`,
		"span key a guess's prefix":  `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","traceState":"x","name":"n"}]}]}]}`,
		"flags before the name":      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","flags":256,"name":"n","kind":1}]}]}]}`,
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if !checkFastMatchesPdata(t, []byte(line)) {
				t.Errorf("the fast path fell back on a line it should take:\n%s", line)
			}
		})
	}
}

// batchSink is a BatchSink that counts what it gets on each path.
type batchSink struct {
	traces, batches, spans, attrs int
}

func (s *batchSink) ConsumeTraces(_ *Input, td ptrace.Traces) error {
	s.traces++
	s.spans += td.SpanCount()
	return nil
}

func (s *batchSink) ConsumeBatch(_ *Input, b *Batch) error {
	s.batches++
	s.spans += len(b.Spans)
	s.attrs += len(b.Attrs)
	return nil
}

var _ BatchSink = (*batchSink)(nil)

// TestProjectionOnlyForBatchSinks pins the seam: a plain Sink gets pdata
// with every attribute; a BatchSink gets compact batches holding only the
// attributes ReadOptions.Keep names, and no pdata, for OTLP JSON lines and
// OTLP protobuf records alike.
func TestProjectionOnlyForBatchSinks(t *testing.T) {
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces([]byte(otlpCamelNumbers))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	paths := map[string]string{
		"json lines": writeInputFile(t, dir, "one.jsonl", []byte(otlpCamelNumbers+"\n")),
		"protobuf":   writeInputFile(t, dir, "one.pb", bytes.Join(protoRecords(t, td), nil)),
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			n := 0
			inputs, err := Read(t.Context(), []string{path}, ReadOptions{Strict: true}, SinkFunc(func(_ *Input, td ptrace.Traces) error {
				n += td.ResourceSpans().At(0).Resource().Attributes().Len()
				n += td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes().Len()
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			if n != 3 || inputs[0].Spans != 1 {
				t.Errorf("a plain Sink got %d attributes of %d spans, want all 3 of 1", n, inputs[0].Spans)
			}
			for _, tc := range []struct {
				name string
				keep KeepAttrs
				want int
			}{
				{"vocabulary keys", testKeep, 3}, // service.name, plugin.mcp.attempt, plugin.mcp.cache_hit are all kept
				{"no key kept", KeepAttrs{}, 0},
				{"one key kept", KeepAttrs{Span: []string{"plugin.mcp.attempt"}}, 1},
			} {
				t.Run(tc.name, func(t *testing.T) {
					s := &batchSink{}
					inputs, err := Read(t.Context(), []string{path}, ReadOptions{Strict: true, Keep: tc.keep}, s)
					if err != nil {
						t.Fatal(err)
					}
					if s.traces != 0 || s.batches != 1 || s.spans != 1 || inputs[0].Spans != 1 {
						t.Errorf("the BatchSink got %d pdata batches and %d batches of %d spans (Input.Spans %d), want 0, 1 and 1",
							s.traces, s.batches, s.spans, inputs[0].Spans)
					}
					if s.attrs != tc.want {
						t.Errorf("the batch kept %d attributes, want %d", s.attrs, tc.want)
					}
				})
			}
		})
	}
}

// TestParseUint64MatchesStrconv checks parseUint64 against strconv on
// lengths around its 19-digit fast loop and on the bytes next to the
// digits ('/' below '0', ':' above '9'), in each place.
func TestParseUint64MatchesStrconv(t *testing.T) {
	cases := []string{"", "0", "7", "0042", "1700000000123456789", "9999999999999999999",
		"18446744073709551615", "18446744073709551616", "00000000000000000001", "-1", "+1", "1_0", "12a", " 1", "1 ", "0x10", "١",
		":", "/", "1:", "1/", ":1", "/1", "17000000001234567:9", "1700000000123456/89"}
	for _, s := range cases {
		want, err := strconv.ParseUint(s, 10, 64)
		got, ok := parseUint64([]byte(s))
		if ok != (err == nil) || (ok && got != want) {
			t.Errorf("parseUint64(%q) = %d, %v; strconv gives %d, %v", s, got, ok, want, err)
		}
	}
}

// TestFastOTLPJSONLeavesAnUnclosedValueToPdata pins the compact attribute
// path's test of the "}}" closing a value and its attribute: an attribute
// object left open (its value closed, then white space and the list's
// ']') is malformed JSON pdata refuses, and the fast path must leave the
// line to it rather than take any two bytes for the "}}" and carry on.
func TestFastOTLPJSONLeavesAnUnclosedValueToPdata(t *testing.T) {
	line := []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) +
		`,"attributes":[{"key":"plugin.mcp.cache_key","value":{"stringValue":"a"} ]}]}]}]}`)
	if _, err := unmarshalOTLPJSON(line, nil); err == nil {
		t.Fatalf("pdata reads the line: the case tests nothing:\n%s", line)
	}
	if _, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
		t.Errorf("the fast path took a line pdata refuses:\n%s", line)
	}
}

// TestFastOTLPJSONSkipsOnlyHexUnicodeEscapes pins isHexDigit's three
// ranges by what the fast path leaves to pdata: a \u escape in a skipped
// string (a span's traceState) holding a character just past a range
// ('g', 'G', ':', 'z', 'Z') is no escape, pdata refuses the line, and the
// fast path must not skip over it as one.
func TestFastOTLPJSONSkipsOnlyHexUnicodeEscapes(t *testing.T) {
	withState := func(state string) []byte {
		return []byte(strings.Replace(otlpLine(1), `"name":"plugin.mcp.invoke"`, `"name":"plugin.mcp.invoke","traceState":"`+state+`"`, 1))
	}
	if _, ok := decodeFastOTLP(withState(`a\u00e9Fb`), newKeepSet(testKeep)); !ok {
		t.Fatal("the fast path falls back on a well-formed escape: the cases test nothing")
	}
	for _, c := range []string{"g", "G", ":", "z", "Z"} {
		line := withState(`a\u00e` + c + `b`)
		if _, err := unmarshalOTLPJSON(line, nil); err == nil {
			t.Fatalf("%q: pdata reads the line: the case tests nothing", c)
		}
		if _, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
			t.Errorf("%q: the fast path skipped an escape pdata refuses:\n%s", c, line)
		}
	}
}

// oneSpanLine is an OTLP JSON line of one span with the given attributes.
func oneSpanLine(attrs string) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","attributes":[` +
		attrs + `]}]}]}]}`)
}

// TestFastOTLPJSONLeavesAttributesItCannotHoldToPdata pins the fast path's
// tests on one attribute: a key cut by a byte a key does not hold
// unescaped (compactAttr stops there and must not read on past it: the
// bytes after the backslash here look like the rest of a compact
// attribute), and a kept key whose value is empty or missing (a batch
// holds a string, a bool or an int, nothing else). pdata refuses the first
// and reads the others; either way the fast path leaves the line to it.
func TestFastOTLPJSONLeavesAttributesItCannotHoldToPdata(t *testing.T) {
	for _, tc := range []struct {
		name       string
		attrs      string
		pdataReads bool
	}{
		// compactAttr stops at the byte; read on, the key would be "x".
		{"a key cut by an invalid escape", `{"key":"x\,"value":{"stringValue":"v"}}`, false},
		{"a key cut by a control byte", "{\"key\":\"x\x01,\"value\":{\"stringValue\":\"v\"}}", false},
		// A batch holds a string, a bool or an int: no empty value.
		{"a kept key with an empty value", `{"key":"x","value":{}}`, true},
		{"a kept key without a value", `{"key":"x"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := oneSpanLine(tc.attrs)
			if _, err := unmarshalOTLPJSON(line, nil); (err == nil) != tc.pdataReads {
				t.Fatalf("pdata reads the line: %v, the case wants %v: it tests nothing:\n%s", err == nil, tc.pdataReads, line)
			}
			if b, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
				t.Errorf("the fast path took the line (%d attributes kept), it must leave it to pdata:\n%s", len(b.Attrs), line)
			}
		})
	}
}

// TestFastOTLPJSONTakesEveryDigitOfASkippedDouble pins doubleLit's digit
// range at both ends (a range stopping short of '9' would leave every
// double with a 9 in its fraction to pdata): a skipped double value holding each
// digit is in the common shape, and the fast path reads it as pdata does.
func TestFastOTLPJSONTakesEveryDigitOfASkippedDouble(t *testing.T) {
	for _, v := range []string{"0.9", "-1234567890.0123456789", "9.0", "0.0"} {
		line := oneSpanLine(`{"key":"ratio","value":{"doubleValue":` + v + `}},{"key":"x","value":{"intValue":"1"}}`)
		if !checkFastMatchesPdata(t, line) {
			t.Errorf("the fast path fell back on a skipped double %s:\n%s", v, line)
		}
	}
}

// TestDigitRunMatchesStrconv checks the run of digits, eight at a time,
// against strconv over random runs of every length up to 25 (past the 19
// it reads), with digits of every value at every place and a byte after
// them that is or is not a digit's neighbour ('/' and ':' bound '0'-'9'),
// and more digits after that byte (the input goes on past a number, and
// a 19-digit read must not take them).
func TestDigitRunMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	ends := []string{"", `"`, "/", ":", "a", " "}
	for range 40000 {
		n := r.IntN(26)
		digits := make([]byte, n)
		for i := range digits {
			digits[i] = byte('0' + r.IntN(10))
		}
		end := ends[r.IntN(len(ends))]
		in := append(digits[:n:n], end...)
		for range r.IntN(12) * min(len(end), 1) {
			in = append(in, byte('0'+r.IntN(10)))
		}
		v, got := digitRun(in)
		want := min(n, 19)
		if got != want {
			t.Fatalf("digitRun(%q) read %d digits, want %d", in, got, want)
		}
		if want == 0 {
			if v != 0 {
				t.Fatalf("digitRun(%q) = %d with no digit", in, v)
			}
			continue
		}
		ref, err := strconv.ParseUint(string(digits[:want]), 10, 64)
		if err != nil || v != ref {
			t.Fatalf("digitRun(%q) = %d, want %d (%v)", in, v, ref, err)
		}
	}
}

// TestEightDigitsRefusesEveryNonDigitByte puts each byte value at each of
// the eight places among digits: only '0'-'9' pass.
func TestEightDigitsRefusesEveryNonDigitByte(t *testing.T) {
	for place := range 8 {
		for c := range 256 {
			b := []byte("12345678")
			b[place] = byte(c)
			got := eightDigits(binary.LittleEndian.Uint64(b))
			if want := '0' <= c && c <= '9'; got != want {
				t.Fatalf("eightDigits with %#x at %d = %v, want %v", c, place, got, want)
			}
		}
	}
}

// TestSpanKeyAgreesWithTheGuessOrder pins that a key span guesses and
// the same key read without a guess reach the same case of span's switch:
// spanKey gives each key of spanKeyOrder its own index there, and a key
// span leaves to spanRare none.
func TestSpanKeyAgreesWithTheGuessOrder(t *testing.T) {
	for i, o := range spanKeyOrder {
		if got := spanKey([]byte(o.key)); got != i {
			k := o.key
			t.Errorf("spanKey(%q) = %d, want its index in spanKeyOrder, %d", k, got, i)
		}
	}
	for _, k := range []string{"traceState", "droppedAttributesCount", "events", "links", "trace", ""} {
		if got := spanKey([]byte(k)); got != -1 {
			t.Errorf("spanKey(%q) = %d, want -1 (spanRare's or unknown)", k, got)
		}
	}
}

// TestFastOTLPJSONReadsEnumNumbersAsPdataDoes pins the enum reader on a
// span's kind and status code written as numbers: one digit within the
// names is taken, and anything else (two digits, a leading zero, one past
// the last name) is read as pdata reads it or left to pdata, never taken
// as its first digit (a kind of 23 is no server span).
func TestFastOTLPJSONReadsEnumNumbersAsPdataDoes(t *testing.T) {
	span := func(fields string) []byte {
		return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","name":"n",` +
			fields + `}]}]}]}`)
	}
	for _, tc := range []struct {
		fields string
		taken  bool // the fast path must take it (one digit, a defined value)
	}{
		{`"kind":0`, true},
		{`"kind":5`, true},
		{`"kind":6`, false},
		{`"kind":12`, false},
		{`"kind":23`, false},
		{`"kind":02`, false},
		{`"status":{"code":2}`, true},
		{`"status":{"code":3}`, false},
		{`"status":{"code":12}`, false},
		{`"status":{"code":21}`, false},
	} {
		t.Run(tc.fields, func(t *testing.T) {
			if fast := checkFastMatchesPdata(t, span(tc.fields)); tc.taken && !fast {
				t.Errorf("the fast path fell back on %s", tc.fields)
			}
		})
	}
}
