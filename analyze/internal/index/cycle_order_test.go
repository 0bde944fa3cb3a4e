package index

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestACycleIsCutWhateverTheArrivalOrder pins linkParents' shortcut: a
// trace whose parent links all run one way in arrival order (parents
// first, or children first) is walked for no cycle, and any other trace
// is. A cycle always has a link against the others; the cases put that
// link first, in the middle and last in span-id order (the order the
// links are read in), so a shortcut that looked at only some links would
// leave one of them whole.
func TestACycleIsCutWhateverTheArrivalOrder(t *testing.T) {
	type sp struct{ id, parent uint64 }
	cases := []struct {
		name       string
		arrival    []sp // in the order the spans arrive
		incomplete bool
	}{
		{"a chain, parents first", []sp{{1, 0}, {2, 1}, {3, 2}, {4, 3}}, false},
		{"a chain, children first", []sp{{4, 3}, {3, 2}, {2, 1}, {1, 0}}, false},
		{"a tree, links both ways", []sp{{2, 1}, {1, 0}, {3, 1}, {4, 3}}, false},
		{"three spans, the link against the others read first", []sp{{1, 3}, {2, 1}, {3, 2}}, true},
		{"three spans, the link against the others read last", []sp{{3, 1}, {2, 3}, {1, 2}}, true},
		{"three spans, the link against the others read second", []sp{{2, 3}, {1, 2}, {3, 1}}, true},
		{"a root and a cycle below it, children first", []sp{{5, 6}, {6, 5}, {2, 1}, {1, 0}}, true},
		{"a root and a cycle below it, parents first", []sp{{1, 0}, {2, 1}, {6, 5}, {5, 6}}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := dumptest.New()
			ss := d.Resource()
			for _, s := range c.arrival {
				d.Add(ss, dumptest.Span{Trace: 1, ID: s.id, Parent: s.parent, Name: "s"})
			}
			x := New(rulefmt.IndexOptions{})
			x.Add(d.Traces())
			x.Finish()
			if got := x.TraceRecs[0].Incomplete; got != c.incomplete {
				t.Errorf("incomplete %v, want %v", got, c.incomplete)
			}
			cut := 0
			for _, i := range x.Order {
				if x.Span(i).Parent == parentMissing {
					cut++
				}
			}
			if want := map[bool]int{false: 0, true: 1}[c.incomplete]; cut != want {
				t.Errorf("%d links cut, want %d", cut, want)
			}
			// Every ancestor walk ends: at most as many steps as spans.
			for _, i := range x.Order {
				steps := 0
				for p := x.Span(i).Parent; p >= 0; p = x.Span(p).Parent {
					if steps++; steps > len(x.Order) {
						t.Fatalf("span %d's ancestors go round", x.Span(i).ID)
					}
				}
			}
		})
	}
}
