package ingest

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"path/filepath"
	"testing"
)

// TestFirstFormatKeyStopsAtTheEndOfTheHead pins the format sniffer on
// heads cut at each point of a top-level key: it must say "no format key"
// (never index past the head) wherever the head ends, and find a format
// key after skipped ones.
func TestFirstFormatKeyStopsAtTheEndOfTheHead(t *testing.T) {
	for _, c := range []struct {
		head string
		want string // "" for none
	}{
		{`{`, ""},
		{`{"other"`, ""},
		{`{"other" `, ""},
		{`{"other":`, ""},
		{`{"other":1`, ""},
		{`{"other":1,`, ""},
		{`{"other":1,"resourceSpans"`, "resourceSpans"},
		{`{"other":{"x":[1,2]}, "data":[]}`, "data"},
		{`{"resourceSpans":[]}`, "resourceSpans"},
	} {
		got, ok := firstFormatKey([]byte(c.head))
		if got != c.want || ok != (c.want != "") {
			t.Errorf("firstFormatKey(%q) = %q, %v; want %q, %v", c.head, got, ok, c.want, c.want != "")
		}
	}
}

// TestNotEvenJSONReadsUpToItsBound pins the sniff of a walked .json file
// that is not a dump: a file of exactly maxJSONSniff bytes that is not JSON
// is told apart (read whole); one byte more is not read at all (said
// nothing about); valid JSON and a name not ending in .json are not "not
// even JSON".
func TestNotEvenJSONReadsUpToItsBound(t *testing.T) {
	dir := t.TempDir()
	junk := func(n int) []byte { return bytes.Repeat([]byte("x"), n) }
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"junk.json", junk(10), true},
		{"exact.JSON", junk(maxJSONSniff), true},
		{"over.json", junk(maxJSONSniff + 1), false},
		{"valid.json", []byte(`{"a":[1,2,3]}`), false},
		{"junk.txt", junk(10), false},
	} {
		path := writeInputFile(t, dir, c.name, c.data)
		if got := notEvenJSON(path); got != c.want {
			t.Errorf("notEvenJSON(%s, %d bytes) = %v, want %v", c.name, len(c.data), got, c.want)
		}
	}
	if notEvenJSON(filepath.Join(dir, "missing.json")) {
		t.Error("a missing file is said to be not JSON")
	}
}

// TestTheGivenDecompressionRatioIsTheOneHeld pins which ratio openStream's
// guard holds a gzip stream to: the one given (a small ratio stops a
// highly repetitive stream past the slack), the default when none is given
// (the same stream reads whole), none when it is negative.
func TestTheGivenDecompressionRatioIsTheOneHeld(t *testing.T) {
	plain := bytes.Repeat([]byte(otlpCamelNumbers+"\n"), (decompressionSlack/len(otlpCamelNumbers))+2000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(plain); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if ratio := float64(len(plain)) / float64(gz.Len()); ratio < 50 || ratio > DefaultMaxDecompressionRatio {
		t.Fatalf("the stream expands %.0f times: the cases below need between 50 and the default", ratio)
	}
	for _, c := range []struct {
		name    string
		ratio   float64
		wantErr bool
	}{
		{"a small ratio given: stopped", 2, true},
		{"no ratio given: the default reads it", 0, false},
		{"a negative ratio: no bound", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := openStream("dump.jsonl.gz", bytes.NewReader(gz.Bytes()), int64(gz.Len()), c.ratio, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			n, err := io.Copy(io.Discard, s.r)
			if got := errors.Is(err, ErrDecompressionLimit); got != c.wantErr {
				t.Fatalf("after %d of %d bytes: err %v, want the limit %v", n, len(plain), err, c.wantErr)
			}
			if !c.wantErr && n != int64(len(plain)) {
				t.Errorf("read %d bytes, want all %d", n, len(plain))
			}
		})
	}
}
