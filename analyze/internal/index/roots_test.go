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
	top, steps := x.resolveUp(x.rootAt)
	root := x.Order[0]
	for _, i := range x.Order {
		if x.Span(i).ID == depth {
			root = i
		}
	}
	for _, i := range x.Order {
		if top[i] != root {
			t.Fatalf("span %d has root %d, want %d", x.Span(i).ID, top[i], root)
		}
	}
	if steps != depth-1 {
		t.Errorf("followed %d parent links for a chain of %d spans, want each of its %d links once", steps, depth, depth-1)
	}
}
