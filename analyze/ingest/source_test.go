package ingest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestOnlyRegularFilesAreReadTwice pins what a speculative run may read a
// second time: regular files, a directory (its regular files) and a glob
// of them; never stdin, a FIFO (a shell's <(...) is one), a glob matching
// one, or a device, which yield their bytes once.
func TestOnlyRegularFilesAreReadTwice(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.jsonl")
	if err := os.WriteFile(file, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifoDir := t.TempDir()
	fifo := filepath.Join(fifoDir, "b.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct {
		paths []string
		want  bool
	}{
		{[]string{file}, true},
		{[]string{dir}, true},
		{[]string{filepath.Join(dir, "*.jsonl")}, true},
		{[]string{"-"}, false},
		{[]string{file, fifo}, false},
		{[]string{filepath.Join(fifoDir, "*.jsonl")}, false},
		{[]string{os.DevNull}, false},
	} {
		if got := Files(tc.paths).Rereadable(); got != tc.want {
			t.Errorf("Files(%v).Rereadable() = %v, want %v", tc.paths, got, tc.want)
		}
	}
}

// TestFilesBytesSizesWhatTheReaderWillRead pins the size a run readies its
// heap for: regular files, walked and globbed, stdin and a missing file
// counting nothing.
func TestFilesBytesSizesWhatTheReaderWillRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := write("a.jsonl", 100)
	write("sub/b.jsonl", 20)
	write("sub/deeper/c.pb", 3)
	tests := []struct {
		name  string
		paths []string
		want  int64
	}{
		{"a file", []string{a}, 100},
		{"a directory, walked", []string{filepath.Join(dir, "sub")}, 23},
		{"a glob", []string{filepath.Join(dir, "*.jsonl")}, 100},
		{"stdin counts as nothing", []string{"-"}, 0},
		{"a missing file counts as nothing", []string{filepath.Join(dir, "missing")}, 0},
		{"several paths add up", []string{a, filepath.Join(dir, "sub"), "-"}, 123},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Files(tc.paths).Bytes(); got != tc.want {
				t.Errorf("Files(%q).Bytes() = %d, want %d", tc.paths, got, tc.want)
			}
		})
	}
}
