package ingest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The same one-span request in the spellings the OTLP/JSON mapping allows
// (and two it does not, which the reader normalises): every one must read
// as the same span.
const (
	otlpCamelNumbers = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}}]},"scopeSpans":[{"scope":{"name":"s"},"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","parentSpanId":"2122232425262728","name":"plugin.mcp.connection.acquire","kind":3,"startTimeUnixNano":1777539600000000000,"endTimeUnixNano":1777539600001000000,"attributes":[{"key":"plugin.mcp.attempt","value":{"intValue":2}},{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}}],"status":{"code":2,"message":"boom"}}]}]}]}`
	otlpSnakeNames   = `{"resource_spans":[{"resource":{"attributes":[{"key":"service.name","value":{"string_value":"gw"}}]},"scope_spans":[{"scope":{"name":"s"},"spans":[{"trace_id":"0102030405060708090A0B0C0D0E0F10","span_id":"1112131415161718","parent_span_id":"2122232425262728","name":"plugin.mcp.connection.acquire","kind":"SPAN_KIND_CLIENT","start_time_unix_nano":"1777539600000000000","end_time_unix_nano":"1777539600001000000","attributes":[{"key":"plugin.mcp.attempt","value":{"int_value":"2"}},{"key":"plugin.mcp.cache_hit","value":{"bool_value":false}}],"status":{"code":"STATUS_CODE_ERROR","message":"boom"}}]}]}]}`
	// protobuf's own JSON mapping writes ids in base64.
	otlpBase64IDs = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}}]},"scopeSpans":[{"scope":{"name":"s"},"spans":[{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA==","spanId":"ERITFBUWFxg=","parentSpanId":"ISIjJCUmJyg=","name":"plugin.mcp.connection.acquire","kind":"SPAN_KIND_CLIENT","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600001000000","attributes":[{"key":"plugin.mcp.attempt","value":{"intValue":"2"}},{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}}],"status":{"code":"STATUS_CODE_ERROR","message":"boom"}}]}]}]}`
	// OTLP before 1.0 named scopes "instrumentation libraries".
	otlpLibrarySpans = `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}}]},"instrumentationLibrarySpans":[{"instrumentationLibrary":{"name":"s"},"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","parentSpanId":"2122232425262728","name":"plugin.mcp.connection.acquire","kind":3,"startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600001000000","attributes":[{"key":"plugin.mcp.attempt","value":{"intValue":"2"}},{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}}],"status":{"code":2,"message":"boom"}}]}]}]}`
)

func TestOTLPJSONSpellings(t *testing.T) {
	_, want, err := readBytes(t, []byte(otlpCamelNumbers+"\n"), ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	wantCanon := canonSpans(want...)
	if len(wantCanon) != 1 || !strings.Contains(wantCanon[0], "kind=Client status=Error") || !strings.Contains(wantCanon[0], "plugin.mcp.attempt=Int:2") {
		t.Fatalf("reference span read as %q", wantCanon)
	}
	tests := map[string]string{
		"snake case, enum names, int64 as strings": otlpSnakeNames,
		"base64 ids":                  otlpBase64IDs,
		"instrumentationLibrarySpans": otlpLibrarySpans,
	}
	for name, doc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, variant := range []string{doc + "\n", "  \n" + indentJSON(t, doc)} { // a line, and a pretty document
				_, got, err := readBytes(t, []byte(variant), ReadOptions{Strict: true})
				if err != nil {
					t.Fatal(err)
				}
				diffCanon(t, canonSpans(got...), wantCanon)
			}
		})
	}
}

func indentJSON(t *testing.T, doc string) string {
	t.Helper()
	var b strings.Builder
	depth := 0
	inStr := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		b.WriteByte(c)
		switch {
		case inStr:
			if c == '\\' {
				i++
				b.WriteByte(doc[i])
			} else if c == '"' {
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			depth++
			b.WriteString("\n" + strings.Repeat("  ", depth))
		case c == ',':
			b.WriteString("\n" + strings.Repeat("  ", depth))
		case c == '}' || c == ']':
			depth--
		}
	}
	return b.String()
}

// A Jaeger trace as jaeger-query writes it, with what Jaeger does to ids
// (leading zeros dropped, 64-bit trace ids), typed tags with values as
// strings, an embedded process, logs and references of both kinds.
const jaegerDoc = `{"data":[{"traceID":"abc","spans":[
 {"traceID":"abc","spanID":"1","operationName":"root","references":[],"startTime":1777539600000000,"duration":1500,
  "tags":[{"key":"span.kind","type":"string","value":"server"},{"key":"otel.status_code","type":"string","value":"OK"},{"key":"n","type":"int64","value":"9007199254740993"}],
  "logs":[{"timestamp":1777539600000100,"fields":[{"key":"event","type":"string","value":"retry"},{"key":"attempt","type":"int64","value":2},{"key":"backoff","type":"float64","value":0.25}]}],
  "processID":"p1"},
 {"traceID":"00000000000000000000000000000abc","spanID":"00000000000000f2","operationName":"child","startTime":1777539600000200,"duration":"300",
  "references":[{"refType":"FOLLOWS_FROM","traceID":"def","spanID":"9"},{"refType":"CHILD_OF","traceID":"abc","spanID":"1"}],
  "tags":[{"key":"error","type":"bool","value":true},{"key":"otel.status_description","type":"string","value":"timeout"},{"key":"ratio","type":"float64","value":0.5},{"key":"blob","type":"binary","value":"AQI="},{"key":"untyped","value":7},{"key":"otel.scope.name","type":"string","value":"lib"}],
  "processID":"p2","process":{"serviceName":"ignored","tags":[]}},
 {"traceID":"abc","spanID":"f3","operationName":"embedded","startTime":1777539600000300,"duration":1,"tags":[{"key":"span.kind","type":"string","value":"weird"}],
  "process":{"serviceName":"solo","tags":[{"key":"host","type":"string","value":"h1"}]}}
],"processes":{"p1":{"serviceName":"gw","tags":[{"key":"service.instance.id","type":"string","value":"i-1"},{"key":"pid","type":"int64","value":42}]},"p2":{"serviceName":"db","tags":[]}},"warnings":null}],"total":0,"limit":0,"offset":0,"errors":null}`

func TestJaegerDetails(t *testing.T) {
	inputs, batches, err := readBytes(t, []byte(jaegerDoc), ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if inputs[0].Format != FormatJaeger || inputs[0].Spans != 3 {
		t.Fatalf("input = %+v", inputs[0])
	}
	got := canonSpans(batches...)
	want := []string{
		`00000000000000000000000000000abc 0000000000000001 parent= "root" kind=Server status=Ok/"" 1777539600000000000..1777539600001500000 scope=@ res={pid=Int:42,service.instance.id=Str:i-1,service.name=Str:gw} attrs={n=Int:9007199254740993} event="retry"@1777539600000100000{attempt=Int:2,backoff=Double:0.25}`,
		`00000000000000000000000000000abc 00000000000000f2 parent=0000000000000001 "child" kind=Unspecified status=Error/"timeout" 1777539600000200000..1777539600000500000 scope=lib@ res={service.name=Str:db} attrs={blob=Bytes:AQI=,ratio=Double:0.5,untyped=Int:7} link=00000000000000000000000000000def/0000000000000009`,
		`00000000000000000000000000000abc 00000000000000f3 parent= "embedded" kind=Unspecified status=Unset/"" 1777539600000300000..1777539600000301000 scope=@ res={host=Str:h1,service.name=Str:solo} attrs={span.kind=Str:weird}`,
	}
	slices.Sort(want)
	diffCanon(t, got, want)

	// The log became an event with its name and every field after the
	// first; the FOLLOWS_FROM reference a link.
	forEachTestSpan(batches[0], func(sp ptrace.Span) {
		switch sp.Name() {
		case "root":
			ev := sp.Events().At(0)
			if ev.Name() != "retry" || ev.Timestamp() != 1777539600000100000 || canonMap(ev.Attributes()) != "{attempt=Int:2,backoff=Double:0.25}" {
				t.Errorf("event = %s at %d %s", ev.Name(), ev.Timestamp(), canonMap(ev.Attributes()))
			}
		case "child":
			l := sp.Links().At(0)
			if l.TraceID().String() != "00000000000000000000000000000def" || l.SpanID().String() != "0000000000000009" {
				t.Errorf("link = %s/%s", l.TraceID(), l.SpanID())
			}
		}
	})
}

// Tempo documents in their three shapes: the same spans.
func TestTempoShapes(t *testing.T) {
	span := `{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA==","spanId":"ERITFBUWFxg=","name":"plugin.mcp.invoke","kind":"SPAN_KIND_INTERNAL","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600002000000","attributes":[{"key":"mcp.tool.name","value":{"stringValue":"list_logs"}}],"status":{"code":"STATUS_CODE_OK"}}`
	res := `"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gw"}}]}`
	docs := map[string]string{
		"batches, instrumentationLibrarySpans": `{"batches":[{` + res + `,"instrumentationLibrarySpans":[{"instrumentationLibrary":{"name":"s"},"spans":[` + span + `]}]}]}`,
		"batches, scopeSpans":                  `{"batches":[{` + res + `,"scopeSpans":[{"scope":{"name":"s"},"spans":[` + span + `]}]}]}`,
		"trace.resourceSpans":                  `{"trace":{"resourceSpans":[{` + res + `,"scopeSpans":[{"scope":{"name":"s"},"spans":[` + span + `]}]}]}}`,
		"plain resourceSpans":                  `{"resourceSpans":[{` + res + `,"scopeSpans":[{"scope":{"name":"s"},"spans":[` + span + `]}]}]}`,
	}
	want := []string{`0102030405060708090a0b0c0d0e0f10 1112131415161718 parent= "plugin.mcp.invoke" kind=Internal status=Ok/"" 1777539600000000000..1777539600002000000 scope=s@ res={service.name=Str:gw} attrs={mcp.tool.name=Str:list_logs}`}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			for _, force := range []Format{FormatAuto, FormatTempo} {
				inputs, got, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: force})
				if err != nil {
					t.Fatalf("force %s: %v", force, err)
				}
				if force == FormatTempo && inputs[0].Format != FormatTempo {
					t.Errorf("forced tempo read as %s", inputs[0].Format)
				}
				diffCanon(t, canonSpans(got...), want)
			}
		})
	}
}

func TestNormalizeID(t *testing.T) {
	tests := []struct {
		in   string
		size int
		want string
		ok   bool
	}{
		{"0102030405060708090a0b0c0d0e0f10", 16, "0102030405060708090a0b0c0d0e0f10", true},
		{"AQIDBAUGBwgJCgsMDQ4PEA==", 16, "0102030405060708090a0b0c0d0e0f10", true},
		{"AQIDBAUGBwgJCgsMDQ4PEA", 16, "0102030405060708090a0b0c0d0e0f10", true},
		{"ERITFBUWFxg=", 8, "1112131415161718", true},
		{"--------__8=", 8, "fbefbefbefbeffff", true}, // URL alphabet
		{"--------__8", 8, "fbefbefbefbeffff", true},
		{"abc", 8, "", false},
		{"", 8, "", false},
		{"zz02030405060708", 8, "", false},
		// Hex one digit or two past the id's, or one short: no id (no
		// base64 of the id's size is that long).
		{"0102030405060708090a0b0c0d0e0f101", 16, "", false},
		{"0102030405060708090a0b0c0d0e0f1011", 16, "", false},
		{"0102030405060708090a0b0c0d0e0f1", 16, "", false},
		{"11121314151617181", 8, "", false},
		// base64 whose length could hold 8 bytes but that decodes to one
		// byte more or one less: no span id.
		{"ERITFBUWFxgZ", 8, "", false},
		{"ERITFBUWFw==", 8, "", false},
	}
	for _, tt := range tests {
		got, err := normalizeID(tt.in, tt.size)
		if tt.ok && (err != nil || got != tt.want) {
			t.Errorf("normalizeID(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if !tt.ok && err == nil {
			t.Errorf("normalizeID(%q) = %q, want an error", tt.in, got)
		}
	}
}

func TestByteOrderMarkIsSkipped(t *testing.T) {
	for name, doc := range map[string]string{
		"json lines":      otlpCamelNumbers + "\n" + otlpCamelNumbers + "\n",
		"pretty document": indentJSON(t, otlpCamelNumbers),
		"jaeger":          jaegerDoc,
	} {
		inputs, _, err := readBytes(t, append([]byte("\xef\xbb\xbf"), doc...), ReadOptions{Strict: true})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if inputs[0].Spans == 0 {
			t.Errorf("%s: no spans", name)
		}
	}
}

// TestABOMsBytesStartingAProtobufDumpAreItsFirstLength pins that only a
// JSON input has its byte order mark skipped: a dump read as protobuf
// whose first bytes are EF BB BF starts with a length prefix of about 4
// GB, refused at byte 0, never skipped so that the records after it read.
func TestABOMsBytesStartingAProtobufDumpAreItsFirstLength(t *testing.T) {
	data := append(append([]byte{}, utf8BOM...), framed(request(baseResource, baseSpan()))...)
	_, _, err := readBytes(t, data, ReadOptions{Strict: true, Format: FormatOTLPProto})
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, ErrRecordTooLarge) || re.Offset != 0 {
		t.Fatalf("err %v, want a ReadError at byte 0 wrapping ErrRecordTooLarge", err)
	}
}

// TestJaegerNumbersAndIDsAtTheirEdges pins the Jaeger reader's scalar
// edges: a number given as null or as an empty string (quoted or not) is
// 0; a hex id must be 1 to 2×len(dst) hex digits, and one that is not is
// refused for that, not for what hex.Decode finds.
func TestJaegerNumbersAndIDsAtTheirEdges(t *testing.T) {
	for _, in := range []string{`null`, `""`, `"null"`, `0`} {
		n := jaegerInt(7)
		if err := n.UnmarshalJSON([]byte(in)); err != nil || n != 0 {
			t.Errorf("jaegerInt(%s) = %d, %v; want 0", in, n, err)
		}
	}
	dst := make([]byte, 8)
	for _, tc := range []struct {
		id string
		ok bool
	}{
		{"1", true},
		{"0123456789abcdef", true},
		{"", false},
		{"0123456789abcdef0", false},
		{"012345678g", false},
	} {
		err := jaegerHexID(tc.id, dst)
		if (err == nil) != tc.ok || (err != nil && err.Error() != "expected 1 to 16 hex digits") {
			t.Errorf("jaegerHexID(%q): %v, want accepted %v (refused as not 1 to 16 hex digits)", tc.id, err, tc.ok)
		}
	}
}

// TestIsHexAtEachRangesEdges pins isHex's six bounds: each range's first
// and last character is a hex digit, the characters just outside are not.
func TestIsHexAtEachRangesEdges(t *testing.T) {
	for _, c := range "09afAF" {
		if !isHex(string(c)) {
			t.Errorf("isHex(%q) = false", c)
		}
	}
	for _, c := range "/:`g@G" {
		if isHex("0" + string(c)) {
			t.Errorf("isHex(%q) = true", "0"+string(c))
		}
	}
}

// TestTempoIDsOfALinkAreNormalisedButNoParent pins which ids
// normalizeIDs rewrites from base64 to hex: every trace and span id (both
// spellings), and the parent ids only of a span (withParent), never of a
// link, which has none of its own.
func TestTempoIDsOfALinkAreNormalisedButNoParent(t *testing.T) {
	const trace64, span64 = "AQIDBAUGBwgJCgsMDQ4PEA==", "ERITFBUWFxg="
	const traceHex, spanHex = "0102030405060708090a0b0c0d0e0f10", "1112131415161718"
	for _, withParent := range []bool{false, true} {
		m := map[string]any{"traceId": trace64, "trace_id": trace64, "spanId": span64, "span_id": span64,
			"parentSpanId": span64, "parent_span_id": span64}
		if err := normalizeIDs(m, withParent); err != nil {
			t.Fatal(err)
		}
		parent := span64
		if withParent {
			parent = spanHex
		}
		want := map[string]any{"traceId": traceHex, "trace_id": traceHex, "spanId": spanHex, "span_id": spanHex,
			"parentSpanId": parent, "parent_span_id": parent}
		if !maps.Equal(m, want) {
			t.Errorf("withParent %v: %v, want %v", withParent, m, want)
		}
	}
}

// TestJaegerErrorTagYieldsToAnExplicitStatus pins the error tag's rule
// (error=true never overrides otel.status_code=OK) and the parent's (a
// reference into another trace is no parent): the error tag makes a span
// an error only when no status says otherwise, and is kept as an attribute
// when it does not; the parent is the first CHILD_OF reference in the
// span's own trace, else its first FOLLOWS_FROM there (the cases are in
// TestJaegerParentIsFirstChildOfElseFirstFollowsFromInTheSameTrace), any
// other reference is a link.
func TestJaegerErrorTagYieldsToAnExplicitStatus(t *testing.T) {
	doc := `{"data":[{"traceID":"abc","spans":[
 {"traceID":"abc","spanID":"1","operationName":"ok","startTime":1,"duration":1,
  "tags":[{"key":"error","type":"bool","value":true},{"key":"otel.status_code","type":"string","value":"OK"}],
  "references":[{"refType":"CHILD_OF","traceID":"def","spanID":"9"},{"refType":"CHILD_OF","traceID":"abc","spanID":"2"}]},
 {"traceID":"abc","spanID":"2","operationName":"error","startTime":1,"duration":1,
  "tags":[{"key":"otel.status_code","type":"string","value":"ERROR"},{"key":"error","type":"bool","value":true}],
  "references":[{"refType":"CHILD_OF","traceID":"def","spanID":"9"}]},
 {"traceID":"abc","spanID":"3","operationName":"unset","startTime":1,"duration":1,
  "tags":[{"key":"error","type":"bool","value":true}],
  "references":[{"refType":"FOLLOWS_FROM","traceID":"abc","spanID":"1"}]}
],"processes":{}}]}`
	_, batches, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: FormatJaeger})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ok":    "status=Ok parent=0000000000000002 attrs={error=Bool:true} links=1",
		"error": "status=Error parent= attrs={} links=1",
		"unset": "status=Error parent=0000000000000001 attrs={} links=0",
	}
	n := 0
	for _, td := range batches {
		forEachTestSpan(td, func(sp ptrace.Span) {
			n++
			got := fmt.Sprintf("status=%s parent=%s attrs=%s links=%d", sp.Status().Code(), sp.ParentSpanID(), canonMap(sp.Attributes()), sp.Links().Len())
			if got != want[sp.Name()] {
				t.Errorf("span %q: %s, want %s", sp.Name(), got, want[sp.Name()])
			}
		})
	}
	if n != len(want) {
		t.Errorf("read %d spans, want %d", n, len(want))
	}
}
