package ingest

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestBlockPoolRecyclesOnlyWholeBlocksWhileNoReadIsAbandoned pins
// putBlock's three guards by what getBlock hands out next: a nil block is
// ignored, a block of another size never enters the pool (getBlock would
// hand it to a caller that was promised blockBytes of room), and once a
// read was abandoned no block is recycled at all (the abandoned read may
// still write into it). A put that must be refused is checked over several
// rounds: a refused block never comes back, while sync.Pool hands a pooled
// one straight back to the goroutine that put it, so a put let through is
// seen in the first round or soon after. The process's abandoned flag is
// restored after, so an abandoned read of an earlier test stays counted.
func TestBlockPoolRecyclesOnlyWholeBlocksWhileNoReadIsAbandoned(t *testing.T) {
	was := readsAbandoned.Load()
	t.Cleanup(func() { readsAbandoned.Store(was) })
	const rounds = 50
	for _, tc := range []struct {
		name      string
		abandoned bool
		size      int // the capacity of the block put back
	}{
		{"an odd size is left to the GC", false, blockBytes / 2},
		{"a larger block is left to the GC", false, blockBytes + 1},
		{"after an abandoned read nothing is recycled", true, blockBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if was && !tc.abandoned {
				t.Skip("a read of an earlier test was abandoned: the pool recycles nothing in this process")
			}
			readsAbandoned.Store(tc.abandoned)
			for range rounds {
				b := make([]byte, 0, tc.size)
				putBlock(&b)
				got := getBlock(blockBytes)
				if got == &b {
					t.Fatalf("a block of capacity %d was recycled (abandoned read %v)", tc.size, tc.abandoned)
				}
				if cap(*got) < blockBytes {
					t.Fatalf("getBlock(%d) returned a block of capacity %d", blockBytes, cap(*got))
				}
			}
		})
	}
	t.Run("nil is ignored", func(t *testing.T) {
		readsAbandoned.Store(false)
		putBlock(nil) // a job without a block: must not panic
	})
}

// TestStrayClosersBeforeADeepRecordAreReadAsTooDeep pins the depth walk on
// malformed JSON: closing brackets and commas with nothing open (jsonDepth
// lets the depth go below zero, jsonDepthPlace finds no frame to pop or to
// count in, cutJSON keeps it at zero) are passed over, and the record,
// deeper than MaxDepth once its own brackets are counted, is cut and then
// reported by its decoder on its line where its JSON is malformed, never
// a panic of the walk.
func TestStrayClosersBeforeADeepRecordAreReadAsTooDeep(t *testing.T) {
	const jsonBase = 7 // otlpLineBrackets' levels besides its brackets
	for _, stray := range []string{"]", "}", "]}]", ",", ",]"} {
		t.Run(stray, func(t *testing.T) {
			deep := stray + otlpLineBrackets(2, MaxDepth-jsonBase+1+len(stray))
			inputs, _, err := readBytes(t, []byte(otlpLine(1)+deep), ReadOptions{})
			if err != nil || len(inputs) != 1 || inputs[0].Spans == 0 {
				t.Fatalf("inputs %+v, %v; want the first line read", inputs, err)
			}
			if w := strings.Join(inputs[0].Warnings, "\n"); !strings.Contains(w, "-:2 (byte ") {
				t.Errorf("warnings %q; want one naming line 2", inputs[0].Warnings)
			}
		})
	}
}

// TestFastOTLPProtoLeavesMalformedFieldsToPdata pins three checks of the
// projection decoder on records pdata refuses: a resource and a span's
// attribute written with another wire type than bytes, and an attribute
// key whose length needs a second byte (a first length byte of exactly
// 0x80: the compact path reads one-byte lengths only, and the general one
// finds the length past the record). Each must fall back to pdata, which
// reports it, and never be read as if it were well formed.
func TestFastOTLPProtoLeavesMalformedFieldsToPdata(t *testing.T) {
	scope := pb(nil).bytes(1, pb(nil).str(1, "scope")).bytes(2, baseSpan())
	longKey := append([]byte{0x0a, 0x80}, bytes.Repeat([]byte{'a'}, 128)...)
	longKey = append(longKey, pb(nil).bytes(2, pb(nil).str(1, "v"))...)
	for name, rec := range map[string][]byte{
		"a resource as a varint": pb(nil).bytes(1, pb(nil).varint(1, 7).bytes(2, scope)),
		// After a well-formed attribute, whose bytes the field iterator
		// still holds when the varint comes.
		"a span attribute as a varint":       request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, strAttr("x", "y")).varint(fieldSpanAttributes, 1))),
		"a key length of 0x80 read past end": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, longKey))),
	} {
		t.Run(name, func(t *testing.T) {
			var u ptrace.ProtoUnmarshaler
			if _, err := u.UnmarshalTraces(rec); err == nil {
				t.Fatalf("pdata reads the record: the case tests nothing: % x", rec)
			}
			if b, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the projection decoder took a record pdata refuses: % x", rec)
			}
		})
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
	if _, err := unmarshalOTLPJSON(line); err == nil {
		t.Fatalf("pdata reads the line: the case tests nothing:\n%s", line)
	}
	if _, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
		t.Errorf("the fast path took a line pdata refuses:\n%s", line)
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

// TestAKeyWithoutItsColonDecidesNoFormat pins firstFormatKey's colon: a
// member whose key is followed by anything but ':' is not JSON, and the
// scan stops there, whatever key comes after (here one a digit away from
// passing for a member with the value 1).
func TestAKeyWithoutItsColonDecidesNoFormat(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{`{"x":1,"resourceSpans":[]}`, "resourceSpans"},
		{`{"x"01,"resourceSpans":[]}`, ""},
		{`{"x" 01,"data":[]}`, ""},
	} {
		got, ok := firstFormatKey([]byte(c.head))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("firstFormatKey(%q) = %q, %v; want %q, %v", c.head, got, ok, c.want, c.want != "")
		}
	}
}

// TestOnlyTheLastLineOfAnInputIsCut pins when a bad JSON line is reported
// as cut (ErrTruncated, "the input ends inside this line"): only when it is
// the input's last and its JSON stops early. The same incomplete JSON on a
// line followed by another is a bad line for what the decoder says, and
// the lines after it are still read.
func TestOnlyTheLastLineOfAnInputIsCut(t *testing.T) {
	cut := otlpLine(2)[:len(otlpLine(2))/2]
	for _, tc := range []struct {
		name      string
		data      string
		truncated bool
	}{
		{"the last line", otlpLine(1) + cut, true},
		{"a line in the middle", otlpLine(1) + cut + "\n" + otlpLine(3), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, _, err := readBytes(t, []byte(tc.data), ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if w := inputs[0].Warnings; len(w) != 1 || !strings.Contains(w[0], ":2 ") {
				t.Fatalf("warnings %q, want one about line 2", w)
			}
			if got := strings.Contains(inputs[0].Warnings[0], "the input ends inside this line"); got != tc.truncated {
				t.Errorf("warning %q: says the input ends inside the line %v, want %v", inputs[0].Warnings[0], got, tc.truncated)
			}
			_, _, err = readBytes(t, []byte(tc.data), ReadOptions{Strict: true})
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("strict: %v; ErrTruncated %v, want %v", err, got, tc.truncated)
			}
		})
	}
}

// failingReader hands out data, then fails with first, then with second on
// every later read: a device that fails once and then differently.
type failingReader struct {
	data          []byte
	first, second error
	failed        bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	if !r.failed {
		r.failed = true
		return 0, r.first
	}
	return 0, r.second
}

// TestAFailingInputIsBlamedForItsFirstError pins that a read error of the
// input is the error reported, and the first one: an input that fails and
// then fails differently (bufio hands out an error once and reads on) is
// blamed as "a readable file" with the error it gave first, not reported
// as a bad record of the format with a later error.
func TestAFailingInputIsBlamedForItsFirstError(t *testing.T) {
	first, second := errors.New("the device failed"), errors.New("read on a closed device")
	data := otlpLine(1) + strings.TrimSuffix(otlpLine(2), "\n")
	_, err := Read(t.Context(), []string{"-"}, ReadOptions{Strict: true, Stdin: &failingReader{data: []byte(data), first: first, second: second}},
		SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, first) || errors.Is(err, second) || re.Expected != "a readable file" {
		t.Fatalf("err %v, want a ReadError expecting a readable file with the first error (%v) alone", err, first)
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
		if _, err := unmarshalOTLPJSON(line); err == nil {
			t.Fatalf("%q: pdata reads the line: the case tests nothing", c)
		}
		if _, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
			t.Errorf("%q: the fast path skipped an escape pdata refuses:\n%s", c, line)
		}
	}
}

// TestTheRecordCapIsASixteenthOfTheBudgetWithinItsBounds pins recordCap's
// clamp on both sides: a sixteenth of the budget, never under 1 MiB and
// never over maxLineBytes, however large the budget.
func TestTheRecordCapIsASixteenthOfTheBudgetWithinItsBounds(t *testing.T) {
	for _, tc := range []struct {
		budget, want int64
	}{
		{1 << 20, 1 << 20},
		{64 << 20, 4 << 20},
		{16 * maxLineBytes, maxLineBytes},
		{64 * maxLineBytes, maxLineBytes},
	} {
		if got := (ReadOptions{MaxMemory: tc.budget}).budget().recordCap(); got != tc.want {
			t.Errorf("budget %d: record cap %d, want %d", tc.budget, got, tc.want)
		}
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

// TestADocumentsRecordsAreOnlyItsOwnArrays pins which arrays of a JSON
// document are its records: the format's arrays at the top, and inside a
// Tempo "trace" object; an array of the same name under any other member
// is that member's content, skipped. A "trace" member holding no records
// after the records were found does not make the document "none of the
// expected keys".
func TestADocumentsRecordsAreOnlyItsOwnArrays(t *testing.T) {
	rs := func(n int) string { return `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) + `}]}]}` }
	for _, tc := range []struct {
		name   string
		format Format
		doc    string
		spans  int
	}{
		{"otlp: the same array under another member", FormatAuto, "{\"resourceSpans\": [\n" + rs(1) + "],\n\"x\": {\"resourceSpans\": [" + rs(2) + "]}}\n", 1},
		{"tempo: the same array under another member", FormatTempo, "{\"batches\": [\n" + rs(1) + "],\n\"x\": {\"batches\": [" + rs(2) + "]}}\n", 1},
		{"tempo: records inside trace", FormatTempo, "{\"trace\": {\"resourceSpans\": [\n" + rs(1) + "]}}\n", 1},
		{"tempo: a trace without records after the records", FormatTempo, "{\"batches\": [\n" + rs(1) + "],\n\"trace\": {\"x\": 1}}\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, batches, err := readBytes(t, []byte(tc.doc), ReadOptions{Strict: true, Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, b := range batches {
				n += b.SpanCount()
			}
			if n != tc.spans || inputs[0].Partial {
				t.Errorf("%d spans (partial %v, warnings %q), want %d", n, inputs[0].Partial, inputs[0].Warnings, tc.spans)
			}
		})
	}
}

// TestADocumentRecordOverTheCapIsCutNotWaitedOn pins capReader at its
// limit: a document's record longer than the record cap (a sixteenth of
// a 16 MiB budget: 1 MiB) is cut with ErrRecordTooLarge once the decoder
// has read exactly the cap, not handed empty reads it would spin on.
func TestADocumentRecordOverTheCapIsCutNotWaitedOn(t *testing.T) {
	rs := func(n int, attr string) string {
		return `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(n) + attr + `}]}]}`
	}
	big := `,"attributes":[{"key":"k","value":{"stringValue":"` + strings.Repeat("x", 3<<20/2) + `"}}]`
	doc := "{\"resourceSpans\": [\n" + rs(1, "") + ",\n" + rs(2, big) + "]}\n"
	_, _, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, MaxMemory: 16 << 20})
	if !errors.Is(err, ErrRecordTooLarge) {
		t.Fatalf("err %v, want ErrRecordTooLarge", err)
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
