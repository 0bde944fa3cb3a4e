package ingest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

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

// TestAJSONLineOfExactlyTheCapIsRead pins the line cap of JSON lines at
// its boundary, where a block ends, and
// wherever the line starts: a block holds the cap and one byte, so with a
// first line and blank lines filling the first block, the second holds a
// newline and exactly the cap's worth of the long line, without its own
// newline. A line of exactly the cap is read, one a byte longer is cut,
// wherever it starts: a block never reads past what the cap allows, so a
// line over the cap is not read merely because it fits in a block.
func TestAJSONLineOfExactlyTheCapIsRead(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 << 20, Strict: true}
	lineCap := opts.budget().recordCap()
	if lineCap != 1<<20 {
		t.Fatalf("the record cap of a 16 MiB budget is %d, the test expects 1 MiB", lineCap)
	}
	line := func(n int64) []byte {
		short := strings.TrimSuffix(otlpLineWithValue(1, "pad", `{"stringValue":""}`), "\n")
		pad := int(n) - len(short)
		return []byte(strings.Replace(short, `{"stringValue":""}`, `{"stringValue":"`+strings.Repeat("a", pad)+`"}`, 1))
	}
	first := []byte(otlpLine(2))
	for _, tc := range []struct {
		name string
		size int64
		read bool
	}{{"exactly the cap", lineCap, true}, {"a byte past the cap", lineCap + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := line(tc.size)
			if int64(len(l)) != tc.size {
				t.Fatalf("the line is %d bytes, want %d", len(l), tc.size)
			}
			data := append(append([]byte{}, first...), bytes.Repeat([]byte("\n"), int(lineCap)+1-len(first))...)
			data = append(append(append(data, '\n'), l...), '\n')
			data = append(data, otlpLine(3)...)
			if !linesMode(data[:headBytes]) {
				t.Fatal("the input is not read as JSON lines: the case tests nothing")
			}
			for _, name := range []string{"-", "dump.jsonl"} {
				var inputs []Input
				var err error
				if name == "-" {
					inputs, _, err = readBytes(t, data, opts)
				} else {
					inputs, _, err = readPaths(t, []string{writeInputFile(t, t.TempDir(), name, data)}, opts)
				}
				switch {
				case tc.read && (err != nil || inputs[0].Spans != 3):
					t.Errorf("%s: err %v, inputs %+v; want the three lines read", name, err, inputs)
				case !tc.read && !errors.Is(err, ErrRecordTooLarge):
					t.Errorf("%s: err %v; want the line cut (ErrRecordTooLarge)", name, err)
				}
			}
		})
	}
}

// TestALineWithSpansIsPdatasWhateverItSays pins when a line is normalised
// and decoded again (not every line holding the word "instrumentation"):
// only a line
// in which pdata found no spans may use the pre-1.0 keys; one with spans
// is pdata's read, byte for byte, even when a name or value says
// "instrumentation" (re-encoding would have replaced the invalid UTF-8
// pdata keeps).
func TestALineWithSpansIsPdatasWhateverItSays(t *testing.T) {
	line := "{\"resourceSpans\":[{\"scopeSpans\":[{\"scope\":{\"name\":\"opentelemetry-instrumentation\"},\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"1112131415161718\",\"name\":\"a\xffb\"}]}]}]}"
	td, err := unmarshalOTLPJSON([]byte(line), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name(); got != "a\xffb" {
		t.Errorf("the span's name is %q, want pdata's %q", got, "a\xffb")
	}
}
