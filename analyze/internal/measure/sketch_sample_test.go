package measure

import (
	"math"
	"slices"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestLatencySampleIsBoundedAndSpansTheSeries pins a series' sample (the
// report's Percentiles.Sample, what a baseline comparison tests): every
// duration, ascending, up to report.SampleSize of them; one more and it is
// report.SampleSize evenly spaced order statistics, from the lowest slice
// to the highest; the same once the series folded into its histogram
// (within the histogram's 0.4%); nil for no duration.
func TestLatencySampleIsBoundedAndSpansTheSeries(t *testing.T) {
	ms := func(i int) int64 { return int64(i) * 1e6 } // i ms
	for _, tc := range []struct {
		name   string
		n      int
		folded bool
		want   func(i int) float64 // the i-th value, in ms
	}{
		{"exactly the bound", report.SampleSize, false, func(i int) float64 { return float64(i + 1) }},
		{"one over the bound", report.SampleSize + 1, false, func(i int) float64 { return float64(SampleRank(i, report.SampleSize, report.SampleSize+1) + 1) }},
		{"ten times the bound", 10 * report.SampleSize, false, func(i int) float64 { return float64(10*i + 5 + 1) }},
		{"folded", 10 * report.SampleSize, true, func(i int) float64 { return float64(10*i + 5 + 1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Sketch
			for i := tc.n; i >= 1; i-- { // descending: the sample sorts
				s.Add(ms(i))
			}
			if tc.folded {
				s.Fold()
			}
			got := s.Sample()
			if len(got) != min(tc.n, report.SampleSize) || !slices.IsSorted(got) {
				t.Fatalf("%d values, sorted %v; want %d ascending", len(got), slices.IsSorted(got), min(tc.n, report.SampleSize))
			}
			for i, v := range got {
				if w := tc.want(i); math.Abs(v-w) > w/256+0.001 {
					t.Fatalf("value %d = %v ms, want %v", i, v, w)
				}
			}
		})
	}
	var empty Sketch
	if got := empty.Sample(); got != nil {
		t.Errorf("empty series: sample %v, want nil", got)
	}
}
