package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestObservingRulesUnderACancelledContextFails pins that the rules'
// observation looks at its context before it starts, not only every few
// thousand steps of its loops: over a dump far too small for those to
// look, a context already cancelled makes ObserveRulesContext,
// ObserveRulesOf and AnalyzeRulesContext return its error and no
// observation, where a live one observes every rule.
func TestObservingRulesUnderACancelledContextFails(t *testing.T) {
	cfg := rulefmt.Config{}
	rules := rulefmt.BuiltinRules(cfg)
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := b.Add(ss, dumptest.Span{Trace: 1, Name: spans.SpanInvoke, End: time.Second, Attrs: []any{spans.AttrCacheKey, "k"}})
	b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanAcquire, End: time.Millisecond,
		Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	r, err := Analyze(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if obs, err := ObserveRulesContext(context.Background(), d, cfg, rules, ObserveOptions{}); err != nil || len(obs) != len(rules) {
		t.Fatalf("a live context: %d observations of %d rules, err %v", len(obs), len(rules), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs, err := ObserveRulesContext(ctx, d, cfg, rules, ObserveOptions{})
	if !errors.Is(err, context.Canceled) || obs != nil {
		t.Errorf("ObserveRulesContext: %d observations, err %v; want none and context.Canceled", len(obs), err)
	}
	obs, err = ObserveRulesOf(ctx, d, cfg, rules, ObserveOptions{}, r)
	if !errors.Is(err, context.Canceled) || obs != nil {
		t.Errorf("ObserveRulesOf: %d observations, err %v; want none and context.Canceled", len(obs), err)
	}
	a, err := AnalyzeRulesContext(ctx, d, cfg, rules, ObserveOptions{})
	if !errors.Is(err, context.Canceled) || a != nil {
		t.Errorf("AnalyzeRulesContext: %v, err %v; want none and context.Canceled", a, err)
	}
}
