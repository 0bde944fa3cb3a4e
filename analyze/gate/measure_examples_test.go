package gate

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// ref is a span reference whose trace and span ids are filled with t and s.
func ref(t, s byte) report.SpanRef {
	var r report.SpanRef
	for i := range r.Trace {
		r.Trace[i] = t
	}
	for i := range r.Span {
		r.Span[i] = s
	}
	return r
}

// traceID is the hex id of a trace whose bytes are all b.
func traceID(b byte) string {
	var id pcommon.TraceID
	for i := range id {
		id[i] = b
	}
	return id.String()
}

// TestAFailedMeasureNamesWhatMakesItWhatItIs pins which offenders each
// failed measure rule names: the unexplained misses for
// unexplained_misses, the misses above the floor for excess_misses, the
// multi-session executions for multi_session_executions, and a reads
// measure's own unexpected requests, never another measure's.
func TestAFailedMeasureNamesWhatMakesItWhatItIs(t *testing.T) {
	const reads = "measures.org_reads_per_cold_init.unexpected"
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(tracegen.ColdInitMeasureYAML+`
  - name: other_reads
    root: {name: mcp.request}
    read: {name: db.query}
rules:
  - id: unexplained
    scope: dump
    expect: {of: unexplained_misses, op: "<=", than: 0}
  - id: excess
    scope: dump
    expect: {of: excess_misses, op: "<=", than: 0}
  - id: multi
    scope: dump
    expect: {of: multi_session_executions, op: "<=", than: 0}
  - id: reads
    scope: dump
    expect: {of: `+reads+`, op: "<=", than: 0}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := &report.Report{Schema: report.Schema, Spans: 10, Traces: 4, PoolSpans: 8}
	r.Pool.Acquires, r.Pool.Hits, r.Pool.Misses, r.Pool.ExcessMisses = 8, 4, 4, 3
	r.Pool.MissReasons = map[string]int{"cold": 1, "unexplained": 3}
	r.Executions = report.ExecutionsReport{Count: 4, MultiSession: 1, MaxSessions: 2, Measurable: true, Examples: []string{traceID(0xe1)}}
	r.Measures = []report.MeasureReport{
		{Name: "other_reads", Requests: 3, Complete: 3, Unexpected: 3, Examples: []string{traceID(0xd1)}},
		{Name: "org_reads_per_cold_init", Requests: 3, Complete: 3, Unexpected: 1, Examples: []string{traceID(0xc1)}},
	}
	obs := make([]report.RuleObservation, len(gc.Rules))
	for i := range obs {
		obs[i] = report.RuleObservation{MaxExamples: 10,
			Groups:            []report.ScopeGroup{{Scopes: 1, Complete: true, Values: []float64{0}, Offenders: make([][]report.SpanRef, 1)}},
			UnexplainedMisses: []report.SpanRef{ref(0xa1, 0xa2)}, AboveFloorMisses: []report.SpanRef{ref(0xb1, 0xb2)}}
	}
	res, err := Evaluate(&report.Analysis{Report: r, Rules: obs}, gc.Rules)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"unexplained": traceID(0xa1), "excess": traceID(0xb1), "multi": traceID(0xe1), "reads": traceID(0xc1)}
	for _, rr := range res {
		if rr.Status != StatusFail {
			t.Errorf("%s: %s (%s), want fail", rr.ID, rr.Status, rr.Found)
			continue
		}
		if len(rr.Examples) != 1 || rr.Examples[0].TraceID != want[rr.ID] {
			t.Errorf("%s: examples %+v, want the one of trace %s", rr.ID, rr.Examples, want[rr.ID])
		}
		if ex := rr.Examples; len(ex) == 1 && (rr.ID == "unexplained" || rr.ID == "excess") != (ex[0].SpanID != "") {
			t.Errorf("%s: example %+v; a miss names its span, an execution or a request its trace alone", rr.ID, ex[0])
		}
	}
}
