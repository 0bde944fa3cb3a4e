package ingest

import (
	"errors"
	"strings"
	"testing"
	"time"
)

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

// TestAnUnknownMembersScalarEndsAtWhiteSpace pins skipJSON's delimiters,
// the space first among them: a skipped number ends at white space, so a second
// number after it is the syntax error it is, where it stands, whether the
// member comes before the records or after.
func TestAnUnknownMembersScalarEndsAtWhiteSpace(t *testing.T) {
	rs := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`
	for _, doc := range []string{
		"{\"resourceSpans\": [\n" + rs + "],\n\"x\": 12 345, \"y\": 1}\n",
		"{\"x\": 12 345,\n\"resourceSpans\": [\n" + rs + "]}\n",
	} {
		_, _, err := readBytes(t, []byte(doc), ReadOptions{Strict: true})
		var re *ReadError
		if !errors.As(err, &re) || re.Offset != int64(strings.Index(doc, "345")) || !strings.Contains(err.Error(), "expected valid JSON") {
			t.Errorf("err %v, want a syntax error at byte %d, the second number:\n%s", err, strings.Index(doc, "345"), doc)
		}
	}
}

// TestAnUnknownMembersValueIsSkippedWhole pins skipJSON's string scan (a
// quote at the scan's start is the string's end, the end of the input is
// no promise of more) and its scalar loop: an
// empty string, one with escapes, one ending exactly at a buffer's edge,
// a number of several digits (skipped to its end, not after its first
// digit) are skipped whole and the records after them read; a document
// cut inside a skipped string or a nested number is cut (ErrTruncated),
// and promptly.
func TestAnUnknownMembersValueIsSkippedWhole(t *testing.T) {
	rs := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`
	for _, tc := range []struct {
		name, doc string
		cut       bool
	}{
		{"an empty string", "{\"x\": \"\",\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"escapes", "{\"x\": \"a\\\"b\\\\\",\"y\":[\"\",\"\\\"\"],\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"a long string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": \"" + strings.Repeat("a", 70<<10) + "\"}\n", false},
		{"cut inside a skipped string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [\"abc", true},
		{"cut inside a long skipped string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [\"" + strings.Repeat("a", 70<<10), true},
		{"a number", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": 12345, \"y\": -1.5e3}\n", false},
		{"a number before the records", "{\"x\": 12345,\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"cut inside a nested number", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [1, 2345", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				inputs  []Input
				batches int
				err     error
			}
			done := make(chan outcome, 1)
			go func() {
				inputs, batches, err := readBytes(t, []byte(tc.doc), ReadOptions{Strict: true})
				done <- outcome{inputs, len(batches), err}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the read did not end in 20 s")
			}
			switch {
			case tc.cut && !errors.Is(o.err, ErrTruncated):
				t.Errorf("err %v, want ErrTruncated", o.err)
			case !tc.cut && (o.err != nil || o.batches != 1 || o.inputs[0].Partial || o.inputs[0].Spans != 1):
				t.Errorf("err %v, %d batches, inputs %+v; want the one record and its span read", o.err, o.batches, o.inputs)
			}
		})
	}
}

// TestKeepUpToKeepsExactlyItsLimit pins keepUpTo's bound: what is written
// up to the limit, in one write or in several, is kept whole; a byte more
// and nothing is kept, including what later writes bring.
func TestKeepUpToKeepsExactlyItsLimit(t *testing.T) {
	const limit = 8
	for _, tc := range []struct {
		name   string
		writes []string
		kept   string // "" with over
		over   bool
	}{
		{"one write of the limit", []string{"12345678"}, "12345678", false},
		{"writes that add up to the limit", []string{"123", "45678"}, "12345678", false},
		{"an empty write at the limit", []string{"12345678", ""}, "12345678", false},
		{"one write a byte past it", []string{"123456789"}, "", true},
		{"a write that goes a byte past it", []string{"12345678", "9"}, "", true},
		{"a write after going past", []string{"123456789", "1"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &keepUpTo{limit: limit}
			for _, w := range tc.writes {
				if n, err := k.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v; want every byte taken", w, n, err)
				}
			}
			if string(k.b) != tc.kept || k.over != tc.over {
				t.Errorf("kept %q, over %v; want %q, %v", k.b, k.over, tc.kept, tc.over)
			}
		})
	}
}
