package ingest

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

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

// TestJSONLinesWithAFirstLineLongerThanTheHeadAreLines pins linesMode's
// bound: a first line that fills the
// whole head, no newline in sight, is a line of JSON lines (no
// pretty-printer writes one so long), so a bad line after it is named by
// its line number, and the lines after it are read.
func TestJSONLinesWithAFirstLineLongerThanTheHeadAreLines(t *testing.T) {
	long := strings.Replace(otlpLine(1), `"resource":{}`, `"resource":{"attributes":[{"key":"pad","value":{"stringValue":"`+strings.Repeat("a", headBytes)+`"}}]}`, 1)
	data := []byte(long + "{\"resourceSpans\": [oops]}\n" + otlpLine(2))
	if !linesMode(data[:headBytes]) {
		t.Fatal("linesMode reads a head filled by one line as a document")
	}
	inputs, _, err := readBytes(t, data, ReadOptions{})
	if err != nil || inputs[0].Spans != 2 || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], "-:2 (byte ") {
		t.Fatalf("err %v, inputs %+v; want both good lines read and line 2 named bad", err, inputs)
	}
}

// TestAZstdFramePrefixFillingTheInputIsAZstdRecord pins the sniff's bound
// on zstd's magic at its edge: an input of exactly a length prefix and the magic is length-prefixed zstd
// frames, cut (ErrTruncated), not "not a trace dump"; with the magic cut,
// it is nothing known.
func TestAZstdFramePrefixFillingTheInputIsAZstdRecord(t *testing.T) {
	data := append(binary.BigEndian.AppendUint32(nil, 100), zstdMagic...)
	if _, _, err := readBytes(t, data, ReadOptions{Strict: true}); !errors.Is(err, ErrTruncated) || errors.Is(err, ErrNotTraceDump) {
		t.Errorf("a prefix and the magic: err %v, want a cut record (ErrTruncated)", err)
	}
	if _, _, err := readBytes(t, data[:7], ReadOptions{Strict: true}); !errors.Is(err, ErrNotTraceDump) {
		t.Errorf("a prefix and 3 bytes of the magic: err %v, want ErrNotTraceDump", err)
	}
}

// TestAJSONObjectIsDetectedByAKeyAsFarAsTheStreamBuffer pins how far
// detection looks for the key that decides a JSON object's format behind
// a first member with a long value: as far as the stream's read buffer
// (streamBufferBytes, the input peeked, not consumed). A key that ends at
// the buffer's last byte is found; one a byte later is not, and the
// refusal names --input-format, which reads it. A file shorter than the
// buffer is looked at whole; an object cut short inside its first member
// is refused without naming --input-format.
func TestAJSONObjectIsDetectedByAKeyAsFarAsTheStreamBuffer(t *testing.T) {
	// `{"x":"` pad `",` then the line's own members: "resourceSpans"
	// closes 22 bytes after the pad.
	line := func(pad int) []byte {
		return []byte(`{"x":"` + strings.Repeat("x", pad) + `",` + otlpLine(1)[1:])
	}
	for _, tc := range []struct {
		name     string
		data     []byte
		file     bool // read from a file (its size known), not stdin
		detected bool
		hint     bool // the refusal names --input-format
	}{
		{"the key ends at the buffer's last byte", line(streamBufferBytes - 23), false, true, false},
		{"the key ends a byte past the buffer", line(streamBufferBytes - 22), false, false, true},
		{"a 70 KB first member in a file", line(70000), true, true, false},
		{"a 70 KB first member on stdin", line(70000), false, true, false},
		{"the input ends inside the first member", line(70000)[:70003], false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var inputs []Input
			var err error
			if tc.file {
				inputs, _, err = readPaths(t, []string{writeInputFile(t, t.TempDir(), "d.jsonl", tc.data)}, ReadOptions{Strict: true})
			} else {
				inputs, _, err = readBytes(t, tc.data, ReadOptions{Strict: true})
			}
			if tc.detected {
				if err != nil || inputs[0].Spans != 1 {
					t.Fatalf("err %v; want the line detected as OTLP JSON and its span read", err)
				}
				return
			}
			if !errors.Is(err, ErrNotTraceDump) || strings.Contains(err.Error(), "--input-format") != tc.hint {
				t.Fatalf("err %v; want ErrNotTraceDump, naming --input-format: %v", err, tc.hint)
			}
			if tc.hint {
				if inputs, _, err := readBytes(t, tc.data, ReadOptions{Strict: true, Format: FormatOTLPJSON}); err != nil || inputs[0].Spans != 1 {
					t.Fatalf("with --input-format otlp-json: err %v; want the span read", err)
				}
			}
		})
	}
}
