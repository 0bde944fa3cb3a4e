package phase

import (
	"context"
	"runtime/pprof"
	"slices"
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

// current reads the phase label of the calling goroutine, through one it
// starts, which inherits its labels.
func current(t *testing.T) string {
	t.Helper()
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		got = labelledHere()
	}()
	<-done
	if len(got) != 1 {
		t.Fatalf("found %d goroutines in labelledHere, want the one", len(got))
	}
	return got[0]
}

// labelledHere returns the labels of the goroutines in it: the caller's.
//
//go:noinline
func labelledHere() []string { return Of("phase.labelledHere") }

// TestGoLabelsTheGoroutineFromItsStart pins that a goroutine Go starts
// carries its phase, still after an inner phase given Go's ctx ends, and
// that Of tells goroutines of other phases (and none) apart.
func TestGoLabelsTheGoroutineFromItsStart(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{}, 2)
	wait := func() { started <- struct{}{}; <-release }
	Go(context.Background(), Track, func(ctx context.Context) {
		Do(ctx, Index, func() {}) // an inner phase gives the label back
		waitInGo(wait)
	})
	go func() { waitInGo(wait) }()
	<-started
	<-started
	got := Of("phase.waitInGo")
	slices.Sort(got)
	if want := []string{"", Track}; !slices.Equal(got, want) {
		t.Errorf("labels of the waiting goroutines: %q, want %q", got, want)
	}
}

// waitInGo runs wait, a frame Of finds.
//
//go:noinline
func waitInGo(wait func()) { wait() }
