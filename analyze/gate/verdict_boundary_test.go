package gate

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// checkOf loads one scenario's dump (OTLP JSON), judges the rules of doc
// (a mcptrace.yaml) on it and returns the check report, as mcptrace check
// does without a baseline.
func checkOf(t *testing.T, scenario, doc string) (*CheckReport, map[string]RuleResult) {
	t.Helper()
	// The scenarios' reads measure is declared, so a rule may name it.
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(tracegen.ColdInitMeasureYAML+doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg := dumptest.ScenarioConfig(t, scenario)
	r, byID := gateEvalFile(t, cfg, gc.Rules, filepath.Join(tracesDir, scenario+".otlp.json"))
	var results []RuleResult
	for _, rule := range gc.Rules {
		results = append(results, byID[rule.ID])
	}
	return NewCheckReport(r, results, nil, ""), byID
}

func renderCheck(t *testing.T, c *CheckReport, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := c.Render(&b, format); err != nil {
		t.Fatalf("Render(%s): %v", format, err)
	}
	return b.String()
}

// TestRulesOnADumpWithoutPoolSpans pins what a dump without pool spans
// (cold-init-two-reads: traces and database reads, no acquire) does to
// each kind of rule: a dump rule comparing a pool measure, by its value or
// by its bound (which holds: a failure would win), has nothing to judge and
// says why; a reads measure, a trace-scoped count and a trace-scoped count
// bounded by a pool measure are judged as on any dump (only a dump scope
// has nothing to judge); and the check says once
// that no pool span was found.
func TestRulesOnADumpWithoutPoolSpans(t *testing.T) {
	c, res := checkOf(t, "cold-init-two-reads", `
rules:
  - id: pool-measure
    scope: dump
    expect: {of: hit_rate, op: ">=", than: 0.5}
  - id: pool-bound
    scope: dump
    select: db.query
    expect: {of: count, op: ">=", than: misses}
  - id: reads-measure
    scope: dump
    expect: {of: measures.org_reads_per_cold_init.unexpected, op: "<=", than: 5}
  - id: reads-per-trace
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: 1}
  - id: trace-pool-bound
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: misses}
  - id: pool-measure-allowed
    scope: dump
    allow_empty: true
    expect: {of: hit_rate, op: ">=", than: 0.5}
`)
	const noPool = "nothing to judge: no pool spans in the dump"
	for _, tc := range []struct {
		id     string
		status Status
		found  string
	}{
		{"pool-measure", StatusIncomplete, noPool},
		{"pool-bound", StatusIncomplete, noPool},
		{"reads-measure", StatusPass, "measures.org_reads_per_cold_init.unexpected = 3"},
		{"reads-per-trace", StatusPass, "3 traces"},
		{"trace-pool-bound", StatusPass, "3 traces"},
		{"pool-measure-allowed", StatusPass, noPool + " (allowed: allow_empty)"},
	} {
		r := res[tc.id]
		if r.Status != tc.status || !strings.Contains(r.Found, tc.found) {
			t.Errorf("%s: %s %q, want %s %q", tc.id, r.Status, r.Found, tc.status, tc.found)
		}
	}
	if c.Verdict != StatusIncomplete || c.Counts.Incomplete != 2 || c.Counts.Pass != 4 {
		t.Errorf("verdict %s counts %+v, want incomplete with 2 incomplete and 4 passed", c.Verdict, c.Counts)
	}
	if len(c.IncompleteReasons) != 1 || !strings.HasPrefix(c.IncompleteReasons[0], "no pool spans found") {
		t.Errorf("incomplete reasons %q, want one saying no pool spans were found", c.IncompleteReasons)
	}
}

// TestNothingToJudgeSaysWhy pins the finding of a rule with no scope on a
// dump with pool spans: no pool-span wording, the subtree root that
// matched no span named, and a rule reading no pool measure says only
// that nothing was judged.
func TestNothingToJudgeSaysWhy(t *testing.T) {
	_, res := checkOf(t, "pooled", `
rules:
  - id: no-subtree
    scope: {subtree: no.such.span}
    select: db.query
    expect: {of: count, op: "==", than: 0}
  - id: pool-on-a-pooled-dump
    scope: dump
    expect: {of: hit_rate, op: ">=", than: 0.1}
`)
	if r := res["no-subtree"]; r.Status != StatusIncomplete || strings.Contains(r.Found, "pool spans") || !strings.HasPrefix(r.Found, "nothing to judge") {
		t.Errorf("no-subtree: %s %q, want incomplete, nothing to judge without pool spans named", r.Status, r.Found)
	}
	// The scope's root selector is named: a rule written for another
	// writer's span names says which of them the dump lacks.
	if r := res["no-subtree"]; !strings.Contains(r.Found, "no span matches the scope's root [name=no.such.span]") {
		t.Errorf("no-subtree: %q, want the root selector that matched nothing named", r.Found)
	}
	if r := res["pool-on-a-pooled-dump"]; r.Status != StatusPass || strings.Contains(r.Found, "nothing to judge") {
		t.Errorf("pool-on-a-pooled-dump: %s %q, want pass, judged", r.Status, r.Found)
	}
}

// TestDumpCountFindingSaysHoldsOrIncomplete pins a dump-scoped count or
// distinct rule's finding, exactly: "holds" alone when it holds; the
// failing quantity and its value when it fails, count and distinct alike;
// "the dump is incomplete" when complete_when matched nothing; and a
// failure wins over nothing to judge on a dump without pool spans.
func TestDumpCountFindingSaysHoldsOrIncomplete(t *testing.T) {
	_, res := checkOf(t, "cold-init-two-reads", `
rules:
  - id: holds
    scope: dump
    select: db.query
    expect: {of: count, op: ">=", than: 1}
  - id: count-fails
    scope: dump
    select: db.query
    expect: {of: count, op: "<=", than: 2}
  - id: distinct-fails
    scope: dump
    select: db.query
    expect: {of: distinct, attribute: db.sql.table, op: "==", than: 0}
  - id: never-complete
    scope: dump
    complete_when: no.such.span
    select: db.query
    expect: {of: count, op: ">=", than: 1}
  - id: pool-bound-fails
    scope: dump
    select: db.query
    expect: {of: count, op: "<=", than: misses}
`)
	for _, tc := range []struct {
		id     string
		status Status
		found  string
	}{
		{"holds", StatusPass, "holds"},
		{"count-fails", StatusFail, "count = 9"},
		{"distinct-fails", StatusFail, "distinct(db.sql.table) = 2"},
		{"never-complete", StatusIncomplete, "the dump is incomplete: no span matches complete_when [name=no.such.span]"},
		{"pool-bound-fails", StatusFail, "count = 9"},
	} {
		if r := res[tc.id]; r.Status != tc.status || r.Found != tc.found {
			t.Errorf("%s: %s %q, want %s %q", tc.id, r.Status, r.Found, tc.status, tc.found)
		}
	}
}

// TestVerdictWordsOfEachStatusAndSeverity pins how the table and the CI
// Markdown name a rule's status: a failed warning is WARN / ⚠️ warning, a
// failed error FAIL / ❌, incomplete and pass as such; the verdict line
// counts only what is there (no "0 failed"); a failing rule's TraceQL is
// shown as a Tempo link, a rule without one has no Tempo line; and only a
// failed rule with examples gets an examples block.
func TestVerdictWordsOfEachStatusAndSeverity(t *testing.T) {
	c, res := checkOf(t, "unexplained-miss", `
rules:
  - id: err-fails
    scope: dump
    expect: {of: unexplained_misses, op: "==", than: 0}
  - id: warn-fails
    severity: warning
    scope: dump
    expect: {of: unexplained_misses, op: "==", than: 0}
  - id: warn-passes
    severity: warning
    scope: dump
    expect: {of: acquires, op: ">=", than: 1}
  - id: err-incomplete
    scope: {subtree: no.such.span}
    select: db.query
    expect: {of: count, op: "==", than: 0}
`)
	if len(res["err-fails"].Examples) == 0 || res["err-fails"].TraceQL == "" {
		t.Fatalf("err-fails has no examples or TraceQL: %+v", res["err-fails"])
	}
	table := renderCheck(t, c, CheckTable)
	for _, want := range []string{
		"│ FAIL       │ error    │ err-fails ", "│ WARN       │ warning  │ warn-fails ",
		"│ pass       │ warning  │ warn-passes ", "│ INCOMPLETE │ error    │ err-incomplete ",
		"\nFAIL err-fails\n", "\nWARN warn-fails\n", "\nINCOMPLETE err-incomplete\n",
		"  Tempo: " + res["err-fails"].TraceQL + "\n",
		"verdict: FAIL (1 passed, 1 failed, 1 warning(s), 1 incomplete)",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "\npass warn-passes") {
		t.Errorf("a passing rule is detailed:\n%s", table)
	}
	md := renderCheck(t, c, CheckMarkdown)
	for _, want := range []string{
		"| ❌ fail | error | `err-fails` |", "| ⚠️ warning | warning | `warn-fails` |",
		"| ✅ pass | warning | `warn-passes` |", "| ⏳ incomplete | error | `err-incomplete` |",
		"<code>err-fails</code>: ", "<code>warn-fails</code>: ",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "<code>err-incomplete</code>") || strings.Contains(md, "<code>warn-passes</code>") {
		t.Errorf("a rule that did not fail has an examples block:\n%s", md)
	}
	pass, _ := checkOf(t, "pooled", "rules:\n  - id: ok\n    scope: dump\n    expect: {of: acquires, op: \">=\", than: 1}\n")
	if line := pass.verdictLine(); line != "verdict: PASS (1 passed)" {
		t.Errorf("verdict line %q, want only what is there", line)
	}
	if table := renderCheck(t, pass, CheckTable); strings.Contains(table, "Tempo:") {
		t.Errorf("a passing check has a Tempo line:\n%s", table)
	}
}

// TestEvaluateRejectsAnObservationOfOtherExpectations pins Evaluate's
// contract check: a complete group holding values or offenders for another
// number of expectations than its rule has is an error naming the rule,
// not a verdict read from the wrong values; an incomplete group holds none.
func TestEvaluateRejectsAnObservationOfOtherExpectations(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`
rules:
  - id: two
    scope: trace
    select: db.query
    expect: [{of: count, op: ">=", than: 1}, {of: count, op: "<=", than: 9}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		group   report.ScopeGroup
		wantErr bool
	}{
		{"both match", report.ScopeGroup{Scopes: 1, Complete: true, Values: []float64{2, 2}, Offenders: make([][]report.SpanRef, 2)}, false},
		{"values short", report.ScopeGroup{Scopes: 1, Complete: true, Values: []float64{2}, Offenders: make([][]report.SpanRef, 2)}, true},
		{"offenders short", report.ScopeGroup{Scopes: 1, Complete: true, Values: []float64{2, 2}, Offenders: make([][]report.SpanRef, 1)}, true},
		{"incomplete holds none", report.ScopeGroup{Scopes: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &report.Analysis{Report: &report.Report{PoolSpans: 1}, Rules: []report.RuleObservation{{Groups: []report.ScopeGroup{tc.group}}}}
			_, err := Evaluate(a, gc.Rules)
			if (err != nil) != tc.wantErr || (err != nil && !strings.Contains(err.Error(), `rule "two"`)) {
				t.Errorf("Evaluate error %v, want an error naming the rule: %v", err, tc.wantErr)
			}
		})
	}
}

// TestAMeasureThatMustNotAppearRegressesOnlyFromZero pins BaselineAppear
// (multi-session executions): a regression when the baseline had none and
// the dump has some, never when the baseline already had some.
func TestAMeasureThatMustNotAppearRegressesOnlyFromZero(t *testing.T) {
	for _, tc := range []struct {
		base, cur int
		regresses bool
	}{
		{0, 0, false},
		{0, 1, false}, // one execution in 40: noise (p=1)
		{0, 10, true},
		{1, 10, false},
		{2, 0, false},
	} {
		base, cur := scenarioReport(t, "pooled"), scenarioReport(t, "pooled")
		base.Executions.MultiSession, cur.Executions.MultiSession = tc.base, tc.cur
		base.Executions.Count, cur.Executions.Count = 40, 40
		var got bool
		for _, g := range Regressions(base, cur, rulefmt.DefaultTolerances()) {
			got = got || g.Measure == "multi_session_executions"
		}
		if got != tc.regresses {
			t.Errorf("multi-session %d → %d of 40: regression %v, want %v", tc.base, tc.cur, got, tc.regresses)
		}
	}
}

// scenarioReport reads a scenario's analyzer golden as a baseline is read.
func scenarioReport(t *testing.T, scenario string) *report.Report {
	t.Helper()
	r, err := ReadBaseline(filepath.Join(tracesDir, scenario+".otlp.json.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestOnlyAFailedRuleListsItsExamples pins the CI Markdown's examples
// blocks: a failed rule with examples gets one, a failed rule without
// examples none, and a rule that did not fail none even when its result
// carries examples (a result read back, or a future judge's).
func TestOnlyAFailedRuleListsItsExamples(t *testing.T) {
	ex := []Example{{TraceID: "t1", TraceQL: `{ trace:id = "t1" }`}}
	results := []RuleResult{
		{ID: "failed-with", Severity: rulefmt.SeverityError, Status: StatusFail, Scopes: 1, Failed: 1, Examples: ex},
		{ID: "failed-without", Severity: rulefmt.SeverityError, Status: StatusFail, Scopes: 1, Failed: 1},
		{ID: "passed-with", Severity: rulefmt.SeverityError, Status: StatusPass, Scopes: 1, Examples: ex},
		{ID: "incomplete-with", Severity: rulefmt.SeverityError, Status: StatusIncomplete, Scopes: 1, Incomplete: 1, Examples: ex},
	}
	c := NewCheckReport(&report.Report{PoolSpans: 1, Spans: 1, Traces: 1}, results, nil, "")
	md := renderCheck(t, c, CheckMarkdown)
	if got := strings.Count(md, "<details>"); got != 1 || !strings.Contains(md, "<code>failed-with</code>: 1 example(s)") {
		t.Errorf("%d examples blocks, want one for failed-with:\n%s", got, md)
	}
}

// TestLatencyRegressesOnlyPastBothTolerances pins BaselineLatency at each
// of its bounds (defaults: 1.5 times the baseline, and more than 5 ms):
// exactly the ratio or exactly the delta is not a regression, past both
// is; a side without data or a zero baseline never regresses.
func TestLatencyRegressesOnlyPastBothTolerances(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur *float64
		regresses bool
	}{
		{"past both", ptr(100.0), ptr(151.0), true},
		{"exactly the ratio", ptr(100.0), ptr(150.0), false},
		{"past the ratio, exactly the delta", ptr(4.0), ptr(9.0), false},
		{"past the ratio and the delta", ptr(4.0), ptr(9.5), true},
		{"past the ratio, under the delta", ptr(2.0), ptr(6.0), false},
		{"no baseline data", nil, ptr(500.0), false},
		{"no current data", ptr(100.0), nil, false},
		{"a zero baseline", ptr(0.0), ptr(500.0), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, cur := scenarioReport(t, "pooled"), scenarioReport(t, "pooled")
			base.Pool.Latency.Call.P99, cur.Pool.Latency.Call.P99 = tc.base, tc.cur
			// Samples far enough apart to be significant: the tolerances decide.
			for _, s := range []struct {
				p *report.Percentiles
				v *float64
			}{{&base.Pool.Latency.Call, tc.base}, {&cur.Pool.Latency.Call, tc.cur}} {
				if s.v != nil {
					s.p.Count, s.p.Sample = 30, shiftedSample(30, *s.v)
				}
			}
			var got bool
			for _, g := range Regressions(base, cur, rulefmt.DefaultTolerances()) {
				got = got || g.Measure == "call.p99"
			}
			if got != tc.regresses {
				t.Errorf("call.p99 %v → %v: regression %v, want %v", deref(tc.base), deref(tc.cur), got, tc.regresses)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestDiffMarksAnUnchangedMeasureEqual pins the diff's change column: "="
// for no change, a signed figure otherwise, nothing when a side has no
// data.
func TestDiffMarksAnUnchangedMeasureEqual(t *testing.T) {
	for _, tc := range []struct {
		base, cur *float64
		want      string
	}{
		{ptr(3.0), ptr(3.0), "="},
		{ptr(3.0), ptr(5.0), "+2"},
		{ptr(5.0), ptr(3.0), "-2"},
		{ptr(0.1), ptr(0.10000001), "="},
		{nil, ptr(3.0), ""},
		{ptr(3.0), nil, ""},
	} {
		if change := changeCell(Row{Baseline: tc.base, Current: tc.cur}); change != tc.want {
			t.Errorf("%v → %v: change %q, want %q", deref(tc.base), deref(tc.cur), change, tc.want)
		}
	}
}
