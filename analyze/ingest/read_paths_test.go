package ingest

import (
	"errors"
	"path/filepath"
	"testing"
)

// TestAGlobUnderAFileIsAPathError pins that only a path that does not
// exist is expanded as a glob: a pattern under a regular file cannot be
// stat'ed for another reason, which is the error, not "no match".
func TestAGlobUnderAFileIsAPathError(t *testing.T) {
	file := writeInputFile(t, t.TempDir(), "dump.jsonl", []byte(otlpLine(1)))
	_, _, err := readPaths(t, []string{filepath.Join(file, "*.jsonl")}, ReadOptions{})
	var re *ReadError
	if !errors.As(err, &re) || re.Expected != "a file, a directory, a glob or - for stdin" || errors.Is(err, ErrNoInput) {
		t.Fatalf("err %v, want a ReadError expecting a file, a directory, a glob or - (the stat's error), not ErrNoInput", err)
	}
}

// TestADotNamedDirectoryIsReadWhenNamed pins that the walk skips dot
// entries under the directory given, never the directory itself (a
// directory given as ".dumps", or ".", is read, not found empty).
func TestADotNamedDirectoryIsReadWhenNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".dumps")
	writeInputFile(t, dir, "a.jsonl", []byte(otlpLine(1)))
	writeInputFile(t, dir, ".b.jsonl", []byte(otlpLine(2)))
	writeInputFile(t, dir, ".c/d.jsonl", []byte(otlpLine(3)))
	inputs, _, err := readPaths(t, []string{dir}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 1 || inputs[0].Path != filepath.Join(dir, "a.jsonl") || inputs[0].Spans != 1 {
		t.Fatalf("inputs %+v, want %s alone with its one span", inputs, filepath.Join(dir, "a.jsonl"))
	}
}

// TestAWalkedDumpWithNothingReadableFailsTheRead pins that a walked file
// is skipped only for not being a dump or being empty (not for any
// failure, as if it were "not a trace dump"): a dump whose only content is bad fails the read,
// non-strict too, naming its place.
func TestAWalkedDumpWithNothingReadableFailsTheRead(t *testing.T) {
	dir := t.TempDir()
	writeInputFile(t, dir, "a.jsonl", []byte(otlpLine(1)))
	bad := writeInputFile(t, dir, "b.jsonl", []byte("{\"resourceSpans\": [oops]}\n"))
	_, _, err := readPaths(t, []string{dir}, ReadOptions{})
	var re *ReadError
	if !errors.As(err, &re) || re.Path != bad || re.Offset != 19 || errors.Is(err, ErrNotTraceDump) {
		t.Fatalf("err %v, want the bad value of %s (byte 19), not a skip", err, bad)
	}
}
