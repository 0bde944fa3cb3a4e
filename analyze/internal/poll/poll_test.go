package poll

import (
	"context"
	"errors"
	"testing"
)

func TestNewOfAContextThatCanNeverBeDoneIsNilAndNeverStops(t *testing.T) {
	for name, ctx := range map[string]context.Context{
		"nil":        nil,
		"background": context.Background(),
	} {
		p := New(ctx)
		if p != nil {
			t.Errorf("%s: New = %+v, want nil", name, p)
		}
		for range 2 * pollEvery {
			if p.Stop() {
				t.Fatalf("%s: a nil poll stopped", name)
			}
		}
		if err := p.Err(); err != nil {
			t.Errorf("%s: Err = %v, want nil", name, err)
		}
	}
}

func TestStopLooksAtTheContextOncePerPollEverySteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := New(ctx)
	for i := 1; i < pollEvery; i++ {
		if p.Stop() {
			t.Fatalf("stopped at step %d, before the first look at step %d", i, pollEvery)
		}
		if p.Err() != nil {
			t.Fatalf("Err before the look at step %d: %v", i, p.Err())
		}
	}
	if !p.Stop() {
		t.Fatalf("did not stop at step %d on a cancelled context", pollEvery)
	}
	if !errors.Is(p.Err(), context.Canceled) {
		t.Fatalf("Err = %v, want context.Canceled", p.Err())
	}
	if !p.Stop() {
		t.Fatal("the stop did not stick: the next step went on")
	}
}

func TestStopGoesOnWhileTheContextIsLive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := New(ctx)
	for i := range 3 * pollEvery {
		if p.Stop() {
			t.Fatalf("stopped at step %d on a live context", i+1)
		}
	}
}
