package gate

import (
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// withRecordedReason returns the unexplained-miss scenario with the pool's
// miss_reason set to reason on its miss that nothing in the timeline
// explains (the only miss without one).
func withRecordedReason(t *testing.T, reason string) ptrace.Traces {
	t.Helper()
	td := tracegen.UnexplainedMiss()
	set := 0
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
			ss := rss.At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				s := ss.At(k)
				hit, _ := s.Attributes().Get(spans.AttrCacheHit)
				if _, has := s.Attributes().Get(spans.AttrMissReason); s.Name() == spans.SpanAcquire && !hit.Bool() && !has {
					s.Attributes().PutStr(spans.AttrMissReason, reason)
					set++
				}
			}
		}
	}
	if set != 1 {
		t.Fatalf("set the reason on %d acquires, want 1", set)
	}
	return td
}

// TestMissAttributionFollowsTheExplainedReasons pins the one definition of an
// explained miss (spans.ExplainedMissReasons) in the analyzer: a reason the
// pool records and the spans cannot show (health_check) explains the miss;
// anything else, evicted included, is unexplained, and the rule's TraceQL is
// the shared spans.TraceQLUnexplainedMiss.
func TestMissAttributionFollowsTheExplainedReasons(t *testing.T) {
	for _, c := range []struct{ recorded, want string }{
		{spans.MissEvicted, spans.MissUnexplained},
		{spans.MissHealthCheck, spans.MissHealthCheck},
		{"somebody_elses_reason", spans.MissUnexplained},
		{spans.MissUnexplained, spans.MissUnexplained},
	} {
		t.Run(c.recorded, func(t *testing.T) {
			r, res := gateEval(t, rulefmt.Config{}, rulefmt.BuiltinRules(rulefmt.Config{}), withRecordedReason(t, c.recorded))
			if r.Pool.MissReasons[c.want] != 1 || r.Pool.MissReasons[spans.MissCold] != 1 {
				t.Errorf("miss_reasons = %v, want cold 1 and %s 1", r.Pool.MissReasons, c.want)
			}
			rule := res[rulefmt.RuleNoUnexplainedMisses]
			if wantPass := c.want != spans.MissUnexplained; (rule.Status == StatusPass) != wantPass {
				t.Errorf("%s = %s (%s)", rule.ID, rule.Status, rule.Found)
			}
			if rule.TraceQL != spans.TraceQLUnexplainedMiss {
				t.Errorf("%s TraceQL = %s, want %s", rule.ID, rule.TraceQL, spans.TraceQLUnexplainedMiss)
			}
		})
	}
	if want := append(slices.Clone(spans.ExplainedMissReasons), spans.MissEvicted, spans.MissUnexplained); !slices.Equal(spans.MissReasons, want) {
		t.Errorf("MissReasons %v is not ExplainedMissReasons %v plus evicted and unexplained", spans.MissReasons, spans.ExplainedMissReasons)
	}
	for i, r := range spans.ExplainedMissReasons {
		if spans.MissReasons[i] != r {
			t.Errorf("MissReasons[%d] = %s, want %s", i, spans.MissReasons[i], r)
		}
	}
}
