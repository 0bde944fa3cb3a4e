package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

func TestIndexCountsDuplicateSpansOnce(t *testing.T) {
	build := func() ptrace.Traces {
		d := newDump()
		ss := d.resource(spans.ResourceServiceName, "gw")
		d.add(ss, sp{trace: 1, id: 1, name: "root", end: time.Second})
		d.add(ss, sp{trace: 1, id: 2, parent: 1, name: "child", end: time.Second})
		return d.td
	}
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(build())
	idx.Add(build()) // the same batch exported twice
	if idx.Spans() != 2 || idx.Duplicates() != 2 || idx.Traces() != 1 || idx.IncompleteTraces() != 0 {
		t.Errorf("spans %d duplicates %d traces %d incomplete %d, want 2 2 1 0", idx.Spans(), idx.Duplicates(), idx.Traces(), idx.IncompleteTraces())
	}
	// Adding after a query re-finishes the index.
	idx.Add(build())
	if idx.Spans() != 2 || idx.Duplicates() != 4 {
		t.Errorf("after a third copy: spans %d duplicates %d, want 2 4", idx.Spans(), idx.Duplicates())
	}
}

func TestIndexSameSpanIDInTwoTracesIsTwoSpans(t *testing.T) {
	d := newDump()
	ss := d.resource()
	d.add(ss, sp{trace: 1, id: 7, name: "a"})
	d.add(ss, sp{trace: 2, id: 7, name: "a"})
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	if idx.Spans() != 2 || idx.Duplicates() != 0 || idx.Traces() != 2 {
		t.Errorf("spans %d duplicates %d traces %d, want 2 0 2", idx.Spans(), idx.Duplicates(), idx.Traces())
	}
}

func TestIndexMissingParentMakesTheTraceIncomplete(t *testing.T) {
	d := newDump()
	ss := d.resource()
	d.add(ss, sp{trace: 1, id: 1, name: "root"})
	d.add(ss, sp{trace: 1, id: 2, parent: 1, name: "ok"})
	d.add(ss, sp{trace: 2, id: 3, parent: 99, name: "orphan"}) // its parent never landed
	d.add(ss, sp{trace: 3, id: 4, parent: 4, name: "self"})    // its own parent
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(d.td)
	if idx.Traces() != 3 || idx.IncompleteTraces() != 2 {
		t.Errorf("traces %d incomplete %d, want 3 2", idx.Traces(), idx.IncompleteTraces())
	}
}

func TestIndexParentInALaterBatchCompletesTheTrace(t *testing.T) {
	child, parent := newDump(), newDump()
	child.add(child.resource(), sp{trace: 1, id: 2, parent: 1, name: "child"})
	parent.add(parent.resource(), sp{trace: 1, id: 1, name: "root"})
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(child.td)
	if idx.IncompleteTraces() != 1 {
		t.Fatalf("with the child alone the trace is incomplete, got %d", idx.IncompleteTraces())
	}
	idx.Add(parent.td)
	if idx.IncompleteTraces() != 0 || idx.Spans() != 2 {
		t.Errorf("once the parent landed: incomplete %d spans %d, want 0 2", idx.IncompleteTraces(), idx.Spans())
	}
}

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

func TestIndexKeepsOnlyTheAttributesItIsToldTo(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw", "host.name", "h1", "deployment", "prod")
	d.add(ss, sp{trace: 1, name: "s", attrs: []any{
		spans.AttrSessionID, "sess", spans.AttrJSONRPCRequestID, "17", "db.sql.table", "orgs", "http.url", "https://secret",
	}})
	idx := index.New(rulefmt.IndexOptions{SpanAttrs: []string{"db.sql.table"}, ResourceAttrs: []string{"deployment"}})
	idx.Add(d.td)
	idx.Finish()
	kept := map[string]string{}
	for _, a := range allAttrs(idx) {
		kept[idx.Keys[a.Key]] = idx.Vals[a.Val]
	}
	want := map[string]string{spans.AttrSessionID: "sess", "db.sql.table": "orgs"}
	if len(kept) != len(want) || kept[spans.AttrSessionID] != "sess" || kept["db.sql.table"] != "orgs" {
		t.Errorf("kept span attributes %v, want %v (no request id, no url)", kept, want)
	}
	res := map[string]string{}
	for _, a := range idx.ResAttrs {
		res[idx.Keys[a.Key]] = idx.Vals[a.Val]
	}
	if len(res) != 2 || res[spans.ResourceServiceName] != "gw" || res["deployment"] != "prod" {
		t.Errorf("kept resource attributes %v, want service.name and deployment only", res)
	}
	for _, v := range idx.Vals {
		if v == "https://secret" || v == "17" || v == "h1" {
			t.Errorf("value %q of an unkept attribute was interned", v)
		}
	}
}

func TestIndexSharesResourcesAcrossBatches(t *testing.T) {
	idx := index.New(rulefmt.IndexOptions{})
	for i := range 50 {
		d := newDump()
		d.add(d.resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, "do-1"), sp{trace: uint64(i + 1), name: "s"})
		idx.Add(d.td)
	}
	if idx.Spans() != 50 || len(idx.Resources) != 1 {
		t.Errorf("spans %d resources %d, want 50 spans sharing 1 resource", idx.Spans(), len(idx.Resources))
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
	m, err := compile(idx, sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range idx.Order {
		if !m.match(i) {
			t.Errorf("span %s: int 2 / bool true and string \"2\" / \"true\" must both match", idx.Names[idx.Span(i).Name])
		}
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

func allAttrs(idx *index.Index) []index.Attr {
	var out []index.Attr
	for _, i := range idx.Order {
		out = append(out, idx.AttrsOf(idx.Span(i))...)
	}
	return out
}

// TestResetIndexAnalyzesLikeAFreshOne pins index.reset, which an engine
// shard's finalizations reuse one index through: an index reset after
// each dump (in every encoding; scenarios share trace ids, so stale lookup
// entries would show) reports on the next dump exactly as a fresh index
// does, and keeps its chunks for it.
func TestResetIndexAnalyzesLikeAFreshOne(t *testing.T) {
	reused := index.New(rulefmt.IndexOptions{})
	for round, path := range append(goldenDumps(t), goldenDumps(t)...) {
		fresh, _, err := load(context.Background(), []string{path}, LoadOptions{Read: ReadOptions{Strict: true}})
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
		if g, w := renderString(t, got, report.RenderJSON), renderString(t, want, report.RenderJSON); g != w {
			t.Fatalf("round %d, %s: the reset index reports\n%s\nwant\n%s", round, filepath.Base(path), g, w)
		}
		if round > 0 && len(reused.Chunks)+len(reused.SpareChunks) == 0 {
			t.Fatalf("round %d: the reset index kept no span chunk", round)
		}
	}
}

// TestShardOfSpreadsEveryKindOfTraceID pins that the engine's shards share
// the traces whatever the ids look like: random ones, ids counting up in
// their last bytes under a constant first half (internal/tracegen's bench
// dumps, which the old hash sent to one shard of two), and ids whose random
// part is only their first half.
func TestShardOfSpreadsEveryKindOfTraceID(t *testing.T) {
	const n = 20000
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []struct {
		name string
		id   func(i int) pcommon.TraceID
	}{
		{"random", func(int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
			binary.LittleEndian.PutUint64(id[8:], rng.Uint64())
			return id
		}},
		{"counter in the last bytes", func(i int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.BigEndian.PutUint64(id[:8], 0x6d63707472616365)
			binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
			return id
		}},
		{"counter in the first bytes", func(i int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.BigEndian.PutUint64(id[:8], uint64(i)+1)
			return id
		}},
		{"random first half only", func(int) pcommon.TraceID {
			var id pcommon.TraceID
			binary.LittleEndian.PutUint64(id[:8], rng.Uint64())
			return id
		}},
	}
	for _, k := range kinds {
		for _, parts := range []int{2, 3, 8} {
			t.Run(fmt.Sprintf("%s/%d shards", k.name, parts), func(t *testing.T) {
				count := make([]int, parts)
				for i := range n {
					p := index.ShardOf(k.id(i), parts)
					if p < 0 || p >= parts {
						t.Fatalf("shardOf = %d, want a part in [0, %d)", p, parts)
					}
					count[p]++
				}
				for p, c := range count {
					// Even within 10%: a binomial's deviation here is under 1.5%.
					if want := n / parts; c < want*9/10 || c > want*11/10 {
						t.Errorf("shard %d of %d holds %d of %d traces, want about %d (all: %v)", p, parts, c, n, want, count)
					}
				}
			})
		}
	}
}
