package engine

import (
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestMaxExamplesCapsTheOffendersNamed pins ObserveOptions.MaxExamples: a
// rule failing on three spans names the first one at 1, all three at 5,
// and none at a negative value.
func TestMaxExamplesCapsTheOffendersNamed(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - {id: no-misses, scope: dump, select: {name: `+spans.SpanAcquire+`, attributes: {`+spans.AttrCacheHit+`: false}}, expect: {of: count, op: "==", than: 0}}
`))
	if err != nil {
		t.Fatal(err)
	}
	rules := gc.Rules
	cfg := rulefmt.Config{}
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	for tr := uint64(1); tr <= 3; tr++ {
		inv := b.Add(ss, dumptest.Span{Trace: tr, Name: spans.SpanInvoke, End: time.Second, Attrs: []any{spans.AttrCacheKey, "k"}})
		b.Add(ss, dumptest.Span{Trace: tr, Parent: inv, Name: spans.SpanAcquire, End: time.Millisecond,
			Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
	}
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	for _, c := range []struct{ max, want int }{{-1, 0}, {1, 1}, {5, 3}} {
		obs, err := ObserveRulesContext(context.Background(), d, cfg, rules, ObserveOptions{MaxExamples: c.max})
		if err != nil {
			t.Fatal(err)
		}
		named := 0
		for _, g := range obs[0].Groups {
			for _, offs := range g.Offenders {
				named += len(offs)
			}
		}
		if named != c.want {
			t.Errorf("MaxExamples %d: %d offenders named, want %d", c.max, named, c.want)
		}
	}
}

// TestAFailingScopeWithoutOffendersNamesItsRoot pins the example a scope
// is named by when it fails with no offending span to show (too few
// calls): a subtree by its root, though that root has a parent; a trace
// by its root span.
func TestAFailingScopeWithoutOffendersNamesItsRoot(t *testing.T) {
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	run := b.Add(ss, dumptest.Span{Trace: 1, ID: 10, Name: "agent.run", End: time.Minute})
	step := b.Add(ss, dumptest.Span{Trace: 1, ID: 11, Parent: run, Name: "agent.step", Start: time.Second, End: 30 * time.Second})
	b.Add(ss, dumptest.Span{Trace: 1, ID: 12, Parent: step, Name: "work", Start: 2 * time.Second, End: 3 * time.Second})
	for _, c := range []struct {
		scope string
		want  uint64 // the span id named
	}{{"{subtree: {name: agent.step}}", 11}, {"trace", 10}} {
		gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - {id: calls, scope: `+c.scope+`, select: {name: `+spans.SpanCallTool+`}, expect: {of: count, op: ">=", than: 1}}
`))
		if err != nil {
			t.Fatal(err)
		}
		cfg := rulefmt.Config{}
		d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(gc.Rules)))
		d.Add(b.Traces())
		obs, err := ObserveRulesContext(context.Background(), d, cfg, gc.Rules, ObserveOptions{MaxExamples: 5})
		if err != nil {
			t.Fatal(err)
		}
		var named []uint64
		for _, g := range obs[0].Groups {
			for _, ex := range g.Examples {
				named = append(named, binary.BigEndian.Uint64(ex.Span[:]))
			}
		}
		if len(named) != 1 || named[0] != c.want {
			t.Errorf("scope %s: examples named spans %v, want [%d]", c.scope, named, c.want)
		}
	}
}
