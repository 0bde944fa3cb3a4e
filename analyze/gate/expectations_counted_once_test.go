package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestTwoExpectationsFailingOnOneValueCountTheTraceOnce: a trace whose
// two count expectations (of different selections) both fail with the
// same count is one failing trace of one judged, never "2 of 1".
func TestTwoExpectationsFailingOnOneValueCountTheTraceOnce(t *testing.T) {
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(`
rules:
  - id: two
    scope: trace
    expect: [{of: count, select: db.query, op: ">=", than: 5}, {of: count, select: cache.get, op: ">=", than: 5}]
`))
	if err != nil {
		t.Fatal(err)
	}
	obs := []report.RuleObservation{{MaxExamples: 10, Groups: []report.ScopeGroup{
		{Scopes: 1, Complete: true, Values: []float64{1, 1}, Offenders: make([][]report.SpanRef, 2)}}}}
	res, err := Evaluate(&report.Analysis{Report: &report.Report{Schema: report.Schema, PoolSpans: 1, Spans: 2, Traces: 1}, Rules: obs}, gc.Rules)
	if err != nil {
		t.Fatal(err)
	}
	f := res[0].Found
	for _, want := range []string{"count of [name=db.query] = 1 in 1 of 1 traces", "count of [name=cache.get] = 1 in 1 of 1 traces"} {
		if !strings.Contains(f, want) {
			t.Errorf("found %q, want it to say %q", f, want)
		}
	}
	if strings.Contains(f, "2 of 1") {
		t.Errorf("found %q: one trace counted twice", f)
	}
}
