package ingest

import (
	"strings"
	"testing"
)

// spanLine is one OTLP JSON request holding the span object span.
func spanLine(span string) []byte {
	return []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[` + span + `]}]}]}`)
}

const (
	inOrderIDs   = `"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718"`
	inOrderAttrs = `"attributes":[{"key":"mcp.session.id","value":{"stringValue":"s1"}},{"key":"plugin.mcp.cache_hit","value":{"boolValue":true}}]`
)

// TestSpansInAndOutOfOrderReadAsPdataReadsThem pins the span reader on
// spans whose keys it guesses throughout, spans with keys it reads
// without a guess (a rare field or a key out of order, after the
// attributes, spaces, snake case), and spans with every rare field, as
// the exporters of other instrumentations write them: each must be read
// by the fast path, as pdata reads it.
func TestSpansInAndOutOfOrderReadAsPdataReadsThem(t *testing.T) {
	tests := map[string]string{
		"every field in order": `{` + inOrderIDs + `,"parentSpanId":"2122232425262728","flags":256,"name":"n","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2",` +
			inOrderAttrs + `,"status":{"code":2}}`,
		"optional fields left out": `{` + inOrderIDs + `,"name":"n","status":{}}`,
		"a root's empty parent":    `{` + inOrderIDs + `,"parentSpanId":"","name":"n"}`,
		"a rare field after the attributes": `{` + inOrderIDs + `,"name":"n",` + inOrderAttrs +
			`,"droppedAttributesCount":1,"status":{}}`,
		"a key out of order after the attributes": `{` + inOrderIDs + `,` + inOrderAttrs + `,"name":"n"}`,
		"a space before a comma":                  `{` + inOrderIDs + ` ,"name":"n"}`,
		"every rare field beside every common one": `{` + inOrderIDs + `,"traceState":"k=v","parentSpanId":"2122232425262728","flags":1,"name":"n","kind":2,` +
			`"startTimeUnixNano":"1","endTimeUnixNano":"2",` + inOrderAttrs + `,"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,` +
			`"links":[],"droppedLinksCount":0,"status":{}}`,
		"the OpenTelemetry JS exporter's order": `{` + inOrderIDs + `,"parentSpanId":"2122232425262728","name":"n","kind":3,"startTimeUnixNano":"1","endTimeUnixNano":"2",` +
			inOrderAttrs + `,"droppedAttributesCount":0,"events":[],"droppedEventsCount":0,"status":{"code":0},"links":[],"droppedLinksCount":0,"flags":1}`,
		"snake case": `{"trace_id":"0102030405060708090a0b0c0d0e0f10","span_id":"1112131415161718","name":"n"}`,
	}
	checkSpansReadAsPdataReadsThem(t, tests)
}

// checkSpansReadAsPdataReadsThem runs each case of tests, the spans of
// one line by name, and fails it unless the fast path reads the line, as
// pdata reads it.
func checkSpansReadAsPdataReadsThem(t *testing.T, tests map[string]string) {
	t.Helper()
	for name, spans := range tests {
		t.Run(name, func(t *testing.T) {
			line := spanLine(spans)
			if !checkFastMatchesPdata(t, line) {
				t.Fatalf("the fast path gave up on\n%s", line)
			}
		})
	}
}

// TestTraceIDsReadAsPdataReadsThemRepeatedOrNot pins the memory of the
// last trace id (fastDec.traceID) on spans of one line: a repeated id, ids
// that differ from the last one in one digit only (the first, the last),
// and a return to an earlier id, each read as pdata reads it.
func TestTraceIDsReadAsPdataReadsThemRepeatedOrNot(t *testing.T) {
	const a = "0102030405060708090a0b0c0d0e0f10"
	withTrace := func(ids ...string) string {
		var spans []string
		for k, id := range ids {
			spans = append(spans, `{"traceId":"`+id+`","spanId":"111213141516171`+string(rune('0'+k))+`","name":"n"}`)
		}
		return strings.Join(spans, ",")
	}
	tests := map[string]string{
		"one trace's spans":         withTrace(a, a, a),
		"another last digit":        withTrace(a, a[:31]+"1"),
		"another first digit":       withTrace(a, "1"+a[1:]),
		"back to an earlier trace":  withTrace(a, a[:31]+"1", a),
		"the same id in upper case": withTrace(a, strings.ToUpper(a)),
	}
	checkSpansReadAsPdataReadsThem(t, tests)
}

// TestASpanWithRareFieldsLeavesNoAttributeBehind pins that a span with a
// rare field after its attributes keeps its attributes once: the batch's
// attributes are exactly those its spans and resources name.
func TestASpanWithRareFieldsLeavesNoAttributeBehind(t *testing.T) {
	span := `{` + inOrderIDs + `,"name":"n",` + inOrderAttrs + `,"droppedAttributesCount":1}`
	line := spanLine(strings.Repeat(span+",", 3) + span)
	b, ok := decodeFastOTLP(line, newKeepSet(testKeep))
	if !ok {
		t.Fatalf("the fast path gave up on\n%s", line)
	}
	defer putBatch(b)
	named := 0
	for i := range b.Spans {
		named += int(b.Spans[i].N)
	}
	for _, r := range b.Resources {
		named += int(r.N)
	}
	if named != 8 || len(b.Attrs) != named {
		t.Errorf("the batch holds %d attributes, its spans and resources name %d; want 8 of each", len(b.Attrs), named)
	}
}

// TestSpansTheFastPathLeavesToPdata pins the spans the fast path gives up
// on, in order or not, so that pdata reads them (and refuses the
// malformed): a repeated key (in order, a key read again where the next
// one was looked for), an attribute array or a span left open, a missing
// comma, and lines cut right after a span's value or with a key's pattern
// one byte short of the end.
func TestSpansTheFastPathLeavesToPdata(t *testing.T) {
	const cut = `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + inOrderIDs
	const rest = `,"kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2"}`
	tests := map[string][]byte{
		"a repeated key":              spanLine(`{` + inOrderIDs + `,"name":"a","name":"b"` + rest),
		"a repeated key out of order": spanLine(`{"name":"a",` + inOrderIDs + `,"name":"b"` + rest),
		"an attribute array left open": []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + inOrderIDs +
			`,"attributes":[{"key":"x","value":{"stringValue":"v"}}}]}]}]}`),
		"a span left open":                        []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + inOrderIDs + `,"name":"n"]}]}]}`),
		"a missing comma":                         spanLine(`{"traceId":"0102030405060708090a0b0c0d0e0f10""spanId":"1112131415161718"` + rest),
		"the line ends after a value":             []byte(cut + `,"name":"` + strings.Repeat("n", 30) + `"`),
		"a key's pattern a byte short of the end": []byte(cut + `,"name":"n","startTimeUnixNano":"1"`),
		"a first trace id of NUL bytes":           spanLine(`{"traceId":"` + strings.Repeat("\x00", 32) + `","spanId":"1112131415161718"` + rest),
		"a bad trace id after a good one":         spanLine(`{` + inOrderIDs + rest + `,{"traceId":"0102030405060708090a0b0c0d0e0f1g","spanId":"1112131415161718"` + rest),
	}
	for name, line := range tests {
		t.Run(name, func(t *testing.T) {
			if b, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the fast path read\n%s", line)
			}
		})
	}
}
