package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// streamSpanAt is one span handed to an engine on its own: trace, span
// id, parent (0 for a root) and its times as offsets from dumptest.T0.
type streamSpanAt struct {
	trace, id, parent uint64
	start, end        time.Duration
}

// streamPart builds one batch of spans for Engine.Add, all under one
// resource.
func streamPart(in ...streamSpanAt) ptrace.Traces {
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	for _, s := range in {
		b.Add(ss, dumptest.Span{Trace: s.trace, ID: s.id, Parent: s.parent, Name: spans.SpanInvoke, Start: s.start, End: s.end})
	}
	return b.Traces()
}

// streamRun feeds each part to a one-shard engine with opts, in order, and
// returns its report.
func streamRun(t *testing.T, opts EngineOptions, parts ...ptrace.Traces) *report.Report {
	t.Helper()
	opts.Shards = 1
	eng, err := NewEngine(rulefmt.Config{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, td := range parts {
		if err := eng.Add(td); err != nil {
			eng.Close()
			t.Fatal(err)
		}
	}
	r, err := eng.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Stream == nil {
		t.Fatal("a streaming run's report has no stream section")
	}
	return r
}

// rootsOnly returns n one-span traces, ids from first, at time at.
func rootsOnly(first uint64, n int, at time.Duration) []streamSpanAt {
	out := make([]streamSpanAt, n)
	for i := range out {
		out[i] = streamSpanAt{trace: first + uint64(i), id: 10_000 + first + uint64(i), start: at, end: at}
	}
	return out
}

// TestAStreamGathersAFreshBatchOfRootedTracesAfterEachScan pins that a
// stream finalizing complete traces at their root waits for a new batch
// of rooted traces after each scan: a trace whose root comes just after a
// scan stays open, so its child in the next part is measured, not late.
// The window (an hour) never finalizes anything here.
func TestAStreamGathersAFreshBatchOfRootedTracesAfterEachScan(t *testing.T) {
	const batch = 256 // the rooted traces that make a scan due
	opts := EngineOptions{Window: time.Hour}
	if !ChooseEngine(EngineRequest{Config: rulefmt.Config{}, Options: opts}).FinalizeAtRoot {
		t.Fatal("the default configuration's stream does not finalize at the root")
	}
	for _, extra := range []int{0, 1, 2} {
		first := streamPart(rootsOnly(100, batch+extra, time.Second)...) // a scan: every one finalized
		root := streamPart(streamSpanAt{trace: 1, id: 1, start: 2 * time.Second, end: 5 * time.Second})
		child := streamPart(streamSpanAt{trace: 1, id: 2, parent: 1, start: 3 * time.Second, end: 4 * time.Second})
		r := streamRun(t, opts, first, root, child)
		if r.Stream.LateSpans != 0 || r.Spans != batch+extra+2 || r.Traces != batch+extra+1 {
			t.Errorf("%d roots, then a root and its child: %d late spans, %d spans, %d traces; want 0, %d, %d",
				batch+extra, r.Stream.LateSpans, r.Spans, r.Traces, batch+extra+2, batch+extra+1)
		}
		if r.Stream.CompleteTraces != batch+extra { // trace 1 goes at the end
			t.Errorf("%d roots: %d complete traces, want %d", batch+extra, r.Stream.CompleteTraces, batch+extra)
		}
	}
}

// TestACompactionKeepsAnOpenTracesLatestEnd pins that a trace still open
// when the stream compacts its index (most of its spans finalized) keeps
// the latest end of its spans, not its earliest start: the window counts
// from that end, so a span that comes within the window of it is measured,
// not late.
func TestACompactionKeepsAnOpenTracesLatestEnd(t *testing.T) {
	const w = time.Minute
	opts := EngineOptions{Window: w, HoldComplete: true}
	long := streamSpanAt{trace: 1, id: 1, start: 0, end: 50 * time.Second}
	parts := []ptrace.Traces{
		// Trace 1 and ten short traces that end at 1s.
		streamPart(append([]streamSpanAt{long}, rootsOnly(100, 10, time.Second)...)...),
		// The watermark at 62s: the short traces go (their end is more
		// than the window behind) and the index is compacted; trace 1,
		// which ended at 50s, stays open.
		streamPart(rootsOnly(200, 1, 62*time.Second)...),
		// At 70s trace 1 is 20s behind: still within the window.
		streamPart(rootsOnly(300, 1, 70*time.Second)...),
		streamPart(streamSpanAt{trace: 1, id: 2, parent: 1, start: 55 * time.Second, end: 60 * time.Second}),
	}
	r := streamRun(t, opts, parts...)
	if r.Stream.LateSpans != 0 || r.Spans != 14 || r.Traces != 13 {
		t.Errorf("late spans %d, spans %d, traces %d; want 0, 14, 13", r.Stream.LateSpans, r.Spans, r.Traces)
	}
	if r.Stream.EarlyTraces < 10 {
		t.Errorf("early traces %d: the short traces were not finalized before the end, so nothing was compacted", r.Stream.EarlyTraces)
	}
}

// TestAStreamWindowCountsFromATracesLatestEnd pins the window's edge: a
// trace whose latest span ended exactly a window before the watermark is
// still open (its next span is measured), one nanosecond more and it was
// finalized (its next span is late).
func TestAStreamWindowCountsFromATracesLatestEnd(t *testing.T) {
	const w = time.Minute
	for _, tc := range []struct {
		name string
		wm   time.Duration
		late int
	}{
		{"the watermark exactly a window past it: open", w, 0},
		{"one ns more: finalized", w + 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := streamRun(t, EngineOptions{Window: w, HoldComplete: true},
				streamPart(streamSpanAt{trace: 1, id: 1, start: 0, end: 0}),
				streamPart(rootsOnly(100, 1, tc.wm)...),
				streamPart(streamSpanAt{trace: 1, id: 2, parent: 1, start: 0, end: 0}))
			if r.Stream.LateSpans != tc.late || r.Spans != 3-tc.late {
				t.Errorf("late spans %d, spans %d; want %d, %d", r.Stream.LateSpans, r.Spans, tc.late, 3-tc.late)
			}
		})
	}
}

// TestABoundOnOpenTracesCutsTheTraceWhoseLatestSpanIsOldest pins which
// trace the bound on open traces cuts: the one whose latest span ended
// first, not the one that arrived first nor the one that started first.
// The trace kept open takes its next span; the cut one would count it
// late.
func TestABoundOnOpenTracesCutsTheTraceWhoseLatestSpanIsOldest(t *testing.T) {
	r := streamRun(t, EngineOptions{MaxOpenTraces: 1, HoldComplete: true},
		streamPart(streamSpanAt{trace: 1, id: 1, start: 0, end: 100 * time.Second}),               // first to arrive and to start, last to end
		streamPart(streamSpanAt{trace: 2, id: 2, start: 10 * time.Second, end: 20 * time.Second}), // cut
		streamPart(streamSpanAt{trace: 1, id: 3, parent: 1, start: 30 * time.Second, end: 40 * time.Second}))
	if r.Stream.CutTraces != 1 || r.Stream.LateSpans != 0 || r.Spans != 3 {
		t.Errorf("cut %d, late spans %d, spans %d; want 1, 0, 3", r.Stream.CutTraces, r.Stream.LateSpans, r.Spans)
	}
}

// TestAnEarlierEndingSpanLeavesATracesLatestEnd pins that a trace's
// latest end is the latest of all its spans, not the last one's to
// arrive: a child ending long before its root does not bring the trace's
// window forward, so the trace's next span is measured, not late.
func TestAnEarlierEndingSpanLeavesATracesLatestEnd(t *testing.T) {
	const w = time.Minute
	r := streamRun(t, EngineOptions{Window: w, HoldComplete: true},
		streamPart(streamSpanAt{trace: 1, id: 1, start: 0, end: 50 * time.Second}),
		streamPart(streamSpanAt{trace: 1, id: 2, parent: 1, start: 5 * time.Second, end: 10 * time.Second}),
		streamPart(rootsOnly(100, 1, 100*time.Second)...), // 50s past the root's end, 90s past the child's
		streamPart(streamSpanAt{trace: 1, id: 3, parent: 1, start: 60 * time.Second, end: 70 * time.Second}))
	if r.Stream.LateSpans != 0 || r.Spans != 4 {
		t.Errorf("late spans %d, spans %d; want 0, 4", r.Stream.LateSpans, r.Spans)
	}
}

// TestPeakOpenTracesCountsWhatTheStreamHeldAtOnce pins the stream's peak
// of open traces: a trace finalized leaves the count (two at most when
// each part's trace lets the one before go), everything in one part is
// held at once, and a bound is passed by the one trace that makes its scan
// due before the scan cuts back to it.
func TestPeakOpenTracesCountsWhatTheStreamHeldAtOnce(t *testing.T) {
	spaced := func(n int, every time.Duration) []ptrace.Traces {
		parts := make([]ptrace.Traces, n)
		for i := range parts {
			parts[i] = streamPart(rootsOnly(uint64(100+i), 1, time.Duration(i)*every)...)
		}
		return parts
	}
	cases := []struct {
		name  string
		opts  EngineOptions
		parts []ptrace.Traces
		want  int
	}{
		{"each trace lets the one before go", EngineOptions{Window: time.Second, HoldComplete: true}, spaced(10, time.Minute), 2},
		{"one part holds every trace", EngineOptions{Window: time.Second, HoldComplete: true}, []ptrace.Traces{streamPart(rootsOnly(100, 10, time.Second)...)}, 10},
		{"a bound of 3 is passed by one", EngineOptions{MaxOpenTraces: 3, HoldComplete: true}, spaced(10, time.Millisecond), 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := streamRun(t, c.opts, c.parts...)
			if r.Stream.PeakOpenTraces != c.want {
				t.Errorf("peak open traces %d over %d traces, want %d", r.Stream.PeakOpenTraces, r.Traces, c.want)
			}
		})
	}
}

// TestScanDueAtEachOfItsEdges pins when a shard scans its open traces,
// clause by clause, at each boundary: a scan costs a walk of every open
// trace, so scanning one part too often or too rarely changes no figure
// but how the stream's cost grows, which no report shows.
func TestScanDueAtEachOfItsEdges(t *testing.T) {
	const w = int64(8 * time.Second)
	win := func(wm, scannedAt int64) *shard {
		return &shard{e: &Engine{opts: EngineOptions{Window: time.Duration(w)}}, wm: wm, scannedAt: scannedAt}
	}
	bound := func(open, newTraces int) *shard {
		return &shard{e: &Engine{}, maxOpen: 80, open: open, newTraces: newTraces}
	}
	rooted := func(n int) *shard { return &shard{e: &Engine{}, completeAtRoot: true, rootedOpen: n} }
	tests := []struct {
		name string
		s    *shard
		want bool
	}{
		{"the watermark exactly an eighth of the window past the last scan", win(100+w/8, 100), true},
		{"the watermark one nanosecond short of it", win(100+w/8-1, 100), false},
		{"no window: the watermark never asks", &shard{e: &Engine{}, wm: 1 << 40}, false},
		{"open traces at the bound", bound(80, 0), false},
		{"open traces one past the bound", bound(81, 0), true},
		{"new traces an eighth of the bound", bound(0, 10), false},
		{"new traces one past an eighth of the bound", bound(0, 11), true},
		{"no bound: open traces never ask", &shard{e: &Engine{}, open: 1 << 20, newTraces: 1 << 20}, false},
		{"complete traces one short of a batch", rooted(rootedBatch - 1), false},
		{"complete traces a whole batch", rooted(rootedBatch), true},
		{"a whole batch, but traces are not complete at their root", &shard{e: &Engine{}, rootedOpen: rootedBatch}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.s.scanDue(); got != tc.want {
				t.Errorf("scanDue() = %v, want %v", got, tc.want)
			}
		})
	}
}
