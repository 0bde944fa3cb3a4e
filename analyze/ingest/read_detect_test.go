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
