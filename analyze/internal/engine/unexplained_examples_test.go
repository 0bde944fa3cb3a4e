package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestUnexplainedMissExamplesAreTheSmallestDistinctTraces pins the pool
// report's unexplained examples: the ids of the traces holding an
// unexplained miss, each once however many it holds, the smallest
// report.MaxExamples of them in order, whatever order the misses came in.
func TestUnexplainedMissExamplesAreTheSmallestDistinctTraces(t *testing.T) {
	const traces = report.MaxExamples + 3
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	acquire := func(trace uint64, at time.Duration) {
		inv := b.Add(ss, dumptest.Span{Trace: trace, Name: spans.SpanInvoke, Start: at, End: at + time.Second, Attrs: []any{spans.AttrCacheKey, "k"}})
		b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
			Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
	}
	// Trace 1 at 0 is the cold start; then every later trace misses while
	// the session the one before left sits idle (within the TTL), the
	// highest ids first; trace 2 misses twice.
	acquire(1, 0)
	for i := range traces - 1 {
		tr := uint64(traces - i)
		at := time.Duration(i+1) * 10 * time.Second
		acquire(tr, at)
		if tr == 2 {
			acquire(tr, at+5*time.Second)
		}
	}
	cfg := rulefmt.Config{}
	d := NewDump(cfg.IndexOptions())
	d.Add(b.Traces())
	r, err := Analyze(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Pool.MissReasons[spans.MissUnexplained]; got != traces {
		t.Fatalf("%d unexplained misses, want %d (all: %v)", got, traces, r.Pool.MissReasons)
	}
	var want []string
	for tr := uint64(2); len(want) < report.MaxExamples; tr++ {
		want = append(want, dumptest.TraceID(tr).String())
	}
	if !slices.Equal(r.Pool.UnexplainedExamples, want) {
		t.Errorf("unexplained examples\n%v\nwant\n%v", r.Pool.UnexplainedExamples, want)
	}
}
