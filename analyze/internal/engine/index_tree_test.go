package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/ruleobs"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// randomForest builds traces of random trees (several roots, a missing
// parent now and then) whose spans carry random names and values.
func randomForest(rng *rand.Rand, traces, perTrace int) ptrace.Traces {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	names := []string{"a", "b", "c"}
	for tr := 1; tr <= traces; tr++ {
		var ids []uint64
		for k := 0; k < perTrace; k++ {
			s := sp{trace: uint64(tr), name: names[rng.IntN(len(names))], start: time.Duration(k) * time.Millisecond, end: time.Hour}
			switch {
			case len(ids) > 0 && rng.IntN(10) > 0:
				s.parent = ids[rng.IntN(len(ids))]
			case rng.IntN(4) == 0:
				s.parent = 1 << 40 // missing
			}
			if rng.IntN(3) > 0 {
				s.attrs = []any{"v", fmt.Sprint(rng.IntN(4))}
			}
			ids = append(ids, d.add(ss, s))
		}
	}
	return d.td
}

// walkSelects is the definition of compiledSel.selects, walking the
// ancestors of i up to root one by one.
func walkSelects(x *index.Index, c *ruleobs.CompiledSel, i, root int32) bool {
	if !c.Self.Match(i) {
		return false
	}
	if i == root {
		return c.Under == nil
	}
	under := c.Under == nil
	for p := x.Span(i).Parent; p >= 0 && p != root; p = x.Span(p).Parent {
		if c.Under != nil && c.Under.Match(p) {
			under = true
		}
		if c.NotUnder != nil && c.NotUnder.Match(p) {
			return false
		}
	}
	return under
}

// walkSubtree lists the spans whose ancestors (or self) include root.
func walkSubtree(x *index.Index, root int32) []int32 {
	var out []int32
	for _, i := range x.Order {
		for a := i; a >= 0; a = x.Span(a).Parent {
			if a == root {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

func TestSubtreeScopesAndSelectorsMatchAncestorWalks(t *testing.T) {
	sel := func(name string) *rulefmt.Selector { return &rulefmt.Selector{Name: name} }
	cases := []struct {
		name            string
		under, notUnder *rulefmt.Selector
	}{
		{"self only", nil, nil},
		{"under", sel("b"), nil},
		{"not under", nil, sel("c")},
		{"under and not under", sel("b"), sel("c")},
		{"under itself", sel("a"), sel("a")},
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		x := index.New(rulefmt.IndexOptions{SpanAttrs: []string{"v"}})
		x.Add(randomForest(rng, 3, 1+rng.IntN(60)))
		tree := x.Tree()
		root, _ := selector.Compile(x, rulefmt.Selector{Name: "a"})
		var scopes []ruleobs.RuleScope
		for _, i := range x.Order {
			if root.Match(i) {
				want := walkSubtree(x, i)
				got := tree.Subtree(i)
				if len(got) != len(want) || got[0] != i {
					t.Fatalf("seed %d: subtree of %d: got %d spans (first %d), walk finds %d", seed, i, len(got), got[0], len(want))
				}
				scopes = append(scopes, ruleobs.RuleScope{Root: i, Spans: got})
			}
		}
		vKey, _ := x.LookupKey("v")
		for _, tc := range cases {
			c := &ruleobs.CompiledSel{}
			c.Self, _ = selector.Compile(x, rulefmt.Selector{NameRegex: nil, Name: "b"})
			if tc.under != nil {
				c.Under, _ = selector.Compile(x, *tc.under)
			}
			if tc.notUnder != nil {
				c.NotUnder, _ = selector.Compile(x, *tc.notUnder)
			}
			agg := ruleobs.NewSubtreeAgg(x, scopes)
			for k, sc := range scopes {
				n, vals := 0, map[int32]bool{}
				for _, i := range walkSubtree(x, sc.Root) {
					if walkSelects(x, c, i, sc.Root) {
						n++
						if v, ok := x.AttrVal(i, vKey); ok {
							vals[v] = true
						}
					}
					if got, want := c.Selects(x, i, sc.Root), walkSelects(x, c, i, sc.Root); got != want {
						t.Fatalf("seed %d %s: selects(%d, root %d) = %v, the walk says %v", seed, tc.name, i, sc.Root, got, want)
					}
				}
				if got := agg.Count(c, k); got != n {
					t.Errorf("seed %d %s: count in subtree of %d = %d, the walk counts %d", seed, tc.name, sc.Root, got, n)
				}
				if got := agg.Distinct(c, vKey, k); got != len(vals) {
					t.Errorf("seed %d %s: distinct in subtree of %d = %d, the walk finds %d", seed, tc.name, sc.Root, got, len(vals))
				}
			}
			for _, i := range x.Order { // the dump scope: every ancestor counts
				if got, want := c.Selects(x, i, -1), walkSelects(x, c, i, -1); got != want {
					t.Fatalf("seed %d %s: selects(%d, no root) = %v, the walk says %v", seed, tc.name, i, got, want)
				}
			}
		}
	}
}

// loadShape loads a hostile shape of n spans through Load, as the CLI does.
func loadShape(t testing.TB, shape string, n int64, opts rulefmt.IndexOptions) *index.Index {
	t.Helper()
	path := writeShape(t, shape, n)
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: opts})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Spans() != int(n) {
		t.Fatalf("%s: %d spans indexed, want %d", shape, idx.Spans(), n)
	}
	return idx
}

// matchCalls sums how many spans the rule evaluation's matchers looked at.
func matchCalls(ev *ruleobs.Eval) int64 {
	var n int64
	for _, m := range ev.Matchers {
		n += m.Calls
	}
	return n
}

// checkShape runs the built-in rules on idx as `mcptrace check` does and
// returns the evaluation, the results and the bytes allocated doing it.
func checkShape(t testing.TB, idx *index.Index, cfg rulefmt.Config) (*ruleobs.Eval, []report.RuleObservation, uint64) {
	t.Helper()
	cfg = cfg.WithDefaults()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Analyze(asDump(idx), cfg); err != nil {
		t.Fatal(err)
	}
	rules := rulefmt.BuiltinRules(cfg)
	ev := &ruleobs.Eval{X: idx, Cfg: cfg, Max: DefaultMaxExamples, Matchers: map[*rulefmt.Selector]*selector.Matcher{}}
	var res []report.RuleObservation
	for i := range rules {
		r, err := ev.Observe(&rules[i])
		if err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	runtime.ReadMemStats(&after)
	return ev, res, after.TotalAlloc - before.TotalAlloc
}

// The work and memory of the analysis and the rules grow with the spans,
// not with the depth of the tree or the fan-out of one span: a chain of
// subtree roots must not keep a span list per nested subtree (depth²
// memory), a selector's under must not walk every span's ancestors, and an
// invocation's acquires must not be sorted by list insertion. The figures
// are counts (bytes allocated, spans looked at, comparisons), not times.
func TestHostileShapesCostLinearWork(t *testing.T) {
	const n = 10_000
	execRoot := rulefmt.Selector{Name: spans.SpanHandshake}
	cases := []struct {
		shape string
		cfg   rulefmt.Config
	}{
		{"invoke-chain", rulefmt.Config{}},
		{"handshake-chain", rulefmt.Config{}},
		{"handshake-chain", rulefmt.Config{ExecutionRoot: &execRoot}},
		{"acquire-fanout", rulefmt.Config{}},
	}
	for _, tc := range cases {
		name := tc.shape
		if tc.cfg.ExecutionRoot != nil {
			name += " with execution root"
		}
		t.Run(name, func(t *testing.T) {
			idx := loadShape(t, tc.shape, n, tc.cfg.IndexOptions())
			ev, res, alloc := checkShape(t, idx, tc.cfg)
			if len(res) != len(rulefmt.BuiltinRules(tc.cfg)) {
				t.Fatalf("%d results, want one per rule", len(res))
			}
			// A few hundred bytes per span: the layout, per-span arrays.
			if perSpan := alloc / n; perSpan > 2048 {
				t.Errorf("analysis and rules allocated %d bytes per span (%d MB for %d spans): more than linear", perSpan, alloc>>20, n)
			}
			// Each rule's matchers look at each span a few times.
			// ... and at least once: a count below the spans counts nothing.
			if calls := matchCalls(ev); calls > 40*n || calls < n {
				t.Errorf("matchers looked at %d spans for %d spans: want from once to 40 times each (more: an ancestor walk per span)", calls, n)
			}
		})
	}
	t.Run("acquire-fanout sorts acquires", func(t *testing.T) {
		idx := loadShape(t, "acquire-fanout", n, rulefmt.IndexOptions{})
		cfg := rulefmt.Config{}.WithDefaults()
		p, err := vocab.Stage(context.Background(), idx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Acquires) != n-1 {
			t.Fatalf("%d acquire events, want %d", len(p.Acquires), n-1)
		}
		for k := 1; k < len(p.Acquires); k++ {
			if p.Acquires[k].Start < p.Acquires[k-1].Start {
				t.Fatalf("acquires of the invocation not in start order at %d", k)
			}
		}
		// n log2 n is about 130k for 10k; a list insert makes n²/2 = 50M.
		if p.Compares > 40*n {
			t.Errorf("ordering %d acquires took %d comparisons: quadratic", n, p.Compares)
		}
	})
}

// walkInherited is the definition of inheritedValues for one span: its own
// value of key, else its nearest ancestor's, -1 when none has one.
func walkInherited(x *index.Index, i int32, key uint16) int32 {
	for a := i; a >= 0; a = x.Span(a).Parent {
		if v, ok := x.AttrVal(a, key); ok {
			return v
		}
	}
	return -1
}

func TestInheritedValuesMatchAncestorWalks(t *testing.T) {
	cases := []struct {
		name  string
		build func(*rand.Rand) ptrace.Traces
	}{
		{"random forests", func(rng *rand.Rand) ptrace.Traces { return randomForest(rng, 4, 1+rng.IntN(80)) }},
		// Span ids fall with depth, so the deepest spans are resolved
		// first: each walk goes up to a valued ancestor.
		{"a deep chain valued near the root", func(*rand.Rand) ptrace.Traces {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "svc")
			parent := uint64(0)
			for k := 0; k < 5000; k++ {
				s := sp{trace: 1, id: uint64(10000 - k), name: "a", parent: parent, end: time.Hour}
				if k == 3 || k == 4000 {
					s.attrs = []any{"v", fmt.Sprint(k)}
				}
				parent = d.add(ss, s)
			}
			return d.td
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 9))
			for round := 0; round < 20; round++ {
				x := index.New(rulefmt.IndexOptions{SpanAttrs: []string{"v"}})
				x.Add(tc.build(rng))
				key, _ := x.LookupKey("v")
				got := x.InheritedValues(key)
				valued := 0
				for _, i := range askOrder(rng, x) {
					want := walkInherited(x, i, key)
					if got := got.At(i); got != want {
						t.Fatalf("round %d: span %d inherits %d, its ancestors give %d", round, i, got, want)
					}
					if want >= 0 {
						valued++
					}
				}
				if valued == 0 {
					t.Fatalf("round %d: no span inherits a value: the case tests nothing", round)
				}
			}
		})
	}
}

// walkRoot is the definition of Index.Roots: the parents of i followed one
// by one to a root (returned) or to a missing parent (-1).
func walkRoot(x *index.Index, i int32) int32 {
	for {
		switch p := x.Span(i).Parent; {
		case p == index.ParentNone:
			return i
		case p < 0:
			return -1
		default:
			i = p
		}
	}
}

func TestRootsMatchParentWalks(t *testing.T) {
	cases := []struct {
		name        string
		wantMissing bool // some chain ends at a missing parent
		build       func(*rand.Rand) ptrace.Traces
	}{
		{"random forests", true, func(rng *rand.Rand) ptrace.Traces { return randomForest(rng, 4, 1+rng.IntN(80)) }},
		// Span ids fall with depth, so the deepest spans come first in
		// the order: each walk goes up to a span already resolved.
		{"a deep chain", false, func(*rand.Rand) ptrace.Traces {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "svc")
			parent := uint64(0)
			for k := 0; k < 5000; k++ {
				parent = d.add(ss, sp{trace: 1, id: uint64(10000 - k), name: "a", parent: parent, end: time.Hour})
			}
			return d.td
		}},
		// A parent cycle under a root: finish breaks it, and the spans
		// of the cycle and below it end at the break.
		{"a cycle", true, func(*rand.Rand) ptrace.Traces {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "svc")
			d.add(ss, sp{trace: 1, id: 1, name: "root", end: time.Hour})
			d.add(ss, sp{trace: 1, id: 2, name: "a", parent: 3, end: time.Hour})
			d.add(ss, sp{trace: 1, id: 3, name: "b", parent: 2, end: time.Hour})
			d.add(ss, sp{trace: 1, id: 4, name: "c", parent: 3, end: time.Hour})
			d.add(ss, sp{trace: 1, id: 5, name: "d", parent: 1, end: time.Hour})
			return d.td
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 9))
			below, missing := 0, 0 // spans under a root, spans under a missing parent
			for round := 0; round < 20; round++ {
				x := index.New(rulefmt.IndexOptions{})
				x.Add(tc.build(rng))
				got := x.Roots()
				for _, i := range askOrder(rng, x) {
					want := walkRoot(x, i)
					if got := got.At(i); got != want {
						t.Fatalf("round %d: span %d has root %d, its parents give %d", round, i, got, want)
					}
					switch {
					case want < 0:
						missing++
					case want != i:
						below++
					}
				}
			}
			if below == 0 || (missing > 0) != tc.wantMissing {
				t.Fatalf("%d spans under a root, %d under a missing parent: the case does not test what it says", below, missing)
			}
		})
	}
}

// askOrder is x's spans in an order of its own: Roots and InheritedValues
// resolve a span when first asked, and must answer alike whatever spans
// were asked before (odd rounds ask in index order).
func askOrder(rng *rand.Rand, x *index.Index) []int32 {
	order := slices.Clone(x.Order)
	if rng.IntN(2) == 0 {
		rng.Shuffle(len(order), func(a, b int) { order[a], order[b] = order[b], order[a] })
	}
	return order
}
