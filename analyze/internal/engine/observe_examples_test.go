package engine

import (
	"context"
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
