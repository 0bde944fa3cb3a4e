package gate

import (
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// coldInitGate loads the shipped seed 003 rule file.
func coldInitGate(t testing.TB) *rulefmt.GateConfig {
	t.Helper()
	gc, err := rulefmt.LoadGateConfig("../../testdata/rules/cold-init.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return gc
}

// keepTraces returns the spans of td whose trace satisfies keep, given the
// names of the trace's spans.
func keepTraces(td ptrace.Traces, keep func(names map[string]bool) bool) ptrace.Traces {
	names := map[[16]byte]map[string]bool{}
	eachSpanOf(td, func(s ptrace.Span) {
		id := [16]byte(s.TraceID())
		if names[id] == nil {
			names[id] = map[string]bool{}
		}
		names[id][s.Name()] = true
	})
	out := ptrace.NewTraces()
	td.CopyTo(out)
	out.ResourceSpans().RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !keep(names[[16]byte(s.TraceID())]) })
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	return out
}

func eachSpanOf(td ptrace.Traces, f func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		sss := td.ResourceSpans().At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			for k := 0; k < sss.At(j).Spans().Len(); k++ {
				f(sss.At(j).Spans().At(k))
			}
		}
	}
}

// TestColdInitRuleOnTheSeedDumps is the seeds' cold-init rule (exactly one
// organizations read per initialize request, judged once the worker's span
// has landed) against the cold-init dumps of testdata/traces.
func TestColdInitRuleOnTheSeedDumps(t *testing.T) {
	gc := coldInitGate(t)
	cfg := rulefmt.Config{Measures: gc.Measures}
	cases := []struct {
		dump                    string
		status, measure         Status
		scopes, failed, incompl int
		examples                int
		foundHas                string
	}{
		{"cold-init-one-read", StatusPass, StatusPass, 3, 0, 0, 0, "holds in all 3 subtrees judged"},
		{"cold-init-two-reads", StatusFail, StatusFail, 3, 3, 0, 3, "count = 2 in 3 of 3 subtrees"},
		// T3's worker plane never landed: not judged; T4 has no request root.
		{"cold-init-incomplete", StatusFail, StatusFail, 3, 2, 1, 2, "count = 2 in 2 of 2 subtrees; 1 incomplete, not judged"},
	}
	for _, c := range cases {
		t.Run(c.dump, func(t *testing.T) {
			_, res := gateEvalFile(t, cfg, gc.Rules, tracesDir+"/"+c.dump+".otlp.jsonl")
			r := res["one-org-read-per-cold-init"]
			if r.Status != c.status || r.Scopes != c.scopes || r.Failed != c.failed || r.Incomplete != c.incompl {
				t.Errorf("rule = %s scopes %d failed %d incomplete %d, want %s %d %d %d", r.Status, r.Scopes, r.Failed, r.Incomplete, c.status, c.scopes, c.failed, c.incompl)
			}
			if !strings.Contains(r.Found, c.foundHas) {
				t.Errorf("found = %q, want it to say %q", r.Found, c.foundHas)
			}
			if len(r.Examples) != c.examples {
				t.Errorf("examples = %+v, want %d (the request roots)", r.Examples, c.examples)
			}
			if m := res["org-reads-measure-has-no-surprises"]; m.Status != c.measure {
				t.Errorf("measure rule = %s (%s), want %s", m.Status, m.Found, c.measure)
			}
		})
	}
}

// TestColdInitRuleIsIncompleteUntilTheWorkerLands: a dump holding only the
// request whose worker span never landed is neither a pass nor a fail.
func TestColdInitRuleIsIncompleteUntilTheWorkerLands(t *testing.T) {
	gc := coldInitGate(t)
	onlyT3 := keepTraces(tracegen.ColdInitIncomplete(), func(n map[string]bool) bool { return n["mcp.request"] && !n["worker.fetch"] })
	if onlyT3.SpanCount() != 4 {
		t.Fatalf("filtered dump holds %d spans, want T3's 4", onlyT3.SpanCount())
	}
	r, res := gateEval(t, rulefmt.Config{Measures: gc.Measures}, gc.Rules, onlyT3)
	for _, id := range []string{"one-org-read-per-cold-init", "org-reads-measure-has-no-surprises"} {
		if res[id].Status != StatusIncomplete {
			t.Errorf("%s = %s (%s), want incomplete", id, res[id].Status, res[id].Found)
		}
	}
	check := NewCheckReport(r, []RuleResult{res["one-org-read-per-cold-init"], res["org-reads-measure-has-no-surprises"]}, nil, "")
	if check.Verdict != StatusIncomplete || check.ExitCode != ExitIncomplete {
		t.Errorf("verdict %s exit %d, want incomplete 3", check.Verdict, check.ExitCode)
	}
}

// TestRuleScopesAndAncestorConditions pins how scopes split spans and how
// under / not_under look only below a subtree's root.
func TestRuleScopesAndAncestorConditions(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("f.yaml", []byte(`
rules:
  - id: dump-reads
    scope: dump
    select: {name: db.query, attributes: {db.sql.table: organizations}}
    expect: {of: count, op: "==", than: 6}
  - id: trace-reads
    scope: trace
    select: {name: db.query, attributes: {db.sql.table: organizations}}
    expect: {of: count, op: "==", than: 2}
  - id: worker-reads-per-request
    scope: {subtree: mcp.request}
    select: {name: db.query, attributes: {db.sql.table: organizations}, under: worker.fetch}
    expect: {of: count, op: "==", than: 1}
  - id: do-reads-per-request
    scope: {subtree: mcp.request}
    select: {name: db.query, not_under: worker.fetch}
    expect: {of: distinct, attribute: db.sql.table, op: "==", than: 2}
  - id: not-under-the-root-itself
    scope: {subtree: mcp.request}
    select: {name: db.query, not_under: mcp.request}
    expect: {of: count, op: "==", than: 3}
  - id: per-do-fetch
    scope: {subtree: durable_object.fetch}
    select: db.query
    expect: {of: count, op: ">=", than: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, res := gateEval(t, rulefmt.Config{}, gc.Rules, tracegen.ColdInitTwoReads())
	for _, id := range []string{"dump-reads", "trace-reads", "worker-reads-per-request", "do-reads-per-request", "not-under-the-root-itself", "per-do-fetch"} {
		r := res[id]
		if r.Status != StatusPass {
			t.Errorf("%s = %s: %s", id, r.Status, r.Found)
		}
	}
	if n := res["trace-reads"].Scopes; n != 3 {
		t.Errorf("trace scopes = %d, want 3", n)
	}
	if n := res["per-do-fetch"].Scopes; n != 3 {
		t.Errorf("subtree scopes = %d, want 3", n)
	}
}

// TestRuleExamplesAreCapped: --max-examples bounds the list; a negative cap
// names none.
func TestRuleExamplesAreCapped(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	idx := analyze.NewDump(rulefmt.MergeIndexOptions(rulefmt.Config{}.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	idx.Add(tracegen.PerCallDial())
	for _, c := range []struct{ max, want int }{{2, 2}, {0, 5}, {-1, 0}} {
		unexplained := slices.DeleteFunc(slices.Clone(rules), func(r rulefmt.Rule) bool { return r.ID != rulefmt.RuleNoUnexplainedMisses })
		_, res := evaluate(t, idx, rulefmt.Config{}, unexplained, c.max)
		if got := len(res[0].Examples); got != c.want {
			t.Errorf("MaxExamples %d: %d examples, want %d", c.max, got, c.want)
		}
	}
}

// TestMeasureRulesCompareMeasures covers measure bounds, tolerance and a
// measure without data.
func TestMeasureRulesCompareMeasures(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("f.yaml", []byte(`
rules:
  - id: floor
    scope: dump
    expect: [{of: hit_rate, op: ">=", than: 0.8}, {of: handshakes, op: "==", than: misses}]
  - id: strict-floor
    scope: dump
    expect: {of: hit_rate, op: ">=", than: 0.9}
  - id: loose-floor
    scope: dump
    expect: {of: hit_rate, op: ">=", than: 0.9, tolerance: 0.1}
  - id: no-data
    scope: dump
    expect: {of: acquire_hit.p99, op: "<", than: 5}
`))
	if err != nil {
		t.Fatal(err)
	}
	_, res := gateEval(t, rulefmt.Config{}, gc.Rules, tracegen.Pooled())
	want := map[string]Status{"floor": StatusPass, "strict-floor": StatusFail, "loose-floor": StatusPass}
	for id, st := range want {
		if res[id].Status != st {
			t.Errorf("%s = %s (%s), want %s", id, res[id].Status, res[id].Found, st)
		}
	}
	if got := res["floor"].Found; got != "hit_rate = 0.8333333333333334, handshakes = 1 (misses = 1)" {
		t.Errorf("found = %q", got)
	}
	_, res = gateEval(t, rulefmt.Config{}, gc.Rules, tracegen.ColdInitOneRead())
	if res["no-data"].Status != StatusIncomplete || res["floor"].Status != StatusIncomplete {
		t.Errorf("without acquires: no-data %s, floor %s; want incomplete", res["no-data"].Status, res["floor"].Status)
	}
}

// TestTraceQLRendersSelectors pins the Tempo queries of selectors and rules.
func TestTraceQLRendersSelectors(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("f.yaml", []byte(`
rules:
  - id: a
    scope: trace
    select:
      name_regex: '^plugin\.'
      kind: client
      status: error
      attributes: {plugin.mcp.cache_hit: "true", plugin.mcp.attempt: 2, error.type: {not_equals: tool_error}, mcp.session.id: {exists: false}}
      resource: {service.name: {regex: 'gw-.*'}}
      under: plugin.mcp.invoke
      not_under: {name: x}
    expect: {of: count, op: "<=", than: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	sel := gc.Rules[0].Select
	wantSelf := `{ name =~ "^plugin\\." && span.error.type != "tool_error" && span.mcp.session.id = nil && span.plugin.mcp.attempt = 2 && span.plugin.mcp.cache_hit = true && resource.service.name =~ "gw-.*" && kind = client && status = error }`
	if got := sel.Selector.TraceQL(); got != wantSelf {
		t.Errorf("selector:\n got %s\nwant %s", got, wantSelf)
	}
	if got := sel.TraceQL(); !strings.HasPrefix(got, `{ name = "plugin.mcp.invoke" } >> {`) || !strings.Contains(got, `&& { name = "x" } !>> {`) {
		t.Errorf("span selector = %s", got)
	}
	_, res := gateEval(t, rulefmt.Config{}, gc.Rules, tracegen.Pooled())
	if got := res["a"].TraceQL; !strings.HasSuffix(got, "| count() > 1") {
		t.Errorf("rule query %q: want the per-trace count pipeline", got)
	}
}

// TestEvaluateRefusesObservationsOfOtherRules: observations that do not
// line up with the rules are an error, never a verdict.
func TestEvaluateRefusesObservationsOfOtherRules(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	if _, err := Evaluate(&report.Analysis{Report: &report.Report{}}, rules); err == nil {
		t.Error("Evaluate judged rules without their observations")
	}
	obs := make([]report.RuleObservation, len(rules))
	obs[0].Groups = []report.ScopeGroup{{Scopes: 1, Complete: true, Values: make([]float64, len(rules[0].Expect)+1), Offenders: make([][]report.SpanRef, len(rules[0].Expect)+1)}}
	if _, err := Evaluate(&report.Analysis{Report: &report.Report{}, Rules: obs}, rules); err == nil {
		t.Error("Evaluate judged an observation of another rule's expectations")
	}
}
