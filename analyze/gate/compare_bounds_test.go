package gate

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestAKeylessRunIsNeverRedOnWhatItsSpansCannotTell pins the comparison
// of a run whose acquire spans carry no cache key against a keyed
// baseline of the same workload (every acquire a miss on its own key):
// its unexplained misses are not measurable, and its excess misses only
// an upper bound of a count that grew from 0, so neither is a regression
// though their numbers grew; each row says why. The keyed run against
// itself judges both.
func TestAKeylessRunIsNeverRedOnWhatItsSpansCannotTell(t *testing.T) {
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%d", i)
	}
	keyed := analyzetest.AnalyzeTD(t, rulefmt.Config{}, dumptest.MissesOnKeys(keys...).Traces())
	keyless := analyzetest.AnalyzeTD(t, rulefmt.Config{}, dumptest.MissesOnKeys(make([]string, len(keys))...).Traces())
	if keyless.Pool.UnexplainedMisses == 0 || keyless.Pool.ExcessMisses == 0 {
		t.Fatalf("the keyless run reads %d unexplained, %d excess misses: the case this pins is not set up", keyless.Pool.UnexplainedMisses, keyless.Pool.ExcessMisses)
	}
	rows := Compare(keyed, keyless, rulefmt.DefaultTolerances())
	for _, tc := range []struct{ measure, why string }{
		{"unexplained_misses", "current: the spans carry no target identity"},
		{"excess_misses", "current is at most its figure (≤): the spans carry no target identity"},
	} {
		r := rowOf(t, rows, tc.measure)
		if r.Verdict != VerdictNotMeasurable || !strings.Contains(r.Why, tc.why) {
			t.Errorf("%s = %s (%s), want not measurable: %q", tc.measure, r.Verdict, r.Why, tc.why)
		}
	}
	if got := RegressionsOf(rows); len(got) != 0 {
		t.Errorf("regressions %+v, want none", got)
	}
	for _, m := range []string{"unexplained_misses", "excess_misses"} {
		if r := rowOf(t, Compare(keyed, keyed, rulefmt.DefaultTolerances()), m); r.Verdict != VerdictSame {
			t.Errorf("keyed against itself: %s = %s (%s), want ~", m, r.Verdict, r.Why)
		}
	}
}

// TestABoundDecidesAChangeOnlyWhenTheTruthMovedAsFar pins a regression
// or improvement between sides that are bounds (server-side writers: the
// hit rate a lower bound; no target identity: excess misses an upper
// bound): it stands when the truth moved at least as far as the figures
// (the current side a bound away from the baseline, the baseline a bound
// away from the current side), and is not measurable otherwise. A same
// verdict stands only on a change that is the truth: a bound of the
// change leaves the truth free to have moved past the tolerance.
func TestABoundDecidesAChangeOnlyWhenTheTruthMovedAsFar(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur *report.Report
		measure   string
		want      Verdict
	}{
		{"excess up, both exact", exact(excess(100, 90)), exact(excess(100, 50)), "excess_misses", VerdictRegression},
		{"excess up, the current an upper bound", exact(excess(100, 90)), without(excess(100, 50), "target_identity"), "excess_misses", VerdictNotMeasurable},
		{"excess up, the baseline an upper bound", without(excess(100, 90), "target_identity"), exact(excess(100, 50)), "excess_misses", VerdictRegression},
		{"excess down, the current an upper bound", exact(excess(100, 50)), without(excess(100, 90), "target_identity"), "excess_misses", VerdictImprovement},
		{"excess down, the baseline an upper bound", without(excess(100, 50), "target_identity"), exact(excess(100, 90)), "excess_misses", VerdictNotMeasurable},
		{"hit rate down, both lower bounds", without(poolReport(100, 90), "refused_attempts"), without(poolReport(100, 50), "refused_attempts"), "hit_rate", VerdictNotMeasurable},
		{"hit rate down, the baseline a lower bound", without(poolReport(100, 90), "refused_attempts"), exact(poolReport(100, 50)), "hit_rate", VerdictRegression},
		{"hit rate up, the current a lower bound", exact(poolReport(100, 50)), without(poolReport(100, 90), "refused_attempts"), "hit_rate", VerdictImprovement},
		{"a change within the tolerance, both exact", exact(poolReport(100, 90)), exact(poolReport(100, 89)), "hit_rate", VerdictSame},
		{"a change within the tolerance, both lower bounds", without(poolReport(100, 90), "refused_attempts"), without(poolReport(100, 89), "refused_attempts"), "hit_rate", VerdictNotMeasurable},
		{"no change, the current a lower bound", exact(poolReport(100, 90)), without(poolReport(100, 90), "refused_attempts"), "hit_rate", VerdictNotMeasurable},
		{"no change, the baseline an upper bound", without(excess(100, 90), "target_identity"), exact(excess(100, 90)), "excess_misses", VerdictNotMeasurable},
		{"no change, both exact", exact(excess(100, 90)), exact(excess(100, 90)), "excess_misses", VerdictSame},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Compare(tc.base, tc.cur, rulefmt.DefaultTolerances())
			r := rowOf(t, rows, tc.measure)
			if r.Verdict != tc.want {
				t.Errorf("%s = %s (%s), want %s", tc.measure, r.Verdict, r.Why, tc.want)
			}
			if r.Regressed != (tc.want == VerdictRegression) || (r.Message != "") != (tc.want == VerdictRegression) {
				t.Errorf("%s: regressed %v, message %q, for verdict %s", tc.measure, r.Regressed, r.Message, r.Verdict)
			}
		})
	}
}

// without is r read from a writer showing every capability but name.
func without(r *report.Report, name string) *report.Report {
	all := (^rulefmt.Capability(0)).Names()
	r.Writer = &report.WriterReport{Shows: slices.DeleteFunc(all, func(s string) bool { return s == name })}
	return r
}

// exact is r read from a writer showing every capability: every figure
// the truth.
func exact(r *report.Report) *report.Report {
	r.Writer = &report.WriterReport{Shows: (^rulefmt.Capability(0)).Names()}
	return r
}

// excess is a pool report of acquires and hits whose every miss is above
// the cold-start floor.
func excess(acquires, hits int) *report.Report {
	r := poolReport(acquires, hits)
	r.Pool.ExcessMisses = acquires - hits
	return r
}
