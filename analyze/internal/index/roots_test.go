package index

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// A chain whose span ids fall with depth puts the deepest span first in
// the order (spans are ordered by id within a trace), so each walk starts
// below the last one's: resolving only where a walk starts would follow
// depth² links.
func TestRootsFollowsEachParentLinkOnce(t *testing.T) {
	const depth = 2000
	d := dumptest.New()
	ss := d.Resource()
	for k := range depth {
		s := dumptest.Span{Trace: 1, ID: uint64(depth - k), Name: "a", End: time.Hour}
		if k > 0 {
			s.Parent = uint64(depth - k + 1)
		}
		d.Add(ss, s)
	}
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	top := x.Roots()
	root := x.Order[0]
	for _, i := range x.Order {
		if x.Span(i).ID == depth {
			root = i
		}
	}
	for _, i := range x.Order {
		if got := top.At(i); got != root {
			t.Fatalf("span %d has root %d, want %d", x.Span(i).ID, got, root)
		}
	}
	if steps := top.steps; steps != depth-1 {
		t.Errorf("followed %d parent links for a chain of %d spans, want each of its %d links once", steps, depth, depth-1)
	}
}

// TestRootsWalksOnlyWhatIsAsked pins that UpValues resolves a span when
// first asked and memoizes its path: asking the root follows no link,
// asking a span halfway down follows the links up to the root, asking the
// deepest one follows the rest only, and asking every span after that
// follows none; each span's own answer is read once. A copy of a span
// answers -2 unwalked.
func TestRootsWalksOnlyWhatIsAsked(t *testing.T) {
	const depth, mid = 50, 20
	d := dumptest.New()
	ss := d.Resource()
	for k := range depth {
		s := dumptest.Span{Trace: 1, ID: uint64(k + 1), Name: "a", End: time.Hour}
		if k > 0 {
			s.Parent = uint64(k)
		}
		d.Add(ss, s)
	}
	d.Add(ss, dumptest.Span{Trace: 1, ID: depth, Parent: depth - 1, Name: "a copy", End: time.Hour})
	x := New(rulefmt.IndexOptions{})
	x.NoCopyCache = true
	x.Add(d.Traces())
	top := x.Roots()
	byID := map[uint64]int32{}
	for _, i := range x.Order {
		byID[x.Span(i).ID] = i
	}
	root := byID[1]
	for _, ask := range []struct {
		id    uint64
		steps int
	}{{1, 0}, {mid, mid - 1}, {depth, depth - 1}} {
		if got := top.At(byID[ask.id]); got != root || top.steps != ask.steps {
			t.Fatalf("span %d: root %d after %d links in all, want %d after %d", ask.id, got, top.steps, root, ask.steps)
		}
	}
	for _, i := range x.Order {
		if got := top.At(i); got != root {
			t.Fatalf("span %d has root %d, want %d", x.Span(i).ID, got, root)
		}
	}
	if top.steps != depth-1 || top.owns != depth {
		t.Errorf("%d links followed and %d answers read in all, want the chain's %d links and %d spans once", top.steps, top.owns, depth-1, depth)
	}
	if x.Duplicates() != 1 {
		t.Fatalf("%d duplicates, want the copy", x.Duplicates())
	}
	copyAt := x.NumSpans - 1 // the copy arrived last
	if got := top.At(copyAt); got != -2 || top.steps != depth-1 {
		t.Errorf("the copy answers %d after %d links in all, want -2 and no walk", got, top.steps)
	}
}
