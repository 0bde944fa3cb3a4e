package gate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestABoundLeavesUndecidedWhatTheTruthCouldSettle pins the comparisons
// a bound cannot decide: an upper bound that holds an at-least, or an
// equality above 0; a bound that breaks an inequality; a lower bound that
// holds an equality; a bound either side of an inequality's bound but
// within its tolerance (the truth, past it, could leave it).
func TestABoundLeavesUndecidedWhatTheTruthCouldSettle(t *testing.T) {
	for _, tc := range []struct {
		state           report.Measurability
		op              rulefmt.Op
		got, bound, tol float64
	}{
		{report.UpperBound, rulefmt.OpGe, 3, 2, 0},
		{report.UpperBound, rulefmt.OpEq, 1, 1, 0},
		{report.UpperBound, rulefmt.OpNe, 2, 2, 0},
		{report.LowerBound, rulefmt.OpNe, 2, 2, 0},
		{report.LowerBound, rulefmt.OpEq, 1, 1, 0},
		{report.LowerBound, rulefmt.OpLe, 1, 2, 0},
		{report.UpperBound, rulefmt.OpNe, 1.9, 2, 0.5},
		{report.LowerBound, rulefmt.OpNe, 2.1, 2, 0.5},
	} {
		ex := rulefmt.Expectation{Of: "hit_rate", Op: tc.op, Than: rulefmt.Operand{Number: tc.bound}, Tolerance: tc.tol}
		if boundDecides(&ex, tc.state, tc.got, tc.bound, ex.Holds(tc.got, tc.bound)) {
			t.Errorf("%s %v: %s %v (within %v) decided, want undecided", tc.state, tc.got, tc.op, tc.bound, tc.tol)
		}
	}
}

// TestALatencyImprovesOnlyPastTheSmallerEdgeOfSmallDurations pins the
// improvement edge where the delta is the smaller one (durations under
// the ratio's reach: 6 ms less 5 is 1, below 6/1.5): a run at 3 ms is
// not past 1 ms, however far below 4 ms.
func TestALatencyImprovesOnlyPastTheSmallerEdgeOfSmallDurations(t *testing.T) {
	base := append(shiftedSample(29, 6), 30) // p99 30 ms, most calls at 6 ms
	cur := shiftedSample(30, 3)
	r := rowOf(t, Compare(latencyReport(base...), latencyReport(cur...), rulefmt.DefaultTolerances()), "call.p99")
	if r.Verdict != VerdictSame || !strings.Contains(r.Why, "not significantly beyond the tolerance") {
		t.Errorf("call.p99 = %s (%s), want ~, not significantly beyond the tolerance", r.Verdict, r.Why)
	}
}

// TestARatesTrialsAreRoundedNotTruncated pins outcomes' rounding: a hit
// rate of 57% of 100 acquires is 57 hits (57/100 is 56.99999... in
// floating point), so it tests the same as a rate of 57 counted exactly.
func TestARatesTrialsAreRoundedNotTruncated(t *testing.T) {
	exact := func(acquires, hits int) *report.Report {
		r := poolReport(acquires, hits)
		rate := float64(hits) / float64(acquires)
		r.Pool.HitRate = &rate
		return r
	}
	r := rowOf(t, Compare(exact(100, 57), exact(1000, 570), rulefmt.DefaultTolerances()), "hit_rate")
	if r.P == nil || *r.P != 1 {
		t.Errorf("57 of 100 against 570 of 1000: p = %v (%s), want 1", deref(r.P), r.Why)
	}
}

// TestTheTableSaysAPartialInputOnlyWhenThereIsOne pins the table's
// PARTIAL line: said for a check over a damaged input, never otherwise.
func TestTheTableSaysAPartialInputOnlyWhenThereIsOne(t *testing.T) {
	for _, partial := range []bool{false, true} {
		c := NewCheckReportWith(&report.Report{PoolSpans: 1, Partial: partial}, nil, nil, "", CheckOptions{AllowPartial: true})
		if got := strings.Contains(renderCheck(t, c, CheckTable), "PARTIAL:"); got != partial {
			t.Errorf("partial %v: PARTIAL said %v", partial, got)
		}
	}
}

// TestTheMarkdownDiffSaysWhetherAnythingRegressed pins the Markdown
// diff's verdict line: no regression, or how many.
func TestTheMarkdownDiffSaysWhetherAnythingRegressed(t *testing.T) {
	same := Row{Measure: "hit_rate", Baseline: ptr(0.9), Current: ptr(0.9), Verdict: VerdictSame}
	reg := Row{Measure: "misses", Baseline: ptr(1.0), Current: ptr(9.0), Verdict: VerdictRegression, Regressed: true, Message: "rose", Allowed: "<= 1"}
	for _, tc := range []struct {
		rows []Row
		want string
	}{
		{[]Row{same}, "✅ No regression.\n"},
		{[]Row{same, reg}, "❌ 1 regression(s).\n"},
	} {
		var b bytes.Buffer
		if err := RenderDiffMarkdown(&b, tc.rows, "a.json", "b.json"); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("diff:\n%s\nwant it to say %q", b.String(), tc.want)
		}
	}
}
