package gate

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestARegressionCarriesItsRowsFigures pins RegressionsOf: only the rows
// whose verdict is regression, in order, each with its own row's
// baseline, current, allowance and message (never its p-value).
func TestARegressionCarriesItsRowsFigures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{
		{Measure: "a", Baseline: f(1), Current: f(2), P: f(0.01), Verdict: VerdictImprovement, Allowed: "<= 9", Message: "better"},
		{Measure: "b", Baseline: f(3), Current: f(7), P: f(0.002), Verdict: VerdictRegression, Regressed: true, Allowed: "<= 4", Message: "b rose"},
		{Measure: "c", Baseline: f(5), Current: f(5), P: f(0.5), Verdict: VerdictSame},
		{Measure: "d", Baseline: f(0.9), Current: f(0.4), P: f(0.003), Verdict: VerdictRegression, Regressed: true, Allowed: ">= 0.88", Message: "d fell"},
	}
	got := RegressionsOf(rows)
	want := []Regression{
		{Measure: "b", Baseline: 3, Current: 7, Allowed: "<= 4", Message: "b rose"},
		{Measure: "d", Baseline: 0.9, Current: 0.4, Allowed: ">= 0.88", Message: "d fell"},
	}
	if len(got) != len(want) {
		t.Fatalf("RegressionsOf = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("regression %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if none := RegressionsOf(nil); none == nil || len(none) != 0 {
		t.Errorf("RegressionsOf(nil) = %#v, want an empty list", none)
	}
}

// TestACountOutOfNoTrialsIsNotMeasurable pins that a count whose trials
// are none (misses above the floor of no acquires, multi-session
// executions of no executions) has no figure on that side: the row is
// not measurable, saying which side has none of what, never compared.
func TestACountOutOfNoTrialsIsNotMeasurable(t *testing.T) {
	some := poolReport(40, 30)
	some.Executions = report.ExecutionsReport{Count: 40, Measurable: true}
	none := &report.Report{Schema: report.Schema}
	none.Pool.MissReasons = map[string]int{}
	none.Executions = report.ExecutionsReport{Measurable: true}
	for _, tc := range []struct {
		measure   string
		base, cur *report.Report
		why       string
	}{
		{"excess_misses", some, none, "current: no acquires"},
		{"excess_misses", none, some, "baseline: no acquires"},
		{"excess_misses", none, none, "both sides: no acquires"},
		{"multi_session_executions", some, none, "current: no executions"},
		{"multi_session_executions", none, some, "baseline: no executions"},
	} {
		t.Run(tc.measure+" "+tc.why, func(t *testing.T) {
			r := rowOf(t, Compare(tc.base, tc.cur, rulefmt.DefaultTolerances()), tc.measure)
			if r.Verdict != VerdictNotMeasurable || r.Why != tc.why || r.P != nil {
				t.Errorf("%s = %s (%q), p %v; want not measurable, %q", tc.measure, r.Verdict, r.Why, deref(r.P), tc.why)
			}
			if (r.Baseline == nil) != (tc.base == none) || (r.Current == nil) != (tc.cur == none) {
				t.Errorf("%s: baseline %v current %v; want no figure exactly on the side of no trials", tc.measure, deref(r.Baseline), deref(r.Current))
			}
		})
	}
}

// TestALatencyImprovesOnlyBeyondTheSmallerEdge pins the improvement edge
// of a latency: a faster run improves only when it is significantly
// below both the baseline divided by the ratio and the baseline less the
// delta, so a run significantly faster by more than the delta but not
// significantly past the ratio is the same.
func TestALatencyImprovesOnlyBeyondTheSmallerEdge(t *testing.T) {
	base := spread(30, 100, 1)    // 100 to 129 ms: its edge by the ratio is 67 to 86
	faster := spread(30, 62, 0.8) // 62 to 85.2 ms: below 129/1.5 at p99, not significantly below the edge
	r := rowOf(t, Compare(latencyReport(base...), latencyReport(faster...), rulefmt.DefaultTolerances()), "call.p99")
	if r.Verdict != VerdictSame || !strings.Contains(r.Why, "not significantly beyond the tolerance") {
		t.Errorf("call.p99 = %s (%s), want ~, not significantly beyond the tolerance", r.Verdict, r.Why)
	}
	far := spread(30, 30, 0.5) // 30 to 44.5 ms: well past both edges
	if r := rowOf(t, Compare(latencyReport(base...), latencyReport(far...), rulefmt.DefaultTolerances()), "call.p99"); r.Verdict != VerdictImprovement {
		t.Errorf("call.p99 far faster = %s (%s), want an improvement", r.Verdict, r.Why)
	}
}

// TestACountPastItsTrialsCountsEveryTrial pins the outcomes of a count
// larger than what it is out of (a hand-edited or damaged report: more
// unexpected requests than complete ones): every trial counts as one,
// never more, and the comparison still runs.
func TestACountPastItsTrialsCountsEveryTrial(t *testing.T) {
	mk := func(complete, unexpected int) *report.Report {
		r := &report.Report{Schema: report.Schema}
		r.Measures = []report.MeasureReport{{Name: "reads", Requests: complete, Complete: complete, Unexpected: unexpected}}
		return r
	}
	r := rowOf(t, Compare(mk(40, 0), mk(40, 90), rulefmt.DefaultTolerances()), "measures.reads.unexpected")
	if r.Verdict != VerdictRegression || r.NBaseline != 40 || r.NCurrent != 40 {
		t.Errorf("0 to 90 of 40: %s (%s), n %d vs %d; want a regression over 40 vs 40", r.Verdict, r.Why, r.NBaseline, r.NCurrent)
	}
}

// TestALatencyWithinItsTolerancesIsSaidSo pins each bound of a latency's
// change, both ways (defaults: 1.5 times, and more than 5 ms): exactly
// the ratio or exactly the delta is within the tolerance, and said so,
// rather than tested against the tolerance's edge; past both is a
// regression or an improvement; a zero side never moves.
func TestALatencyWithinItsTolerancesIsSaidSo(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur float64
		want      Verdict
		why       string
	}{
		{"slower past both", 100, 151, VerdictRegression, "beyond the tolerance"},
		{"slower by exactly the ratio", 100, 150, VerdictSame, "within tolerance, p="},
		{"slower past the ratio by exactly the delta", 4, 9, VerdictSame, "within tolerance, p="},
		{"slower past the ratio and the delta", 4, 9.5, VerdictRegression, "beyond the tolerance"},
		{"slower from a zero baseline", 0, 500, VerdictSame, "within tolerance, p="},
		{"faster past both", 151, 100, VerdictImprovement, "beyond the tolerance"},
		{"faster by exactly the ratio", 150, 100, VerdictSame, "within tolerance, p="},
		{"faster by less than the ratio", 100, 80, VerdictSame, "within tolerance, p="},
		{"faster past the ratio by exactly the delta", 9, 4, VerdictSame, "within tolerance, p="},
		{"faster past the ratio and the delta", 9.5, 4, VerdictImprovement, "beyond the tolerance"},
		{"faster down to zero", 500, 0, VerdictSame, "within tolerance, p="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mk := func(p99 float64) *report.Report {
				r := &report.Report{Schema: report.Schema}
				r.Pool.Latency.Call = report.Percentiles{Count: 30, P50: ptr(p99), P95: ptr(p99), P99: ptr(p99), Sample: shiftedSample(30, p99)}
				return r
			}
			r := rowOf(t, Compare(mk(tc.base), mk(tc.cur), rulefmt.DefaultTolerances()), "call.p99")
			if r.Verdict != tc.want || !strings.Contains(r.Why, tc.why) {
				t.Errorf("call.p99 %v → %v = %s (%s), want %s saying %q", tc.base, tc.cur, r.Verdict, r.Why, tc.want, tc.why)
			}
		})
	}
}
