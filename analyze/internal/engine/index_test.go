package engine

import (
	"context"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

func TestIndexBreaksParentCyclesInsteadOfHanging(t *testing.T) {
	d := newDump()
	ss := d.resource()
	d.add(ss, sp{trace: 1, id: 1, parent: 3, name: spans.SpanInvoke})
	d.add(ss, sp{trace: 1, id: 2, parent: 1, name: spans.SpanAcquire})
	d.add(ss, sp{trace: 1, id: 3, parent: 2, name: spans.SpanCallTool, attrs: []any{spans.AttrSessionID, "s"}})
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	if idx.IncompleteTraces() != 1 {
		t.Errorf("a parent cycle makes the trace incomplete, got %d incomplete", idx.IncompleteTraces())
	}
	// Every measure walks ancestors; none may loop.
	root, _ := rulefmt.ParseSelectorString(spans.SpanInvoke)
	if _, err := Analyze(asDump(idx), rulefmt.Config{ExecutionRoot: &root}); err != nil {
		t.Fatal(err)
	}
}

func TestIndexWindowSpansEarliestStartToLatestEnd(t *testing.T) {
	d := newDump()
	ss := d.resource()
	d.add(ss, sp{trace: 1, name: "a", start: 5 * time.Second, end: 6 * time.Second})
	d.add(ss, sp{trace: 2, name: "b", start: time.Second, end: 2 * time.Second})
	d.add(ss, sp{trace: 2, name: "c", start: 3 * time.Second, end: 9 * time.Second})
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	start, end, ok := idx.Window()
	if !ok || !start.Equal(t0.Add(time.Second)) || !end.Equal(t0.Add(9*time.Second)) {
		t.Errorf("window = %v .. %v (%v), want t0+1s .. t0+9s", start, end, ok)
	}
}

// retainedPerSpan builds an index from n spans of the benchmark workload and
// returns the heap it retains per span after a GC.
func retainedPerSpan(t testing.TB, n int) (perSpan float64, spanCount int) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	idx := index.New(rulefmt.IndexOptions{})
	// Batches stream through Add and are dropped: only the index remains.
	if _, err := tracegen.BenchBatches(n, func(td ptrace.Traces) error { idx.Add(td); return nil }); err != nil {
		t.Fatal(err)
	}
	spanCount = idx.Spans()
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	runtime.KeepAlive(idx)
	return retained / float64(spanCount), spanCount
}

func TestIndexRetainsAtMost100BytesPerSpan(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 200k-span index")
	}
	per, n := retainedPerSpan(t, 200_000)
	t.Logf("retained %.1f bytes/span over %d spans", per, n)
	if per > 100 {
		t.Errorf("index retains %.1f bytes per span, want at most 100", per)
	}
}

// TestResetIndexAnalyzesLikeAFreshOne pins index.reset, which an engine
// shard's finalizations reuse one index through: an index reset after
// each dump (in every encoding; scenarios share trace ids, so stale lookup
// entries would show) reports on the next dump exactly as a fresh index
// does, and keeps its chunks for it.
func TestResetIndexAnalyzesLikeAFreshOne(t *testing.T) {
	reused := index.New(rulefmt.IndexOptions{})
	for round, path := range append(goldenDumps(t), goldenDumps(t)...) {
		fresh, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: true}})
		if err != nil {
			t.Fatal(err)
		}
		want, err := Analyze(asDump(fresh), rulefmt.Config{})
		if err != nil {
			t.Fatal(err)
		}
		reused.Reset()
		if _, err := ingest.Read(context.Background(), []string{path}, ReadOptions{Strict: true, Keep: index.KeepOf(rulefmt.IndexOptions{})}, reused); err != nil {
			t.Fatal(err)
		}
		got, err := Analyze(asDump(reused), rulefmt.Config{})
		if err != nil {
			t.Fatal(err)
		}
		want.Inputs, got.Inputs = nil, nil
		if g, w := renderString(t, got, render.FormatJSON), renderString(t, want, render.FormatJSON); g != w {
			t.Fatalf("round %d, %s: the reset index reports\n%s\nwant\n%s", round, filepath.Base(path), g, w)
		}
		if round > 0 && len(reused.Chunks)+len(reused.SpareChunks) == 0 {
			t.Fatalf("round %d: the reset index kept no span chunk", round)
		}
	}
}

func TestIndexValuesCompareAsTheirTextWhateverTheirType(t *testing.T) {
	d := newDump()
	ss := d.resource()
	d.add(ss, sp{trace: 1, name: "a", attrs: []any{spans.AttrAttempt, 2, spans.AttrCacheHit, true}})
	d.add(ss, sp{trace: 1, name: "b", attrs: []any{spans.AttrAttempt, "2", spans.AttrCacheHit, "true"}})
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	sel, err := rulefmt.ParseSelectorString(`{attributes: {` + spans.AttrAttempt + `: 2, ` + spans.AttrCacheHit + `: true}}`)
	if err != nil {
		t.Fatal(err)
	}
	m, err := selector.Compile(idx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range idx.Order {
		if !m.Match(i) {
			t.Errorf("span %s: int 2 / bool true and string \"2\" / \"true\" must both match", idx.Names[idx.Span(i).Name])
		}
	}
}

func allAttrs(idx *index.Index) []index.Attr {
	var out []index.Attr
	for _, i := range idx.Order {
		out = append(out, idx.AttrsOf(idx.Span(i))...)
	}
	return out
}
