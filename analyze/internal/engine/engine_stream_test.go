package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// arrival is one span arriving alone in a stream: trace, span id, parent
// (0 for a root), and its times as offsets from t0.
type arrival struct {
	trace, id, parent uint64
	start, end        time.Duration
}

func (a arrival) traces() ptrace.Traces {
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
	d.add(ss, sp{trace: a.trace, id: a.id, parent: a.parent, name: spans.SpanInvoke, start: a.start, end: a.end})
	return d.td
}

// fillers returns n one-span traces (ids from first) ending every step
// after from: they move the watermark on.
func fillers(first uint64, n int, from, step time.Duration) []arrival {
	out := make([]arrival, n)
	for i := range out {
		at := from + time.Duration(i)*step
		out[i] = arrival{trace: first + uint64(i), id: 1000 + first + uint64(i), start: at, end: at}
	}
	return out
}

// TestStreamFinalizesTracesByWindowAndBound pins the streaming account:
// a trace whose spans straddle finalization scans is finalized once, a span
// arriving after its trace was finalized is counted late and left out of
// the figures (whether its trace is still in the open index or compacted
// away), and the bound on open traces cuts the oldest and says how many.
func TestStreamFinalizesTracesByWindowAndBound(t *testing.T) {
	const w = time.Minute
	type want struct{ traces, spans, late, cut int }
	cases := []struct {
		name     string
		opts     EngineOptions
		arrivals []arrival
		want     want
		early    bool // some trace must be finalized before the end
		complete bool // some trace must be finalized because its root arrived
	}{
		{
			name: "a trace straddling the window's scans is finalized once",
			opts: EngineOptions{Window: w, HoldComplete: true},
			arrivals: append(append([]arrival{
				{trace: 1, id: 1, start: 0, end: time.Second},
			}, fillers(100, 3, 10*time.Second, 10*time.Second)...), append([]arrival{
				{trace: 1, id: 2, parent: 1, start: 40 * time.Second, end: 50 * time.Second}, // within the window of its first span
			}, fillers(200, 20, 2*w, w)...)...),
			want:  want{traces: 24, spans: 25},
			early: true,
		},
		{
			name: "a span after its trace was finalized is late",
			opts: EngineOptions{Window: w, HoldComplete: true},
			arrivals: append(append([]arrival{
				{trace: 1, id: 1, start: 0, end: time.Second},
			}, fillers(100, 3, 3*w, w)...), arrival{trace: 1, id: 2, parent: 1, start: 0, end: 2 * time.Second}),
			want:  want{traces: 4, spans: 4, late: 1},
			early: true,
		},
		{
			name: "a span of a trace finalized and compacted away long ago is late",
			opts: EngineOptions{Window: w, HoldComplete: true},
			arrivals: append(append([]arrival{
				{trace: 1, id: 1, start: 0, end: time.Second},
			}, fillers(100, 200, 3*w, w)...), arrival{trace: 1, id: 2, parent: 1, start: 0, end: 2 * time.Second}),
			want:  want{traces: 201, spans: 201, late: 1},
			early: true,
		},
		{
			name: "past max open traces the oldest are cut, their later spans late",
			opts: EngineOptions{MaxOpenTraces: 16, HoldComplete: true},
			arrivals: func() []arrival {
				var a []arrival
				for i := range uint64(100) { // first spans of 100 traces, then their second spans
					a = append(a, arrival{trace: i + 1, id: 1, start: time.Duration(i) * time.Second, end: time.Duration(i) * time.Second})
				}
				for i := range uint64(100) {
					a = append(a, arrival{trace: i + 1, id: 2, parent: 1, start: time.Duration(100+i) * time.Second, end: time.Duration(100+i) * time.Second})
				}
				return a
			}(),
			// 16 open at most, cut down to 14 each time: 16 are open when
			// the second spans come, the 84 cut get one late span each.
			want:  want{traces: 100, spans: 116, late: 84, cut: 84},
			early: true,
		},
		{
			// Held traces wait for the window (an hour here); complete
			// ones go at the scan a batch of rooted traces triggers, and
			// a child arriving after its root is then late.
			name: "a trace whose root has arrived is finalized without waiting for the window",
			opts: EngineOptions{Window: time.Hour},
			arrivals: append(append([]arrival{
				{trace: 1, id: 1, start: 0, end: time.Second},
			}, fillers(100, rootedBatch, time.Second, time.Second)...), arrival{trace: 1, id: 2, parent: 1, start: 0, end: time.Second}),
			want:     want{traces: 1 + rootedBatch, spans: 1 + rootedBatch, late: 1},
			early:    true,
			complete: true,
		},
		{
			name:     "a held trace whose root has arrived waits for the window",
			opts:     EngineOptions{Window: time.Hour, HoldComplete: true},
			arrivals: append(append([]arrival{{trace: 1, id: 1, start: 0, end: time.Second}}, fillers(100, rootedBatch, time.Second, time.Second)...), arrival{trace: 1, id: 2, parent: 1, start: 0, end: time.Second}),
			want:     want{traces: 1 + rootedBatch, spans: 2 + rootedBatch},
		},
		{
			name:     "a batch run finalizes nothing early",
			opts:     EngineOptions{},
			arrivals: append([]arrival{{trace: 1, id: 1, start: 0, end: time.Second}}, fillers(100, 3, 3*w, w)...),
			want:     want{traces: 4, spans: 4},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Shards = 1
			var batches []ptrace.Traces
			for _, a := range tc.arrivals {
				batches = append(batches, a.traces())
			}
			r := engineReport(t, rulefmt.Config{}, tc.opts, batches)
			got := want{traces: r.Traces, spans: r.Spans}
			if r.Stream != nil {
				got.late, got.cut = r.Stream.LateSpans, r.Stream.CutTraces
				if tc.early != (r.Stream.EarlyTraces > 0) {
					t.Errorf("early traces = %d, want some: %v", r.Stream.EarlyTraces, tc.early)
				}
				if tc.complete != (r.Stream.CompleteTraces > 0) {
					t.Errorf("complete traces = %d, want some: %v", r.Stream.CompleteTraces, tc.complete)
				}
			} else if tc.opts.Window > 0 || tc.opts.MaxOpenTraces > 0 {
				t.Fatal("a streaming run's report has no stream section")
			}
			if got != tc.want {
				t.Errorf("traces, spans, late, cut = %+v, want %+v", got, tc.want)
			}
			if r.Spans+got.late != len(tc.arrivals) {
				t.Errorf("%d spans analyzed + %d late != %d arrived: a span was lost or counted twice", r.Spans, got.late, len(tc.arrivals))
			}
		})
	}
}

// TestStreamEqualsBatchOnATimeOrderedDump feeds the benchmark workload
// (time-ordered batches) to a streaming engine whose window spans many
// batches: it finalizes most traces early, loses none, and its figures
// equal the batch run's.
func TestStreamEqualsBatchOnATimeOrderedDump(t *testing.T) {
	var batches []ptrace.Traces
	if _, err := tracegen.BenchBatches(60_000, func(td ptrace.Traces) error {
		batches = append(batches, td)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	cfg := rulefmt.Config{}
	batch := engineReport(t, cfg, EngineOptions{Shards: 2}, batches)
	for _, opts := range []EngineOptions{
		{Shards: 2, Window: 30 * time.Second},
		{Shards: 2, Window: 30 * time.Second, HoldComplete: true},
		{Shards: 2, Window: 30 * time.Second, MaxOpenTraces: 4000, HoldComplete: true},
		{Shards: 3, MaxOpenTraces: 2000, HoldComplete: true}, // no window: every early finalization is a cut, of a trace already whole
		{Shards: 3, MaxOpenTraces: 2000},                     // complete traces go first: nothing is cut
	} {
		r := engineReport(t, cfg, opts, batches)
		st := r.Stream
		wantCut := 0
		if opts.Window == 0 && st != nil {
			wantCut = st.EarlyTraces - st.CompleteTraces
		}
		if st == nil || st.EarlyTraces < r.Traces/2 || st.LateSpans != 0 || st.CutTraces != wantCut || st.LateAcquires != 0 ||
			opts.HoldComplete != (st.CompleteTraces == 0) {
			t.Errorf("%+v: stream = %+v over %d traces: want most finalized early, nothing late, cut %d, complete ones unless held", opts, st, r.Traces, wantCut)
		}
		r.Stream = nil
		if got, want := renderString(t, r, render.FormatJSON), renderString(t, batch, render.FormatJSON); got != want {
			t.Errorf("%+v: streaming report differs from the batch run's:\n%s", opts, cmp.Diff(want, got))
		}
	}
}
