package phase

import (
	"context"
	"encoding/json"
	"runtime/pprof"
	"strings"
	"testing"
)

// TestDoLabelsTheGoroutineWhileFRuns pins that f runs labelled with its
// phase, an inner phase overriding an outer one, and that the labels of
// ctx come back afterwards.
func TestDoLabelsTheGoroutineWhileFRuns(t *testing.T) {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("caller", "x"))
	pprof.SetGoroutineLabels(ctx)
	defer pprof.SetGoroutineLabels(context.Background())
	var outer, inner string
	Do(ctx, Decode, func() {
		outer = current(t)
		Do(ctx, Index, func() { inner = current(t) })
	})
	if outer != Decode || inner != Index {
		t.Errorf("labels in f: outer %q, inner %q; want %q, %q", outer, inner, Decode, Index)
	}
	Do(context.Background(), Read, func() {
		if got := current(t); got != Read {
			t.Errorf("with no labels before: %q, want %q", got, Read)
		}
	})
}

// current reads the phase label of the calling goroutine through a
// profile of it: pprof offers no getter of a goroutine's own labels.
func current(t *testing.T) string {
	t.Helper()
	var got string
	// A goroutine started here inherits the caller's labels.
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = labelOfThisGoroutine()
	}()
	<-done
	return got
}

// labelOfThisGoroutine finds the calling goroutine in a goroutine profile
// (debug=1 prints each stack's labels above it) and returns its phase.
func labelOfThisGoroutine() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	for _, block := range strings.Split(b.String(), "\n\n") {
		if !strings.Contains(block, "labelOfThisGoroutine") {
			continue
		}
		for _, line := range strings.Split(block, "\n") {
			if rest, ok := strings.CutPrefix(line, "# labels: "); ok {
				var m map[string]string
				if json.Unmarshal([]byte(rest), &m) == nil {
					return m[Label]
				}
			}
		}
	}
	return ""
}
