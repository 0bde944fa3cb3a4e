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

// doneAfterLooks is a context that is done from its looks-th Err on: a
// cancellation that lands while an observation runs, at a given look.
type doneAfterLooks struct {
	context.Context
	looks, n int
}

func (c *doneAfterLooks) Done() <-chan struct{} { return make(chan struct{}) }

func (c *doneAfterLooks) Err() error {
	c.n++
	if c.n >= c.looks {
		return context.Canceled
	}
	return nil
}

// TestAnObservationCancelledAfterItStartedStops pins that the rules'
// observation looks at its context again after its start, as it compiles
// a rule's name_regex selector, not only every few thousand steps: a
// context done from its second look on (the first said go) makes
// ObserveRulesContext return its error over a dump far too small for the
// loops' periodic looks, where one never done observes the rule.
func TestAnObservationCancelledAfterItStartedStops(t *testing.T) {
	cfg := rulefmt.Config{}
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - {id: few-calls, scope: dump, select: {name_regex: '^tools/'}, expect: {of: count, op: "<=", than: 10}}
`))
	if err != nil {
		t.Fatal(err)
	}
	rules := gc.Rules
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	b.Add(ss, dumptest.Span{Trace: 1, Name: "tools/call echo", End: time.Second})
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	if obs, err := ObserveRulesContext(&doneAfterLooks{Context: context.Background(), looks: 1 << 30}, d, cfg, rules, ObserveOptions{}); err != nil || len(obs) != 1 {
		t.Fatalf("a context never done: %d observations, err %v; want 1", len(obs), err)
	}
	ctx := &doneAfterLooks{Context: context.Background(), looks: 2}
	obs, err := ObserveRulesContext(ctx, d, cfg, rules, ObserveOptions{})
	if !errors.Is(err, context.Canceled) || obs != nil {
		t.Errorf("%d observations, err %v after %d looks; want none and context.Canceled", len(obs), err, ctx.n)
	}
}

// TestAnObservationLooksAtItsContextRarely pins the other half of
// cancellation: the observation's loops look at the context once every
// few hundred steps or fewer, not at every step (each look takes a lock in
// a real context). Over 20 000 spans a rule walks, a context never done is
// asked at most 20 000/256 times, and at least once.
func TestAnObservationLooksAtItsContextRarely(t *testing.T) {
	cfg := rulefmt.Config{}
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`rules:
  - {id: few-calls, scope: trace, select: {name_regex: '^tools/'}, expect: {of: count, op: "<=", than: 10}}
`))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	for i := range uint64(n) {
		b.Add(ss, dumptest.Span{Trace: 1 + i, Name: "tools/call echo", End: time.Second})
	}
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(gc.Rules)))
	d.Add(b.Traces())
	ctx := &doneAfterLooks{Context: context.Background(), looks: 1 << 30}
	if _, err := ObserveRulesContext(ctx, d, cfg, gc.Rules, ObserveOptions{}); err != nil {
		t.Fatal(err)
	}
	if ctx.n < 1 || ctx.n > n/256 {
		t.Errorf("the context was asked %d times over %d traces; want between 1 and %d", ctx.n, n, n/256)
	}
}
