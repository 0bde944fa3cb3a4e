package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestARulesExamplesAndFindingFromItsGroups pins what Evaluate makes of
// hand-built observations: examples sorted by trace then span,
// de-duplicated by both and capped at MaxExamples; a trace's example the
// offenders of its first failing expectation that selected any; a dump
// rule names only offending spans, never a scope's own; a rule whose
// scopes were all incomplete never says it held; the scopes left out as
// sessionless are said after what the judged ones found.
func TestARulesExamplesAndFindingFromItsGroups(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`
rules:
  - id: capped
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: 5}
  - id: first-failing
    scope: trace
    select: db.query
    expect: [{of: count, op: ">=", than: 5}, {of: count, op: "<=", than: 0}, {of: count, op: ">=", than: 9}]
  - id: dump-count
    scope: dump
    select: db.query
    expect: {of: count, op: "<=", than: 0}
  - id: all-incomplete
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: 0}
  - id: sessionless
    scope: trace
    select: db.query
    expect: {of: count, op: ">=", than: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	refs := func(rs ...report.SpanRef) []report.SpanRef { return rs }
	complete := func(scopes int, values []float64, offenders [][]report.SpanRef, examples []report.SpanRef) report.ScopeGroup {
		return report.ScopeGroup{Scopes: scopes, Complete: true, Values: values, Offenders: offenders, Examples: examples}
	}
	obs := []report.RuleObservation{
		{MaxExamples: 2, Groups: []report.ScopeGroup{
			complete(1, []float64{1}, [][]report.SpanRef{refs(ref(2, 1), ref(1, 2))}, nil),
			complete(1, []float64{1}, [][]report.SpanRef{refs(ref(1, 1), ref(1, 2))}, nil),
		}},
		{MaxExamples: 10, Groups: []report.ScopeGroup{
			complete(1, []float64{1, 2, 3}, [][]report.SpanRef{nil, refs(ref(3, 3)), refs(ref(4, 4))}, refs(ref(5, 5))),
		}},
		{MaxExamples: 10, Groups: []report.ScopeGroup{
			complete(1, []float64{1}, [][]report.SpanRef{nil}, refs(ref(6, 6))),
		}},
		{MaxExamples: 10, Groups: []report.ScopeGroup{{Scopes: 2}}},
		{MaxExamples: 10, NotApplicable: 2, Groups: []report.ScopeGroup{complete(1, []float64{1}, make([][]report.SpanRef, 1), nil)}},
	}
	res, err := Evaluate(&report.Analysis{Report: &report.Report{Schema: report.Schema, PoolSpans: 1, Spans: 10, Traces: 5}, Rules: obs}, gc.Rules)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]RuleResult{}
	for _, r := range res {
		byID[r.ID] = r
	}
	examples := func(r RuleResult) string {
		var s []string
		for _, ex := range r.Examples {
			s = append(s, ex.TraceID[:2]+"/"+ex.SpanID[:2])
		}
		return strings.Join(s, " ")
	}
	for _, tc := range []struct {
		id, status, examples, found string
	}{
		{"capped", "fail", "01/01 01/02", "count = 1 in 2 of 2 traces"},
		{"first-failing", "fail", "03/03", "count = 1 in 1 of 1 traces; count = 2 in 1 of 1 traces; count = 3 in 1 of 1 traces"},
		{"dump-count", "fail", "", "count = 1"},
		{"all-incomplete", "incomplete", "", "2 incomplete, not judged"},
		{"sessionless", "pass", "", "holds in all 1 traces judged; 2 traces against sessionless servers"},
	} {
		r := byID[tc.id]
		if string(r.Status) != tc.status || examples(r) != tc.examples || !strings.Contains(r.Found, tc.found) {
			t.Errorf("%s: %s, examples %q, found %q; want %s, examples %q, found saying %q", tc.id, r.Status, examples(r), r.Found, tc.status, tc.examples, tc.found)
		}
	}
	if f := byID["all-incomplete"].Found; strings.Contains(f, "holds") {
		t.Errorf("all-incomplete found %q: says it held in no trace judged", f)
	}
}

// TestExplainSaysAToleranceOnlyWhenThereIsOne pins the tolerance clause
// of an explained expectation: "within" a positive tolerance, nothing
// for none.
func TestExplainSaysAToleranceOnlyWhenThereIsOne(t *testing.T) {
	for _, tc := range []struct {
		tol  float64
		want string
	}{{0, ""}, {0.5, ", within 0.5"}} {
		r := rulefmt.Rule{ID: "r", Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump}, Severity: rulefmt.SeverityError,
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpEq, Tolerance: tc.tol}}}
		got := ExplainRule(&r)
		if strings.Contains(got, "within") != (tc.want != "") || !strings.Contains(got, tc.want+".\n") {
			t.Errorf("tolerance %v explained:\n%s\nwant the expectation to end %q", tc.tol, got, tc.want+".")
		}
	}
}
