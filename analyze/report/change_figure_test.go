package report_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestAChangeIsWorthWhatItsTwoSidesLetTheTruthMove pins ChangeFigure, what
// the change from a baseline figure to a current one is worth: the truth
// only when both sides are; a lower bound when the current side is one or
// the baseline an upper one, an upper bound the other way round; not
// measurable when a side is or when the sides bound the change from
// opposite ends; the reasons said with their side, once for a reason of
// both.
func TestAChangeIsWorthWhatItsTwoSidesLetTheTruthMove(t *testing.T) {
	exact := report.FigureState{State: report.Measurable}
	lower := func(why string) report.FigureState { return report.FigureState{State: report.LowerBound, Why: why} }
	upper := func(why string) report.FigureState { return report.FigureState{State: report.UpperBound, Why: why} }
	none := report.FigureState{State: report.NotMeasurable, Why: "no acquires"}
	for _, tc := range []struct {
		name      string
		base, cur report.FigureState
		want      report.FigureState
	}{
		{"both the truth", exact, exact, exact},
		{"a report of old without states", report.FigureState{}, report.FigureState{}, exact},
		{"the current a lower bound", exact, lower("x"), lower("current: x")},
		{"the current an upper bound", exact, upper("x"), upper("current: x")},
		{"the baseline a lower bound", lower("x"), exact, upper("baseline: x")},
		{"the baseline an upper bound", upper("x"), exact, lower("baseline: x")},
		{"bounds that move the same way", upper("x"), lower("y"), lower("current: y; baseline: x")},
		{"two lower bounds, one reason", lower("x"), lower("x"),
			report.FigureState{State: report.NotMeasurable, Why: "both sides: x (it may be off either way)"}},
		{"two upper bounds", upper("x"), upper("y"),
			report.FigureState{State: report.NotMeasurable, Why: "current: y; baseline: x (it may be off either way)"}},
		{"a side without a figure", exact, none, report.FigureState{State: report.NotMeasurable, Why: "current: no acquires"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := report.ChangeFigure(tc.base, tc.cur); got != tc.want {
				t.Errorf("ChangeFigure(%+v, %+v) = %+v, want %+v", tc.base, tc.cur, got, tc.want)
			}
		})
	}
}

// TestAReadBackFigureIsWorthWhatItsAnalysisDeclared pins FigureAsRead on a
// report read back without its writer section (FigureOf then takes every
// figure for the truth): a figure the analysis declared a bound stays that
// bound, one it declared not measurable stays not measurable, and one it
// did not declare is the truth.
func TestAReadBackFigureIsWorthWhatItsAnalysisDeclared(t *testing.T) {
	r := &report.Report{Figures: map[string]report.FigureState{
		"excess_misses":      {State: report.UpperBound, Why: "declared upper"},
		"cold_start_floor":   {State: report.LowerBound, Why: "declared lower"},
		"unexplained_misses": {State: report.NotMeasurable, Why: "declared none"},
	}}
	for name, want := range map[string]report.FigureState{
		"excess_misses":      r.Figures["excess_misses"],
		"cold_start_floor":   r.Figures["cold_start_floor"],
		"unexplained_misses": r.Figures["unexplained_misses"],
		"hit_rate":           {State: report.Measurable},
	} {
		if got := r.FigureAsRead(name); got != want {
			t.Errorf("FigureAsRead(%s) = %+v, want %+v", name, got, want)
		}
	}
}
