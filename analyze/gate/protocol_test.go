package gate

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// TestSessionRulesNeverApplyToSessionlessExecutions pins the analyzer side of
// MCP 2026-07-28: executions whose calls carry that revision and no session
// id are never judged by the session rules (they would fail with 0
// sessions), the stateful executions of the same dump still are, and the
// report groups its figures by revision with the sessionless cold start.
func TestSessionRulesNeverApplyToSessionlessExecutions(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  rulefmt.Config
	}{
		{"by trace", rulefmt.Config{}},
		{"by execution root", rulefmt.Config{ExecutionRoot: &rulefmt.Selector{Name: "executor.execute"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, res := gateEval(t, c.cfg, rulefmt.BuiltinRules(c.cfg), tracegen.Sessionless())
			one := res[rulefmt.RuleOneSessionPerExecution]
			if one.Status != StatusFail || one.Scopes != 3 || one.Failed != 1 || one.NotApplicable != 3 {
				t.Errorf("%s = %s, scopes %d, failed %d, not applicable %d (%s); want the 3 stateful judged (1 failing) and 3 sessionless left out",
					one.ID, one.Status, one.Scopes, one.Failed, one.NotApplicable, one.Found)
			}
			if !strings.Contains(one.Found, "3 ") || !strings.Contains(one.Found, "against sessionless servers (MCP 2026-07-28 or later), not applicable") {
				t.Errorf("%s found = %q", one.ID, one.Found)
			}
			if lost := res[rulefmt.RuleServerKeptSessions]; lost.NotApplicable != 3 || lost.Status != StatusPass {
				t.Errorf("%s = %+v", lost.ID, lost)
			}
			if len(r.ByProtocol) != 2 {
				t.Fatalf("by_protocol = %+v, want 2025-11-25 and 2026-07-28", r.ByProtocol)
			}
			old, modern := r.ByProtocol[0], r.ByProtocol[1]
			if old.ProtocolVersion != tracegen.ProtocolStateful || old.Sessionless || old.Traces != 3 || old.Calls != 6 || old.Acquires != 6 || old.Misses != 3 || old.ColdStart.Count != 3 {
				t.Errorf("stateful revision = %+v", old)
			}
			if modern.ProtocolVersion != tracegen.ProtocolSessionless || !modern.Sessionless || modern.Traces != 3 || modern.Acquires != 6 || modern.Hits != 5 || modern.ColdStart.Count != 1 || modern.ColdStart.P50 == nil {
				t.Errorf("sessionless revision = %+v", modern)
			}
			var table bytes.Buffer
			if err := render.Table(&table, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.ToLower(table.String()), "by protocol revision") || !strings.Contains(table.String(), "2026-07-28 is sessionless: the session rules do not apply") {
				t.Errorf("table lacks the revisions:\n%s", table.String())
			}
		})
	}
}

// TestOnlySessionlessExecutionsPassTheSessionRules: a dump whose every
// execution is sessionless leaves the session rules nothing to apply to,
// which is a pass saying so, not a failure over 0 sessions.
func TestOnlySessionlessExecutionsPassTheSessionRules(t *testing.T) {
	td := tracegen.Sessionless()
	modern := map[pcommon.TraceID]bool{}
	eachSpan(td, func(s ptrace.Span) {
		if v, ok := s.Attributes().Get(spans.AttrProtocolVersion); ok && v.Str() == tracegen.ProtocolSessionless {
			modern[s.TraceID()] = true
		}
	})
	td.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !modern[s.TraceID()] })
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	_, res := gateEval(t, rulefmt.Config{}, rulefmt.BuiltinRules(rulefmt.Config{}), td)
	for _, id := range []string{rulefmt.RuleOneSessionPerExecution, rulefmt.RuleServerKeptSessions} {
		r := res[id]
		if r.Status != StatusPass || r.Scopes != 0 || r.NotApplicable != 3 || !strings.HasPrefix(r.Found, "3 traces against sessionless servers") {
			t.Errorf("%s = %s, scopes %d, not applicable %d (%s); want a pass over 3 sessionless traces", id, r.Status, r.Scopes, r.NotApplicable, r.Found)
		}
	}
}

// eachSpan calls f on every span of td.
func eachSpan(td ptrace.Traces, f func(ptrace.Span)) {
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
			ss := rss.At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				f(ss.At(k))
			}
		}
	}
}
