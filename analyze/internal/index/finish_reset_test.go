package index

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// treeDump is one trace: a root and a child, with a copy of the child.
func treeDump(trace uint64, session string) *dumptest.Builder {
	d := dumptest.New()
	ss := d.Resource(spans.ResourceServiceName, "gw-"+session)
	d.Add(ss, dumptest.Span{Trace: trace, ID: 1, Name: "root", End: time.Second, Attrs: []any{spans.AttrSessionID, session}})
	d.Add(ss, dumptest.Span{Trace: trace, ID: 2, Parent: 1, Name: "child", Start: time.Millisecond, End: 2 * time.Second})
	d.Add(ss, dumptest.Span{Trace: trace, ID: 2, Parent: 1, Name: "child", Start: time.Millisecond, End: 2 * time.Second})
	return d
}

func TestAFinishWithNothingNewKeepsTheLayout(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "s").Traces())
	tree := x.Tree()
	x.Finish()
	_ = x.Spans()
	if x.Tree() != tree {
		t.Errorf("the tree was laid out again with no span added since")
	}
}

func TestAFinishAfterNewSpansLaysTheTreeOutAgain(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "s").Traces())
	x.Finish()
	root := x.Order[0]
	if n := len(x.Tree().Subtree(root)); n != 2 {
		t.Fatalf("root's subtree holds %d spans, want 2", n)
	}
	d := dumptest.New()
	d.Add(d.Resource(), dumptest.Span{Trace: 1, ID: 3, Parent: 2, Name: "grandchild"})
	x.Add(d.Traces())
	if n := len(x.Tree().Subtree(root)); n != 3 {
		t.Errorf("after a grandchild landed the root's subtree holds %d spans, want 3", n)
	}
}

func TestAFinishDropsTheBuildStateOfAnIndexNotReused(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "s").Traces())
	x.Finish()
	if x.Recent != nil || x.nameIdx != nil || x.ValIdx != nil || x.traceIdx != nil || x.resIdx != nil {
		t.Errorf("a finished index still holds its duplicate cache or lookup maps")
	}
	// A copy arriving after a query is left out by the next finish, which
	// leaves no spare room past the distinct spans in the order.
	x.Add(treeDump(1, "s").Traces())
	if x.Spans() != 2 || x.Duplicates() != 4 || x.NumSpans != 4 {
		t.Errorf("spans %d duplicates %d span records %d, want 2 4 4", x.Spans(), x.Duplicates(), x.NumSpans)
	}
	if len(x.Order) != 2 || cap(x.Order) != len(x.Order) {
		t.Errorf("order len %d cap %d, want 2 and no spare room", len(x.Order), cap(x.Order))
	}
}

// view is what a query reads of an index, for comparing two of them.
func view(x *Index) string {
	s := fmt.Sprintf("spans %d traces %d dups %d incomplete %d fast %d inputs %v names %q vals %q res %d\n",
		x.Spans(), x.Traces(), x.Duplicates(), x.IncompleteTraces(), x.FastBatches, x.Inputs(), x.Names, x.Vals, len(x.Resources))
	start, end, ok := x.Window()
	s += fmt.Sprintf("window %v %v %v\n", start, end, ok)
	tree := x.Tree()
	for _, i := range x.Order {
		sp := x.Span(i)
		s += fmt.Sprintf("%s %d parent %d %v res %v subtree %d\n", x.Names[sp.Name], sp.ID, sp.Parent, spanAttrs(x)[x.Names[sp.Name]], resAttrs(x, x.Names[sp.Name]), len(tree.Subtree(i)))
	}
	for _, v := range []string{"false", "true", "a", "b", "gw-a", "gw-b"} {
		s += fmt.Sprintf("lookup %s %d %d\n", v, x.LookupValue(v), x.ValueID(v))
	}
	return s
}

func TestAResetIndexReadsLikeAFreshOne(t *testing.T) {
	for _, reuseTwice := range []bool{false, true} {
		fresh := New(rulefmt.IndexOptions{})
		fresh.Add(treeDump(2, "b").Traces())
		want := view(fresh)

		x := New(rulefmt.IndexOptions{})
		x.Add(treeDump(1, "a").Traces())
		x.AddFastPart(&ingest.Batch{Resources: []ingest.Resource{{}}, Spans: []ingest.Span{{TraceID: dumptest.TraceID(5), SpanID: dumptest.SpanID(9), ParentSpanID: dumptest.SpanID(8), Name: "orphan"}}}, 0, 1)
		x.InputReports = []report.InputReport{{}}
		_ = view(x)
		if reuseTwice {
			x.Reset()
			x.Add(treeDump(1, "a").Traces())
			x.Add(treeDump(3, "a").Traces())
			_ = view(x)
		}
		x.Add(treeDump(4, "a").Traces()) // added, never queried
		x.Reset()
		if x.dirty || x.layout != nil || x.Spans() != 0 || x.Traces() != 0 || x.Duplicates() != 0 || x.IncompleteTraces() != 0 || x.MemBytes() < 0 {
			t.Errorf("reuse twice %v: a reset index is not empty: spans %d traces %d", reuseTwice, x.Spans(), x.Traces())
		}
		if _, _, ok := x.Window(); ok {
			t.Errorf("reuse twice %v: a reset index has a window", reuseTwice)
		}
		x.Add(treeDump(2, "b").Traces())
		if got := view(x); got != want {
			t.Errorf("reuse twice %v: reset index reads\n%s\nwant, as a fresh one\n%s", reuseTwice, got, want)
		}
	}
}

func TestAResetIndexForgetsTheSpansItHeld(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "a").Traces())
	_ = x.Spans()
	x.Reset()
	// The same spans again: new to the reset index, not copies.
	x.Add(treeDump(1, "a").Traces())
	if x.Spans() != 2 || x.Duplicates() != 1 || x.NumSpans+int32(x.Dropped) != 3 {
		t.Errorf("spans %d duplicates %d, want 2 1 (the batch's own copy only)", x.Spans(), x.Duplicates())
	}
}

func TestOrderAndCompareSpansGoByTraceIDThenSpanID(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	// Arrival order is neither trace nor span id order; trace 0x0100 sorts
	// after 0x02 by bytes though its index in arrival is smaller.
	for _, s := range []dumptest.Span{
		{Trace: 0x0100, ID: 30}, {Trace: 0x02, ID: 5}, {Trace: 0x0100, ID: 10},
		{Trace: 0x02, ID: 1 << 63}, {Trace: 0x0100, ID: 20}, {Trace: 0x02, ID: 2},
	} {
		s.Name = fmt.Sprintf("%x/%d", s.Trace, s.ID)
		d.Add(ss, s)
	}
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	x.Finish()
	var inOrder []string
	for _, i := range x.Order {
		inOrder = append(inOrder, x.Names[x.Span(i).Name])
	}
	wantOrder := []string{"100/10", "100/20", "100/30", "2/2", "2/5", "2/9223372036854775808"} // by trace as it arrived, span id within
	if !slices.Equal(inOrder, wantOrder) {
		t.Errorf("order %v, want %v", inOrder, wantOrder)
	}
	all := slices.Clone(x.Order)
	slices.SortFunc(all, x.CompareSpans)
	var sorted []string
	for _, i := range all {
		sorted = append(sorted, x.Names[x.Span(i).Name])
	}
	want := []string{"2/2", "2/5", "2/9223372036854775808", "100/10", "100/20", "100/30"}
	if !slices.Equal(sorted, want) {
		t.Errorf("sorted by CompareSpans %v, want %v", sorted, want)
	}
	if c := x.CompareSpans(x.Order[0], x.Order[0]); c != 0 {
		t.Errorf("a span compares %d to itself, want 0", c)
	}
	if c := x.CompareSpans(x.Order[1], x.Order[0]); c != 1 {
		t.Errorf("span 100/20 against 100/10: %d, want 1", c)
	}
	if c := x.CompareSpans(x.Order[0], x.Order[1]); c != -1 {
		t.Errorf("span 100/10 against 100/20: %d, want -1", c)
	}
}

func TestAReusedIndexKeepsItsBuildStateAcrossAFinish(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "a").Traces())
	x.Reset()
	x.Add(treeDump(1, "a").Traces())
	x.Finish()
	if x.Recent == nil || x.nameIdx == nil || x.ValIdx == nil || x.traceIdx == nil || x.resIdx == nil {
		t.Errorf("a reused index dropped its duplicate cache or lookup maps on finish")
	}
	// Its copies are still caught as they arrive, and its order is right.
	x.Add(treeDump(1, "a").Traces())
	if x.Spans() != 2 || x.Duplicates() != 4 || x.NumSpans != 2 {
		t.Errorf("spans %d duplicates %d span records %d, want 2 4 2", x.Spans(), x.Duplicates(), x.NumSpans)
	}
	if x.Names[x.Span(x.Order[0]).Name] != "root" || x.Names[x.Span(x.Order[1]).Name] != "child" {
		t.Errorf("order %v", x.Order)
	}
}

func TestAResetIndexRefillsTheChunksItEmptied(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "a").Traces())
	_ = x.Spans()
	first := x.Chunks[0]
	x.Reset()
	if len(x.Chunks) != 0 || len(x.SpareChunks) != 1 || x.SpareChunks[0] != first {
		t.Fatalf("after a reset: %d chunks, %d spare, want 0 and the one chunk spare", len(x.Chunks), len(x.SpareChunks))
	}
	x.Add(treeDump(2, "b").Traces())
	if len(x.Chunks) != 1 || len(x.SpareChunks) != 0 || x.Chunks[0] != first {
		t.Errorf("the refill did not take the spare chunk: %d chunks, %d spare", len(x.Chunks), len(x.SpareChunks))
	}
	if x.Spans() != 2 || x.Names[x.Span(x.Order[0]).Name] != "root" || spanAttrs(x)["root"][spans.AttrSessionID] != "b" {
		t.Errorf("the refilled index reads spans %d attributes %v", x.Spans(), spanAttrs(x))
	}
}

func TestInputsIsACopy(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	if x.Inputs() != nil {
		t.Errorf("an index built with Add alone has inputs")
	}
	x.InputReports = []report.InputReport{{Path: "a"}}
	in := x.Inputs()
	in[0].Path = "changed"
	if x.Inputs()[0].Path != "a" {
		t.Errorf("changing the returned inputs changed the index's")
	}
}

func TestFinishedNamesAndValuesAreNotInternedAgain(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.Add(treeDump(1, "a").Traces())
	x.Finish() // drops the build-time maps; the next Add rebuilds them
	names, vals := len(x.Names), len(x.Vals)
	x.Add(treeDump(2, "a").Traces())
	x.AddFastPart(&ingest.Batch{Resources: []ingest.Resource{{}}, Spans: []ingest.Span{{TraceID: dumptest.TraceID(3), SpanID: dumptest.SpanID(1), Name: "root"}}}, 0, 1)
	x.Finish()
	if len(x.Names) != names || len(x.Vals) != vals || len(x.Resources) != 2 {
		t.Errorf("names %q values %q resources %d: the same ones were interned again", x.Names, x.Vals, len(x.Resources))
	}
	if x.FastBatches != 1 || x.Traces() != 3 {
		t.Errorf("fast batches %d traces %d, want 1 3", x.FastBatches, x.Traces())
	}
}
