package index

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// byName returns the index of the distinct span named name.
func byName(t *testing.T, x *Index, name string) int32 {
	t.Helper()
	x.Finish()
	for _, i := range x.Order {
		if x.Names[x.Span(i).Name] == name {
			return i
		}
	}
	t.Fatalf("no span named %q", name)
	return -1
}

func TestParentLinksNameTheParentOrSayWhyNot(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	d.Add(ss, dumptest.Span{Trace: 1, ID: 2, Parent: 1, Name: "child"}) // before its parent
	d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "root"})
	d.Add(ss, dumptest.Span{Trace: 1, ID: 3, Parent: 2, Name: "grandchild"})
	d.Add(ss, dumptest.Span{Trace: 2, ID: 1, Parent: 9, Name: "orphan"})
	d.Add(ss, dumptest.Span{Trace: 3, ID: 5, Parent: 6, Name: "a"}) // a and b: a cycle
	d.Add(ss, dumptest.Span{Trace: 3, ID: 6, Parent: 5, Name: "b"})
	d.Add(ss, dumptest.Span{Trace: 3, ID: 7, Parent: 6, Name: "below the cycle"})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	root, child, grand := byName(t, x, "root"), byName(t, x, "child"), byName(t, x, "grandchild")
	if p := x.Span(root).Parent; p != ParentNone {
		t.Errorf("root's parent %d, want none", p)
	}
	if p := x.Span(child).Parent; p != root {
		t.Errorf("child's parent %d, want root %d", p, root)
	}
	if p := x.Span(grand).Parent; p != child {
		t.Errorf("grandchild's parent %d, want child %d", p, child)
	}
	if p := x.Span(byName(t, x, "orphan")).Parent; p != parentMissing {
		t.Errorf("orphan's parent %d, want missing", p)
	}
	a, b := byName(t, x, "a"), byName(t, x, "b")
	pa, pb := x.Span(a).Parent, x.Span(b).Parent
	if (pa == parentMissing) == (pb == parentMissing) || (pa != b && pb != a) {
		t.Errorf("cycle a<->b: parents %d %d, want exactly one link cut", pa, pb)
	}
	if x.IncompleteTraces() != 2 {
		t.Errorf("incomplete %d, want 2 (the orphan's and the cycle's)", x.IncompleteTraces())
	}
	for t2, want := range []bool{false, true, true} {
		if x.TraceRecs[t2].Incomplete != want {
			t.Errorf("trace %d incomplete %v, want %v", t2, x.TraceRecs[t2].Incomplete, want)
		}
	}
	if n := len(x.Tree().Subtree(root)); n != 3 {
		t.Errorf("root's subtree %d spans, want 3", n)
	}
}

func TestTheFirstCopyOfASpanIsTheOneKept(t *testing.T) {
	for _, noCache := range []bool{false, true} {
		d := dumptest.New()
		ss := d.Resource()
		d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "first", Attrs: []any{spans.AttrSessionID, "one"}})
		d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "second", Attrs: []any{spans.AttrSessionID, "two"}})
		d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "third"})
		for i := range 40 { // enough spans in the trace for the sort not to be an insertion sort
			d.Add(ss, dumptest.Span{Trace: 1, ID: uint64(40 - i%20), Name: fmt.Sprintf("other %d", i)})
		}
		x := New(rulefmt.IndexOptions{})
		x.NoCopyCache = noCache
		x.Add(d.Traces())
		if x.Spans() != 21 || x.Duplicates() != 22 {
			t.Errorf("no cache %v: spans %d duplicates %d, want 21 22", noCache, x.Spans(), x.Duplicates())
		}
		got := spanAttrs(x)
		for i := range 20 {
			if _, ok := got[fmt.Sprintf("other %d", i)]; !ok {
				t.Errorf("no cache %v: copy %d of a span is kept over the first one", noCache, i)
			}
		}
		if len(got) != 21 || got["first"][spans.AttrSessionID] != "one" {
			t.Errorf("no cache %v: kept %v, want the first copy", noCache, got)
		}
		wantRecords, wantDropped := int32(21), 22
		if noCache {
			wantRecords, wantDropped = 43, 0
		}
		if x.NumSpans != wantRecords || x.Dropped != wantDropped {
			t.Errorf("no cache %v: %d span records, %d dropped, want %d %d", noCache, x.NumSpans, x.Dropped, wantRecords, wantDropped)
		}
	}
}

func TestASpanEndingBeforeItStartsLastsZero(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	d.Add(ss, dumptest.Span{Trace: 1, ID: 1, Name: "skewed", Start: 5 * time.Second, End: 2 * time.Second})
	d.Add(ss, dumptest.Span{Trace: 1, ID: 2, Name: "early", Start: time.Second, End: 8 * time.Second})
	d.Add(ss, dumptest.Span{Trace: 1, ID: 3, Name: "inside", Start: 2 * time.Second, End: 3 * time.Second})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	s := x.Span(byName(t, x, "skewed"))
	if s.End != s.Start || s.Start != dumptest.T0.Add(5*time.Second).UnixNano() {
		t.Errorf("skewed span start %d end %d, want both at its start", s.Start, s.End)
	}
	start, end, ok := x.Window()
	if !ok || !start.Equal(dumptest.T0.Add(time.Second)) || !end.Equal(dumptest.T0.Add(8*time.Second)) || start.Location() != time.UTC {
		t.Errorf("window %v %v %v, want T0+1s to T0+8s in UTC", start, end, ok)
	}
}

func TestKeysOfEveryLengthAreMatched(t *testing.T) {
	k63, k64 := strings.Repeat("a", maxKeyLen), strings.Repeat("b", maxKeyLen+1)
	d := dumptest.New()
	d.Add(d.Resource(k63, "r63", k64, "r64"), dumptest.Span{Trace: 1, Name: "s", Attrs: []any{k63, "v63", k64, "v64", "x", "unkept"}})
	x := New(rulefmt.IndexOptions{SpanAttrs: []string{k63, k64, ""}, ResourceAttrs: []string{k63, k64}})
	x.Add(d.Traces())
	if got := spanAttrs(x)["s"]; len(got) != 2 || got[k63] != "v63" || got[k64] != "v64" {
		t.Errorf("span attributes %v, want both long keys", got)
	}
	if got := resAttrs(x, "s"); len(got) != 2 || got[k63] != "r63" || got[k64] != "r64" {
		t.Errorf("resource attributes %v, want both long keys", got)
	}
	if _, ok := x.LookupKey(""); ok {
		t.Errorf("the empty key is kept")
	}
	id63, _ := x.LookupKey(k63)
	if !x.SpanKeyOK[id63] || !x.ResKeyOK[id63] || len(x.Keys) != len(vocabSpanAttrs)+len(vocabResourceAttrs)+2 {
		t.Errorf("a key kept on both shares one id: keys %q", x.Keys)
	}
}

func TestValuesAreFoundByTextOnceTheIndexIsFinished(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	for _, v := range []string{"m", "c", "x", "a"} {
		d.Add(ss, dumptest.Span{Trace: 1, Name: v, Attrs: []any{spans.AttrSessionID, "sess-" + v}})
	}
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	x.Finish() // drops the build-time map
	for id, v := range x.Vals {
		if got := x.LookupValue(v); got != int32(id) {
			t.Errorf("LookupValue(%q) = %d, want %d", v, got, id)
		}
		if got := x.ValueID(v); got != int32(id) {
			t.Errorf("ValueID(%q) = %d, want %d", v, got, id)
		}
	}
	for _, v := range []string{"", "sess-b", "zzz", "sess-"} {
		if x.LookupValue(v) != -1 || x.ValueID(v) != -1 {
			t.Errorf("a value no span carries, %q, was found", v)
		}
	}
	// More values after: the lookup covers them too.
	d2 := dumptest.New()
	d2.Add(d2.Resource(spans.ResourceServiceInstanceID, "i-1", spans.ResourceServiceName, "gw"), dumptest.Span{Trace: 2, Name: "late", Attrs: []any{spans.AttrSessionID, "sess-b"}})
	x.Add(d2.Traces())
	x.Finish()
	if id := x.LookupValue("sess-b"); id < 0 || x.Vals[id] != "sess-b" {
		t.Errorf("a value added after a lookup is not found: %d", id)
	}
	i := byName(t, x, "late")
	key, _ := x.LookupKey(spans.AttrSessionID)
	if v, ok := x.AttrVal(i, key); !ok || x.Vals[v] != "sess-b" {
		t.Errorf("AttrVal = %d %v", v, ok)
	}
	other, _ := x.LookupKey(spans.AttrPoolID)
	if _, ok := x.AttrVal(i, other); ok {
		t.Errorf("AttrVal found a key the span lacks")
	}
	for _, k := range []string{spans.ResourceServiceName, spans.ResourceServiceInstanceID} {
		id, _ := x.LookupKey(k)
		if v, ok := x.ResAttrVal(i, id); !ok || (x.Vals[v] != "gw" && x.Vals[v] != "i-1") || (k == spans.ResourceServiceName) != (x.Vals[v] == "gw") {
			t.Errorf("ResAttrVal(%s) = %d %v", k, v, ok)
		}
	}
	if _, ok := x.ResAttrVal(byName(t, x, "m"), other); ok {
		t.Errorf("ResAttrVal found a key the resource lacks")
	}
}

// TestOneSpanIDInManyTracesIsNeverACopy pins that the duplicate cache
// matches the trace as well as the span id: 5000 traces share a span id
// over 4096 slots, so some of them meet in one slot.
func TestOneSpanIDInManyTracesIsNeverACopy(t *testing.T) {
	d := dumptest.New()
	ss := d.Resource()
	for tr := range 5000 {
		d.Add(ss, dumptest.Span{Trace: uint64(tr) + 1, ID: 7, Name: "s"})
	}
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	if x.Spans() != 5000 || x.Duplicates() != 0 || x.Dropped != 0 {
		t.Errorf("spans %d duplicates %d dropped %d, want 5000 0 0", x.Spans(), x.Duplicates(), x.Dropped)
	}
}

// TestSearchIDAgreesWithBinarySearch pins searchID, the parent lookup of
// linkParents, to slices.BinarySearch on every sorted list of up to nine
// ids drawn from four values (runs of equal ids, which copies of a span
// leave, included), probed with each value and with those between,
// below and above them: the first of equal ids, the place of a missing
// one, the ends and the empty list.
func TestSearchIDAgreesWithBinarySearch(t *testing.T) {
	values := []uint64{2, 4, 6, math.MaxUint64 - 1}
	probes := []uint64{0, 1, 2, 3, 4, 5, 6, 7, math.MaxUint64 - 2, math.MaxUint64 - 1, math.MaxUint64}
	var lists func(prefix []uint64, from, left int)
	checked := 0
	lists = func(prefix []uint64, from, left int) {
		for _, p := range probes {
			wantAt, wantFound := slices.BinarySearch(prefix, p)
			if at, found := searchID(prefix, p); at != wantAt || found != wantFound {
				t.Fatalf("searchID(%v, %d) = %d, %v; slices.BinarySearch says %d, %v", prefix, p, at, found, wantAt, wantFound)
			}
			checked++
		}
		if left == 0 {
			return
		}
		for v := from; v < len(values); v++ {
			lists(append(prefix[:len(prefix):len(prefix)], values[v]), v, left-1)
		}
	}
	lists(nil, 0, 9)
	if checked < 1000 {
		t.Fatalf("only %d searches checked", checked)
	}
}
