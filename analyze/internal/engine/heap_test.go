package engine

import (
	"testing"
)

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
