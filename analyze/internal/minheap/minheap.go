// Package minheap is a binary min-heap of values of one type, ordered by a
// comparison the caller gives. It is container/heap's algorithm, step for
// step, so values that compare equal leave in the same order, without its
// interface: container/heap hands every value through an `any`, which
// allocates a struct on every Push and Pop, and the replays push and pop
// one per acquire.
package minheap

// Heap is a min-heap of T. The zero value is not usable: call New.
type Heap[T any] struct {
	items []T
	cmp   func(a, b *T) int
}

// New returns an empty heap ordered by cmp, which returns a negative
// number when a must leave before b, as cmp.Compare does.
func New[T any](cmp func(a, b *T) int) Heap[T] { return Heap[T]{cmp: cmp} }

// Len is the number of values in the heap.
func (h *Heap[T]) Len() int { return len(h.items) }

// Min returns the value Pop would remove; the heap must not be empty.
func (h *Heap[T]) Min() *T { return &h.items[0] }

// Push adds x.
func (h *Heap[T]) Push(x T) {
	h.items = append(h.items, x)
	h.up(len(h.items) - 1)
}

// FixMin puts the least value back in its place after the caller changed
// it through Min: container/heap's Fix of the first value. A k-way merge
// advances its least list so, one sift where a Pop and a Push take two.
func (h *Heap[T]) FixMin() { h.down(0, len(h.items)) }

// Pop removes and returns the least value; the heap must not be empty.
func (h *Heap[T]) Pop() T {
	n := len(h.items) - 1
	h.items[0], h.items[n] = h.items[n], h.items[0]
	h.down(0, n)
	x := h.items[n]
	var zero T
	h.items[n] = zero // let go of what x points to
	h.items = h.items[:n]
	return x
}

// less reports whether the value at i must leave before the one at j.
func (h *Heap[T]) less(i, j int) bool { return h.cmp(&h.items[i], &h.items[j]) < 0 }

// up moves the value at j up to its place.
func (h *Heap[T]) up(j int) {
	for {
		i := (j - 1) / 2 // parent
		if i == j || !h.less(j, i) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		j = i
	}
}

// down moves the value at i0 down to its place among the first n.
func (h *Heap[T]) down(i0, n int) {
	i := i0
	for {
		j1 := 2*i + 1
		if j1 >= n || j1 < 0 { // j1 < 0 after int overflow
			break
		}
		j := j1 // the left child
		if j2 := j1 + 1; j2 < n && h.less(j2, j1) {
			j = j2 // the right child
		}
		if !h.less(j, i) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		i = j
	}
}
