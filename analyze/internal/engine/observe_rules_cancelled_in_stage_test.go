package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestARuleObservationCancelledInTheVocabularyStageFails pins that the
// vocabulary stage a rule's calls need runs under the observation's
// context: a cancellation that lands while the stage reads the spans (a
// context done from its second look on: the first, at the start, said go;
// the stage looks every few thousand spans) makes ObserveRulesContext
// return the context's error, not observations of a dump read as holding
// no call. One trace of 5000 calls: the stage looks at the context, the
// per-trace loops (one step) do not.
func TestARuleObservationCancelledInTheVocabularyStageFails(t *testing.T) {
	cfg := rulefmt.Config{Profile: rulefmt.ProfileSemconv}
	rules := rulefmt.BuiltinRules(cfg)
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceName, "agent")
	root := b.Add(ss, dumptest.Span{Trace: 1, Name: "agent.run", End: time.Hour})
	for i := range 5000 {
		at := time.Duration(i) * time.Millisecond
		b.Add(ss, dumptest.Span{Trace: 1, Parent: root, Name: "tools/call echo", Kind: ptrace.SpanKindClient, Start: at, End: at + time.Microsecond,
			Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s-1"}})
	}
	d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	d.Add(b.Traces())
	if obs, err := ObserveRulesContext(&doneAfterLooks{Context: context.Background(), looks: 1 << 30}, d, cfg, rules, ObserveOptions{}); err != nil || len(obs) != len(rules) {
		t.Fatalf("a context never done: %d observations of %d rules, err %v", len(obs), len(rules), err)
	}
	ctx := &doneAfterLooks{Context: context.Background(), looks: 2}
	obs, err := ObserveRulesContext(ctx, d, cfg, rules, ObserveOptions{})
	if !errors.Is(err, context.Canceled) || obs != nil {
		t.Errorf("%d observations, err %v after %d looks; want none and context.Canceled", len(obs), err, ctx.n)
	}
}
