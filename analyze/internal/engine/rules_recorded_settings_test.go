package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestARuleNamesMissesAsTheScopesRecordedSettingsAttributeThem pins that
// the misses a rule names (no_unexplained_misses' examples) are attributed
// under the settings the scope recorded on its acquire spans, as the
// report's counts are: a key idle for longer than the recorded TTL (10 s)
// but not the assumed one (5 min) misses for ttl, which is no unexplained
// miss to name. Without recorded settings the same miss is unexplained
// (the control).
func TestARuleNamesMissesAsTheScopesRecordedSettingsAttributeThem(t *testing.T) {
	cfg := rulefmt.Config{}
	rules := rulefmt.BuiltinRules(cfg)
	for _, tc := range []struct {
		recorded    bool
		cause       string
		unexplained int
	}{
		{true, spans.MissTTL, 0},
		{false, spans.MissUnexplained, 1},
	} {
		t.Run(fmt.Sprintf("recorded %v", tc.recorded), func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent", spans.ResourceServiceInstanceID, "gw-1")
			for i := range 2 {
				at := time.Duration(i) * 20 * time.Second
				attrs := []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}
				if tc.recorded {
					attrs = append(attrs, spans.AttrPoolIdleTTL, "10", spans.AttrPoolMaxIdlePerKey, "1", spans.AttrPoolIdleSizing, spans.IdleSizingFixed,
						spans.AttrPoolMaxIdle, "64", spans.AttrPoolSweepInterval, "60")
				}
				inv := b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanInvoke, Start: at, End: at + time.Second,
					Attrs: []any{spans.AttrCacheKey, "k"}})
				b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond, Attrs: attrs})
			}
			d := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
			d.Add(b.Traces())
			a, err := AnalyzeRules(d, cfg, rules, ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := a.Report.Pool.MissReasons[tc.cause]; got != 1 {
				t.Fatalf("%s misses = %d, want 1 (all: %v)", tc.cause, got, a.Report.Pool.MissReasons)
			}
			for i, r := range rules {
				if r.ID == rulefmt.RuleNoUnexplainedMisses {
					if got := len(a.Rules[i].UnexplainedMisses); got != tc.unexplained {
						t.Errorf("%s names %d unexplained misses, want %d", r.ID, got, tc.unexplained)
					}
					return
				}
			}
			t.Fatalf("no rule %s among the built-in rules", rulefmt.RuleNoUnexplainedMisses)
		})
	}
}
