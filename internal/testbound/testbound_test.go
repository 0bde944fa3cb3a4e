package testbound

import (
	"testing"
	"time"
)

type fixed struct {
	at time.Time
	ok bool
}

func (f fixed) Deadline() (time.Time, bool) { return f.at, f.ok }

// TestGraceIsATenthBetweenFiveSecondsAndAMinute pins the grace at its
// edges.
func TestGraceIsATenthBetweenFiveSecondsAndAMinute(t *testing.T) {
	for _, tc := range []struct{ left, want time.Duration }{
		{0, 5 * time.Second},
		{50 * time.Second, 5 * time.Second},
		{51 * time.Second, 5100 * time.Millisecond},
		{10 * time.Minute, time.Minute},
		{11 * time.Minute, time.Minute},
		{9 * time.Minute, 54 * time.Second},
	} {
		if got := Grace(tc.left); got != tc.want {
			t.Errorf("Grace(%v) = %v, want %v", tc.left, got, tc.want)
		}
	}
}

// TestContextEndsBeforeTheBinarysDeadline pins that the context ends a
// grace before the deadline, and never without one.
func TestContextEndsBeforeTheBinarysDeadline(t *testing.T) {
	at := time.Now().Add(10 * time.Minute)
	ctx, cancel := Context(fixed{at, true})
	defer cancel()
	got, ok := ctx.Deadline()
	if want := at.Add(-time.Minute); !ok || got.Sub(want).Abs() > time.Second {
		t.Errorf("deadline %v (%v), want about %v", got, ok, want)
	}
	ctx, cancel = Context(fixed{})
	defer cancel()
	if _, ok := ctx.Deadline(); ok {
		t.Error("a test without a deadline got a bounded context")
	}
}
