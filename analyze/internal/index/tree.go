package index

// The parent links of a finished index laid out depth first, so questions
// about ancestors and subtrees cost a constant or logarithmic time per span
// whatever the shape of the traces: a runaway recursion makes chains of
// hundreds of thousands of spans, and a walk up the ancestors of every span
// would be quadratic in their depth.
//
// In depth-first preorder a span's subtree is one contiguous range of
// positions, [pre, end), and an ancestor always comes before its
// descendants. So a subtree scope is a sub-slice of one shared array, "is
// ancestor a strictly below root r" is pre[a] > pre[r] once both are known
// ancestors of the same span, and a per-span fact inherited from the nearest
// ancestor is computed in one pass over the preorder.

// Tree is the depth-first layout of a finished index's parent forest.
type Tree struct {
	// DFS lists the distinct spans in depth-first preorder, trace by
	// trace: trace t's spans are DFS[tr.first : tr.first+tr.n], as in
	// index.order. Within a trace, roots (and spans whose parent is
	// missing) come in span id order, each followed by its subtree;
	// children are visited in span id order.
	DFS []int32
	// Pre and End, per span index (duplicates included, never read), give
	// the subtree of a span as the range dfs[Pre:End].
	Pre, End []int32
}

// Tree returns the depth-first layout of the finished index, built on first
// use after each finish.
func (x *Index) Tree() *Tree {
	x.Finish()
	if x.layout == nil {
		x.layout = buildTree(x)
	}
	return x.layout
}

// buildTree lays out x's forest depth first in O(n): children are gathered
// with a counting sort by parent, then each trace is walked with an
// explicit stack (a recursion would overflow on a deep chain).
func buildTree(x *Index) *Tree {
	n := x.NumSpans
	t := &Tree{DFS: make([]int32, 0, len(x.Order)), Pre: make([]int32, n), End: make([]int32, n)}
	// Children of span p are kids[first[p]:first[p+1]], in index.order (span
	// id) order. first is indexed by span index + 1.
	first := make([]int32, n+1)
	for _, i := range x.Order {
		if p := x.Span(i).Parent; p >= 0 {
			first[p+1]++
		}
	}
	for p := int32(0); p < n; p++ {
		first[p+1] += first[p]
	}
	kids := make([]int32, first[n])
	next := make([]int32, n)
	copy(next, first[:n])
	for _, i := range x.Order {
		if p := x.Span(i).Parent; p >= 0 {
			kids[next[p]] = i
			next[p]++
		}
	}
	// next is reused as each stacked span's cursor into its children.
	var stack []int32
	for tr := range x.TraceRecs {
		rec := &x.TraceRecs[tr]
		for _, root := range x.Order[rec.First : rec.First+rec.N] {
			if x.Span(root).Parent >= 0 {
				continue
			}
			t.Pre[root] = int32(len(t.DFS))
			t.DFS = append(t.DFS, root)
			next[root] = first[root]
			stack = append(stack[:0], root)
			for len(stack) > 0 {
				top := stack[len(stack)-1]
				if next[top] == first[top+1] {
					t.End[top] = int32(len(t.DFS))
					stack = stack[:len(stack)-1]
					continue
				}
				c := kids[next[top]]
				next[top]++
				t.Pre[c] = int32(len(t.DFS))
				t.DFS = append(t.DFS, c)
				next[c] = first[c]
				stack = append(stack, c)
			}
		}
	}
	return t
}

// Subtree returns the spans of the Subtree rooted at span r, r first: a
// sub-slice of the shared layout, never a copy.
func (t *Tree) Subtree(r int32) []int32 {
	return t.DFS[t.Pre[r]:t.End[r]]
}

// StrictlyBelow reports whether a lies strictly beneath root, for a and root
// both ancestors (or self) of one span; any a is below root -1 (no root).
func (t *Tree) StrictlyBelow(a, root int32) bool {
	return root < 0 || t.Pre[a] > t.Pre[root]
}

// NearestAncestors returns, per span index, the nearest proper ancestor for
// which ok holds, -1 when none: one pass over the preorder, in which every
// parent comes before its children.
func (x *Index) NearestAncestors(ok func(int32) bool) []int32 {
	t := x.Tree()
	near := make([]int32, x.NumSpans)
	for _, i := range t.DFS {
		p := x.Span(i).Parent
		switch {
		case p < 0:
			near[i] = -1
		case ok(p):
			near[i] = p
		default:
			near[i] = near[p]
		}
	}
	return near
}

// Roots answers, per span index, the root of the span's chain of parents:
// its topmost ancestor (itself for a root), -1 when the chain ends at a
// missing parent (the root is not in the dump).
func (x *Index) Roots() *UpValues { return x.upValues(rootAt) }

// rootAt is Roots' answer at span j (sp) itself: j, when j is a root.
func rootAt(j int32, sp *Span) (int32, bool) { return j, sp.Parent == ParentNone }

// InheritedValues answers, per span index, the value of span attribute
// key on the span or on its nearest ancestor that has it, -1 when none.
func (x *Index) InheritedValues(key uint16) *UpValues {
	return x.upValues(func(_ int32, sp *Span) (int32, bool) { return AttrIn(x.AttrsOf(sp), key) })
}

// UpValues answers, per span, the answer of the span or of its nearest
// ancestor that has one (own), -1 when its chain of parents ends (at a
// root or a missing parent) without one. It resolves a span when first
// asked: it walks up only as far as the first span already resolved and
// resolves the whole path on the way back, so every link is followed at
// most once whatever the depth of the chains (finish has broken every
// parent cycle), and the spans never asked about, nor their ancestors,
// cost nothing. The vocabulary asks for the pool's spans only, a fraction
// of a dump. A test holds the links followed to the spans: resolving only
// where a walk started would give the same answers in quadratic time.
// own is handed span j with its record, which the walk has in hand: the
// measures ask an UpValues of most pool spans, and looking the record up
// again in own and for its parent cost 0.2% of a run's instructions.
type UpValues struct {
	x     *Index
	own   func(j int32, sp *Span) (int32, bool)
	val   []int32 // per span, its answer + 2; 0 while unresolved
	path  []int32
	steps int // parent links followed, for tests
	owns  int // spans whose own answer was read, for tests
}

func (x *Index) upValues(own func(j int32, sp *Span) (int32, bool)) *UpValues {
	x.Finish()
	return &UpValues{x: x, own: own, val: make([]int32, x.NumSpans)}
}

// At returns span i's answer; a span left out as a copy answers -2.
func (u *UpValues) At(i int32) int32 {
	sp := u.x.Span(i)
	if sp.isDup() {
		return -2
	}
	u.path = u.path[:0]
	v := int32(-1)
	for j := i; ; u.steps++ { // sp is span j
		if w := u.val[j]; w != 0 {
			v = w - 2
			break
		}
		u.owns++
		if a, ok := u.own(j, sp); ok {
			u.val[j], v = a+2, a
			break
		}
		u.path = append(u.path, j)
		if j = sp.Parent; j < 0 {
			break
		}
		sp = u.x.Span(j)
	}
	for _, j := range u.path {
		u.val[j] = v + 2
	}
	return v
}
