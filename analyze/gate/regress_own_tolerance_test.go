package gate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestEachMissCountRegressesAgainstItsOwnTolerance pins that each count a
// baseline compares reads its own tolerance, as a configuration file's
// regressions: mapping sets it: a rise far beyond a tolerance of 0 (and
// significant over 10,000 acquires) regresses, the same rise within a
// tolerance of 1,000 does not, whatever the other count's tolerance (set
// to the opposite extreme, so that reading another's tolerance shows).
func TestEachMissCountRegressesAgainstItsOwnTolerance(t *testing.T) {
	const acquires, base, rise, wide = 10000, 10, 200, 1000
	cases := []struct {
		measure, other string // the measure is also its tolerance's key
		set            func(r *report.Report, n int)
	}{
		{"excess_misses", "unexplained_misses",
			func(r *report.Report, n int) { r.Pool.ExcessMisses = n }},
		{"unexplained_misses", "excess_misses",
			func(r *report.Report, n int) { r.Pool.MissReasons = map[string]int{spans.MissUnexplained: n} }},
	}
	for _, tc := range cases {
		for _, own := range []int{0, wide} {
			other := wide - own
			doc := fmt.Sprintf("regressions: {%s: %d, %s: %d, unexpected: %d, latency_ratio: 1000000}\n", tc.measure, own, tc.other, other, wide)
			gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			b, c := &report.Report{Schema: report.Schema}, &report.Report{Schema: report.Schema}
			b.Pool.Acquires, c.Pool.Acquires = acquires, acquires
			tc.set(b, base)
			tc.set(c, base+rise)
			got := Regressions(b, c, gc.Tolerances)
			want := own < rise
			regressed := len(got) == 1 && got[0].Measure == tc.measure
			if regressed != want || (!want && len(got) != 0) {
				t.Errorf("%s %d -> %d of %d acquires with %s: regressions %+v, want regression %v", tc.measure, base, base+rise, acquires, strings.TrimSpace(doc), got, want)
			}
		}
	}
}

// TestHitRateRegressesOnlyBetweenTwoHitRates pins that the hit rate is
// compared only when both dumps have one: a dump without acquires has no
// hit rate (not 0%), so it neither regresses against a baseline's nor is a
// baseline for the next. The last case is the control: two hit rates that
// fell too far do regress.
func TestHitRateRegressesOnlyBetweenTwoHitRates(t *testing.T) {
	mk := func(rate *float64) *report.Report {
		r := &report.Report{Schema: report.Schema}
		if rate != nil {
			r.Pool.Acquires, r.Pool.Hits = 1000, int(*rate*1000)
			r.Pool.HitRate = rate
		}
		return r
	}
	cases := []struct {
		name      string
		base, cur *float64
		want      bool
	}{
		{"the current dump has no hit rate", ptr(0.9), nil, false},
		{"the baseline has no hit rate", nil, ptr(0.5), false},
		{"neither has", nil, nil, false},
		{"both have, and it fell too far (control)", ptr(0.9), ptr(0.5), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Regressions(mk(tc.base), mk(tc.cur), rulefmt.DefaultTolerances())
			hit := len(got) == 1 && got[0].Measure == "hit_rate"
			if hit != tc.want || (!tc.want && len(got) != 0) {
				t.Errorf("regressions = %+v, want hit_rate regression %v", got, tc.want)
			}
		})
	}
}
