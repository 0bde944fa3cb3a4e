package measure

import (
	"math"
	"testing"
)

// TestNearestRankIsTheSmallestValueWithQPercentAtOrBelow pins the
// nearest-rank method at its boundaries: a q% that lands between two
// ranks rounds up, one that lands on a rank takes it, and the rank stays
// within the series.
func TestNearestRankIsTheSmallestValueWithQPercentAtOrBelow(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		n    int
		want int
	}{
		{50, 1, 0},
		{50, 2, 0},   // 1 of 2 is 50%
		{50, 3, 1},   // 1.5 rounds up to the 2nd
		{50, 4, 1},   // on the 2nd
		{95, 20, 18}, // 19 of 20 is 95%
		{95, 21, 19}, // 19.95 rounds up to the 20th
		{99, 10, 9},
		{0, 5, 0},
		{100, 5, 4},
	} {
		if got := NearestRank(tc.q, tc.n); got != tc.want {
			t.Errorf("NearestRank(%v, %d) = %d, want %d", tc.q, tc.n, got, tc.want)
		}
	}
}

// TestFoldedPercentilesRankAsExactOnes pins that a folded series ranks
// and rounds as an exact one: three durations far apart (each its own
// bucket) have the middle one as p50 whether folded or not, in
// milliseconds to the microsecond.
func TestFoldedPercentilesRankAsExactOnes(t *testing.T) {
	var exact, folded Sketch
	for _, d := range []int64{1e6, 100e6, 10000e6} { // 1 ms, 100 ms, 10 s
		exact.Add(d)
		folded.Add(d)
	}
	folded.Fold()
	e, f := exact.Percentiles(), folded.Percentiles()
	if e.P50 == nil || f.P50 == nil || *e.P50 != 100 || *f.P50 < 99.5 || *f.P50 > 100.5 {
		t.Fatalf("p50 exact %v, folded %v; want 100 ms both (folded within 0.4%%)", deref(e.P50), deref(f.P50))
	}
	// Milliseconds rounded to the microsecond, as exact percentiles are.
	for _, v := range []*float64{f.P50, f.P95, f.P99} {
		if v == nil || *v != math.Round(*v*1e3)/1e3 {
			t.Errorf("folded percentile %v: want milliseconds rounded to the microsecond", deref(v))
		}
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
