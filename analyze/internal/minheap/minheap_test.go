package minheap

import (
	"cmp"
	"container/heap"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"weak"
)

// item is a value and the order it was pushed in: items of one value
// compare equal, so the order they leave in shows the algorithm's.
type item struct{ v, pushed int }

func cmpItem(a, b *item) int { return cmp.Compare(a.v, b.v) }

// reference is the same heap through container/heap.
type reference []item

func (r reference) Len() int           { return len(r) }
func (r reference) Less(i, j int) bool { return r[i].v < r[j].v }
func (r reference) Swap(i, j int)      { r[i], r[j] = r[j], r[i] }
func (r *reference) Push(x any)        { *r = append(*r, x.(item)) }
func (r *reference) Pop() any {
	o := *r
	x := o[len(o)-1]
	*r = o[:len(o)-1]
	return x
}

func TestPopsAndFixesInContainerHeapsOrderTiesIncluded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values int // values are drawn from [0, values): few values, many ties
	}{
		{"all equal", 1},
		{"many ties", 4},
		{"few ties", 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			h, ref := New(cmpItem), &reference{}
			pushed, popped, fixed := 0, 0, 0
			for step := range 20000 {
				if h.Len() != ref.Len() {
					t.Fatalf("step %d: %d values, container/heap holds %d", step, h.Len(), ref.Len())
				}
				if h.Len() > 0 && rng.IntN(5) == 0 {
					// Raise the least value in place and put it back.
					raised := rng.IntN(tc.values)
					h.Min().v = max(h.Min().v, raised)
					(*ref)[0].v = max((*ref)[0].v, raised)
					h.FixMin()
					heap.Fix(ref, 0)
					fixed++
					continue
				}
				if h.Len() > 0 && rng.IntN(5) < 2 {
					if m := *h.Min(); m != (*ref)[0] {
						t.Fatalf("step %d: Min is %v, container/heap's is %v", step, m, (*ref)[0])
					}
					got, want := h.Pop(), heap.Pop(ref).(item)
					if got != want {
						t.Fatalf("step %d: popped %v, container/heap pops %v", step, got, want)
					}
					popped++
					continue
				}
				x := item{v: rng.IntN(tc.values), pushed: pushed}
				pushed++
				h.Push(x)
				heap.Push(ref, x)
			}
			if popped < 1000 || pushed-popped < 100 || fixed < 1000 {
				t.Fatalf("pushed %d, popped %d, fixed %d: the walk did not keep the heap busy", pushed, popped, fixed)
			}
		})
	}
}

func TestPopEmptiesInOrder(t *testing.T) {
	h := New(cmpItem)
	for _, v := range []int{5, 1, 4, 1, 3} {
		h.Push(item{v: v})
	}
	var got []int
	for h.Len() > 0 {
		got = append(got, h.Pop().v)
	}
	if want := []int{1, 1, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("popped %v, want %v", got, want)
	}
}

func TestPopLetsGoOfWhatThePoppedValuePointsTo(t *testing.T) {
	type boxed struct{ p *[64]byte }
	h := New(func(a, b *boxed) int { return cmp.Compare(a.p[0], b.p[0]) })
	first, second := new([64]byte), new([64]byte)
	second[0] = 1
	gone := weak.Make(first)
	h.Push(boxed{first})
	h.Push(boxed{second})
	first = nil
	if got := h.Pop(); got.p[0] != 0 {
		t.Fatalf("popped the value %d first, want 0", got.p[0])
	}
	runtime.GC()
	if gone.Value() != nil {
		t.Errorf("the heap still holds the popped value's pointer: the garbage collector cannot free it")
	}
	if h.Len() != 1 || h.Min().p != second {
		t.Errorf("the heap holds %d values, want the second one only", h.Len())
	}
}
