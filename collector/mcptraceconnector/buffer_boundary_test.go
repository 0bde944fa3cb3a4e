package mcptraceconnector

import (
	"testing"
	"time"
)

// TestTraceExpiresExactlyAtItsDeadline pins the wait's boundary: a trace
// whose last span arrived exactly wait ago is finalized (at or before the
// deadline), one that arrived a nanosecond later is still open; a span that
// arrives later moves its trace's deadline.
func TestTraceExpiresExactlyAtItsDeadline(t *testing.T) {
	const wait = time.Second
	t0 := time.Date(2026, time.May, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		arrived []time.Duration // arrival of each span of trace A, after t0
		at      time.Duration   // when expire runs, after t0
		want    int             // traces finalized
	}{
		{"exactly at the deadline: expired", []time.Duration{0}, wait, 1},
		{"one ns before the deadline: open", []time.Duration{0}, wait - 1, 0},
		{"long past the deadline: expired", []time.Duration{0}, 10 * wait, 1},
		{"a later span moves the deadline: open", []time.Duration{0, wait / 2}, wait, 0},
		{"at the later span's deadline: expired", []time.Duration{0, wait / 2}, wait + wait/2, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newTraceBuffer(wait, 10, false)
			for i, at := range tc.arrived {
				b.add(batch(sp{'A', byte(i + 1), "gw"}), t0.Add(at))
			}
			got := b.expire(t0.Add(tc.at))
			if len(got) != tc.want {
				t.Fatalf("expire finalized %d traces, want %d", len(got), tc.want)
			}
			if _, open := b.snapshot(); open != 1-tc.want {
				t.Errorf("%d traces still open, want %d", open, 1-tc.want)
			}
			if tc.want == 1 && (got[0].id != tid('A') || got[0].reason != reasonWait || got[0].spans.SpanCount() != len(tc.arrived)) {
				t.Errorf("finalized %v (reason %v, %d spans), want trace A waited out with its %d spans",
					got[0].id, got[0].reason, got[0].spans.SpanCount(), len(tc.arrived))
			}
		})
	}
}
