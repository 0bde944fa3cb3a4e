package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// completeTraces returns n two-span traces from trace first on, each
// child arriving before its root, as an exporter writes them.
func completeTraces(first uint64, n int) []ptrace.Traces {
	var lines []ptrace.Traces
	for i := range uint64(n) {
		tr, at := first+i, time.Duration(first+i)*time.Second
		lines = append(lines,
			arrival{trace: tr, id: 2*tr + 1, parent: 2 * tr, start: at + 1, end: at + 2}.traces(),
			arrival{trace: tr, id: 2 * tr, start: at, end: at + 3}.traces())
	}
	return lines
}

// TestFinalizingCopiesTheSmallerSide pins what a speculative shard copies
// when it finalizes: nothing when every open trace is finalized (the open
// index itself is handed over), only the finalized traces when a long
// trace stays open beside them, and only the open trace once the dead
// ones outweigh it. The report equals Analyze's either way.
func TestFinalizingCopiesTheSmallerSide(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 4
	// A trace of n spans without its root until the end, open all along.
	longTrace := func(n int) []ptrace.Traces {
		var lines []ptrace.Traces
		for i := range uint64(n) {
			lines = append(lines, arrival{trace: 999, id: 5000 + i, parent: 4999, start: time.Duration(i), end: time.Duration(i) + 1}.traces())
		}
		return lines
	}
	longRoot := arrival{trace: 999, id: 4999, start: 0, end: time.Hour}.traces()
	beside := func(n int) []ptrace.Traces {
		return append(append(longTrace(n), completeTraces(1, 40)...), longRoot)
	}
	for _, tc := range []struct {
		name   string
		lines  []ptrace.Traces
		copied int
	}{
		{"every open trace finalized at each scan", completeTraces(1, 40), 0},
		// Each scan finalizes 4 traces of 2 spans beside the 30 open: 8
		// spans copied at a time while the dead and the finalized ones
		// stay within half the index. At the fourth scan, 24 dead and 8
		// finalized of 62 pass 31: the 30 open spans are copied instead,
		// into a fresh index. Then it all begins again. Ten scans in all;
		// at the end the root closes the long trace, and the flush hands
		// the index over as it is.
		{"a long trace open beside them", beside(30), (3*8 + 30) + (3*8 + 30) + 2*8 + 0},
		// With 9 open spans, the first scan finalizes 8 of 17: exactly
		// half, rounded down, is not more than half, so the 8 are copied
		// (the 9 would be at >=); at the second, 16 of 25 are.
		{"the finalized spans exactly half the index", beside(9), 5 * (8 + 9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := speculativeOnce(t, writeJSONLines(t, "dump.jsonl", tc.lines...))
			if got := e.shards[0].copiedSpans; got != tc.copied {
				t.Errorf("the shard copied %d spans out of its open index, want %d", got, tc.copied)
			}
		})
	}
}

// TestStreamCountsTheCopiesItsIndexesDropped pins the count of copies the
// open indexes' duplicate cache dropped as they arrived: each handover
// takes it from the index it hands over, and the last finalization brings
// the sum to the report, which then counts what the batch run counts.
func TestStreamCountsTheCopiesItsIndexesDropped(t *testing.T) {
	var batches []ptrace.Traces
	if _, err := tracegen.BenchBatches(20_000, func(td ptrace.Traces) error {
		batches = append(batches, td, td) // every batch twice in a row
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cfg := rulefmt.Config{}
	batch := engineReport(t, cfg, EngineOptions{Shards: 2}, batches)
	if batch.DuplicateSpans == 0 {
		t.Fatal("the batch run counted no copies: the test would pin nothing")
	}
	r := engineReport(t, cfg, EngineOptions{Shards: 2, Window: 30 * time.Second, HoldComplete: true}, batches)
	if r.Stream == nil || r.Stream.EarlyTraces < r.Traces/2 || r.Stream.LateSpans != 0 {
		t.Fatalf("stream = %+v over %d traces: want most finalized early, nothing late", r.Stream, r.Traces)
	}
	r.Stream = nil
	if got, want := renderString(t, r, render.FormatJSON), renderString(t, batch, render.FormatJSON); got != want {
		t.Errorf("streaming report differs from the batch run's:\n%s", cmp.Diff(want, got))
	}
}
