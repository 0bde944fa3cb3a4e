package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAStreamRemembersExactlyItsLatestFinalizedTraces pins the size of a
// stream's memory of finalized traces (finalizedMemory): after
// finalizedMemory+256 one-span traces, finalized at their root in scans of
// 256, the first 256 are forgotten and the rest remembered, so a late
// child of the 256th reopens its trace while one of the 257th is counted
// late.
func TestAStreamRemembersExactlyItsLatestFinalizedTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 65,792 traces: not in -short mode")
	}
	const n = finalizedMemory + 256
	opts := EngineOptions{Window: time.Hour}
	var parts [][]streamSpanAt
	for first := uint64(1); first <= n; first += 256 {
		parts = append(parts, rootsOnly(first, 256, time.Second))
	}
	for _, tc := range []struct {
		trace uint64
		late  int64
	}{{256, 0}, {257, 1}} {
		all := make([]ptrace.Traces, 0, len(parts)+1)
		for _, p := range parts {
			all = append(all, streamPart(p...))
		}
		all = append(all, streamPart(streamSpanAt{trace: tc.trace, id: 1 << 40, parent: 10_000 + tc.trace, start: 2 * time.Second, end: 3 * time.Second}))
		r := streamRun(t, opts, all...)
		if got := int64(r.Stream.LateSpans); got != tc.late {
			t.Errorf("a late child of trace %d of %d: %d late spans, want %d", tc.trace, n, got, tc.late)
		}
	}
}
