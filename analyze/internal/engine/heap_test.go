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

// TestHeapToPrepareClampsToTheInputAndTheBudget pins the reserve's size at
// each of its edges: the input divided by per but at least hugeHeapMin, at
// most the input and half the budget, and nothing below hugeHeapMin.
func TestHeapToPrepareClampsToTheInputAndTheBudget(t *testing.T) {
	const min, gib = hugeHeapMin, int64(1) << 30
	cases := []struct {
		name            string
		in, budget, per int64
		want            int64
	}{
		{"the input itself, per 1", 3 * min, 8 * gib, 1, 3 * min},
		{"the input over per", 40 * min, 8 * gib, 4, 10 * min},
		{"raised to hugeHeapMin when input/per is below it", 2 * min, 8 * gib, 4, min},
		{"an input exactly hugeHeapMin", min, 8 * gib, 1, min},
		{"an input one byte short of hugeHeapMin: none", min - 1, 8 * gib, 1, 0},
		{"capped at half the budget", 10 * gib, 4 * gib, 1, 2 * gib},
		{"half the budget below hugeHeapMin: none", 10 * gib, 2*min - 2, 1, 0},
		{"half the budget exactly hugeHeapMin", 10 * gib, 2 * min, 1, min},
		{"no input", 0, 8 * gib, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := heapToPrepare(c.in, c.budget, c.per); got != c.want {
				t.Errorf("heapToPrepare(%d, %d, %d) = %d, want %d", c.in, c.budget, c.per, got, c.want)
			}
		})
	}
}
