package engine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestInputBytesSizesWhatTheReaderWillRead(t *testing.T) {
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
			if got := inputBytes(tc.paths); got != tc.want {
				t.Errorf("inputBytes(%q) = %d, want %d", tc.paths, got, tc.want)
			}
		})
	}
}
