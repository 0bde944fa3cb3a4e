package gate

import (
	"math"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// latencyReport is a report whose call series is sample: its count, its
// nearest-rank percentiles and the sample itself.
func latencyReport(sample ...float64) *report.Report {
	r := &report.Report{Schema: report.Schema}
	s := append([]float64(nil), sample...)
	rank := func(q float64) *float64 {
		v := s[min(max(int(math.Ceil(q*float64(len(s))))-1, 0), len(s)-1)]
		return &v
	}
	r.Pool.Latency.Call = report.Percentiles{Count: len(s), P50: rank(0.5), P95: rank(0.95), P99: rank(0.99), Sample: s}
	return r
}

// rowOf returns the row of measure name.
func rowOf(t *testing.T, rows []Row, name string) Row {
	t.Helper()
	for _, r := range rows {
		if r.Measure == name {
			return r
		}
	}
	t.Fatalf("no row %s", name)
	return Row{}
}

// spread returns n durations from lo, step apart.
func spread(n int, lo, step float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + float64(i)*step
	}
	return out
}

// TestLatencyRegressesOnlyWhenSignificant pins the U test's part in a
// latency verdict: three samples against three can never regress, however
// far the p95 moved (their least p is 0.1); doubled latencies over thirty
// samples do. At alpha's boundary, four samples against four: fully
// separated is p=0.029 (a regression), one sample out of place p=0.057
// (~), whether out of place against the baseline or against the edge of
// its tolerance.
func TestLatencyRegressesOnlyWhenSignificant(t *testing.T) {
	doubled := spread(30, 20, 0.2)
	for i := range doubled {
		doubled[i] *= 2
	}
	for _, tc := range []struct {
		name      string
		base, cur []float64
		want      Verdict
		p         float64
		why       string
	}{
		{"3 vs 3, p95 29 to 57 ms", []float64{21, 25, 29}, []float64{41, 50, 57}, VerdictSame, 0.1, "n=3 vs 3 samples"},
		{"doubled over 30 samples", spread(30, 20, 0.2), doubled, VerdictRegression, 0, "n=30 vs 30 samples"},
		{"4 vs 4 fully separated", []float64{10, 20, 30, 40}, []float64{70, 80, 90, 100}, VerdictRegression, 0.0286, "beyond the tolerance, n=4 vs 4"},
		{"4 vs 4, one below the baseline's top", []float64{10, 20, 30, 40}, []float64{35, 80, 90, 100}, VerdictSame, 0.0571, "n=4 vs 4"},
		{"4 vs 4, one within the tolerance", []float64{10, 20, 30, 40}, []float64{50, 80, 90, 100}, VerdictSame, 0.0286, "not significantly beyond the tolerance (p=0.057)"},
		{"same samples", []float64{10, 20, 30, 40}, []float64{10, 20, 30, 40}, VerdictSame, 1, "n=4 vs 4"},
		{"halved over 30 samples", doubled, spread(30, 20, 0.2), VerdictImprovement, 0, "n=30 vs 30"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Compare(latencyReport(tc.base...), latencyReport(tc.cur...), rulefmt.DefaultTolerances())
			r := rowOf(t, rows, "call.p99")
			if r.Verdict != tc.want || !strings.Contains(r.Why, tc.why) {
				t.Errorf("call.p99 = %s (%s), want %s with %q", r.Verdict, r.Why, tc.want, tc.why)
			}
			if r.P == nil || tc.p > 0 && math.Abs(*r.P-tc.p) > 5e-4 || tc.p == 0 && *r.P > 1e-6 {
				t.Errorf("p = %v, want %v", deref(r.P), tc.p)
			}
			if regs := RegressionsOf(rows); (len(regs) > 0) != (tc.want == VerdictRegression) {
				t.Errorf("regressions %v for a row %s", regs, r.Verdict)
			}
		})
	}
}

// TestALatencyWithoutASampleIsNeverARegression: a baseline written before
// reports carried samples (or one whose sample is not a report's) cannot be
// tested: ~, saying so, whatever its percentiles.
func TestALatencyWithoutASampleIsNeverARegression(t *testing.T) {
	base, cur := latencyReport(spread(30, 10, 0.1)...), latencyReport(spread(30, 100, 1)...)
	for name, mangle := range map[string]func(){
		"no sample":         func() { base.Pool.Latency.Call.Sample = nil },
		"sample past 100":   func() { base.Pool.Latency.Call.Sample, base.Pool.Latency.Call.Count = spread(101, 10, 0.1), 101 },
		"more than counted": func() { base.Pool.Latency.Call.Count = 3 },
	} {
		t.Run(name, func(t *testing.T) {
			base = latencyReport(spread(30, 10, 0.1)...)
			mangle()
			r := rowOf(t, Compare(base, cur, rulefmt.DefaultTolerances()), "call.p95")
			if r.Verdict != VerdictSame || !strings.Contains(r.Why, "no latency sample") || r.P != nil {
				t.Errorf("call.p95 = %s (%s), p %v; want ~ saying there is no sample", r.Verdict, r.Why, deref(r.P))
			}
		})
	}
}

// poolReport is a report of acquires acquires, hits of them hits, every
// miss unexplained.
func poolReport(acquires, hits int) *report.Report {
	r := &report.Report{Schema: report.Schema}
	r.Pool.Acquires, r.Pool.Hits, r.Pool.Misses, r.Pool.Keys = acquires, hits, acquires-hits, 0
	rate := float64(hits) / float64(acquires)
	r.Pool.HitRate = &rate
	r.Pool.MissReasons = map[string]int{"unexplained": acquires - hits}
	return r
}

// TestARateOrCountRegressesOnlyWhenSignificant: the hit rate and the miss
// counts are tested as proportions of the acquires (a U test on their 0/1
// outcomes): five points in a hundred acquires is noise, forty is not, and
// a few acquires can say nothing; a count is judged against the acquires
// it is out of.
func TestARateOrCountRegressesOnlyWhenSignificant(t *testing.T) {
	for _, tc := range []struct {
		name      string
		base, cur *report.Report
		measure   string
		want      Verdict
	}{
		{"90 to 85 of 100", poolReport(100, 90), poolReport(100, 85), "hit_rate", VerdictSame},
		{"90 to 50 of 100", poolReport(100, 90), poolReport(100, 50), "hit_rate", VerdictRegression},
		{"3 to 1 of 4", poolReport(4, 3), poolReport(4, 1), "hit_rate", VerdictSame},
		{"twice the misses of twice the acquires", poolReport(100, 90), poolReport(200, 180), "unexplained_misses", VerdictSame},
		{"misses up from 10 to 50 of 100", poolReport(100, 90), poolReport(100, 50), "unexplained_misses", VerdictRegression},
		{"millions of acquires, 90% to 89%", poolReport(4_000_000, 3_600_000), poolReport(4_000_000, 3_560_000), "hit_rate", VerdictSame},
		{"millions of acquires, 90% to 80%", poolReport(4_000_000, 3_600_000), poolReport(4_000_000, 3_200_000), "hit_rate", VerdictRegression},
		{"no acquires", poolReport(100, 90), &report.Report{Schema: report.Schema}, "hit_rate", VerdictNotMeasurable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rowOf(t, Compare(tc.base, tc.cur, rulefmt.DefaultTolerances()), tc.measure)
			if r.Verdict != tc.want {
				t.Errorf("%s = %s (%s), want %s", tc.measure, r.Verdict, r.Why, tc.want)
			}
		})
	}
}

// TestAMeasureNotMeasurableIsNeverARegression: executions not measurable
// on both sides make multi_session_executions not measurable, with the
// reason, whatever figures the sections hold; so does a side alone.
func TestAMeasureNotMeasurableIsNeverARegression(t *testing.T) {
	mk := func(multi int, measurable bool) *report.Report {
		r := poolReport(40, 40)
		r.Executions = report.ExecutionsReport{Count: 40, MultiSession: multi, Measurable: measurable}
		if !measurable {
			r.Executions.WhyNot = "no span matches the execution root"
		}
		return r
	}
	for _, tc := range []struct {
		name      string
		base, cur *report.Report
		why       string
	}{
		{"both sides", mk(0, false), mk(30, false), "both sides: executions not measurable: no span matches the execution root"},
		{"the baseline", mk(0, false), mk(30, true), "baseline: executions not measurable"},
		{"the current run", mk(0, true), mk(30, false), "current: executions not measurable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := Compare(tc.base, tc.cur, rulefmt.DefaultTolerances())
			r := rowOf(t, rows, "multi_session_executions")
			if r.Verdict != VerdictNotMeasurable || !strings.Contains(r.Why, tc.why) || len(RegressionsOf(rows)) != 0 {
				t.Errorf("multi_session_executions = %s (%s), regressions %v; want not measurable, %q", r.Verdict, r.Why, RegressionsOf(rows), tc.why)
			}
		})
	}
	rows := Compare(mk(0, true), mk(30, true), rulefmt.DefaultTolerances())
	if r := rowOf(t, rows, "multi_session_executions"); r.Verdict != VerdictRegression {
		t.Errorf("measurable, 0 to 30 of 40: %s (%s), want a regression", r.Verdict, r.Why)
	}
}

// TestAReadsMeasureIsJudgedOnItsCompleteRequests: unexpected requests are
// a proportion of the complete ones.
func TestAReadsMeasureIsJudgedOnItsCompleteRequests(t *testing.T) {
	mk := func(complete, unexpected int) *report.Report {
		r := &report.Report{Schema: report.Schema}
		r.Measures = []report.MeasureReport{{Name: "reads", Requests: complete, Complete: complete, Unexpected: unexpected}}
		return r
	}
	for _, tc := range []struct {
		base, cur *report.Report
		want      Verdict
	}{
		{mk(40, 0), mk(40, 20), VerdictRegression},
		{mk(40, 0), mk(40, 1), VerdictSame},
		{mk(1, 0), mk(1, 1), VerdictSame},
		{mk(0, 0), mk(40, 20), VerdictNotMeasurable},
	} {
		r := rowOf(t, Compare(tc.base, tc.cur, rulefmt.DefaultTolerances()), "measures.reads.unexpected")
		if r.Verdict != tc.want {
			t.Errorf("%d of %d → %d of %d: %s (%s), want %s", tc.base.Measures[0].Unexpected, tc.base.Measures[0].Complete,
				tc.cur.Measures[0].Unexpected, tc.cur.Measures[0].Complete, r.Verdict, r.Why, tc.want)
		}
	}
}

// TestDiffTellsItsTwoFilesApart: two paths alike for longer than a column
// is wide still make two columns told apart (base and current) and are
// said whole above the table.
func TestDiffTellsItsTwoFilesApart(t *testing.T) {
	dir := "/ci/artifacts/" + strings.Repeat("nightly-run/", 5)
	b, c := dir+"old/analysis.json", dir+"new/analysis.json"
	r := poolReport(24, 21)
	var buf strings.Builder
	if err := RenderDiff(&buf, Compare(r, r, rulefmt.DefaultTolerances()), b, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	head := out[:strings.Index(out, "measure")]
	for _, want := range []string{"base:    " + b + "\n", "current: " + c + "\n"} {
		if !strings.Contains(head, want) {
			t.Errorf("diff does not say %q above its table:\n%s", want, out)
		}
	}
	header := strings.SplitN(out[strings.Index(out, "measure"):], "\n", 2)[0]
	if !strings.Contains(header, " base ") || !strings.Contains(header, " current ") {
		t.Errorf("column headers %q, want base and current", header)
	}
}
