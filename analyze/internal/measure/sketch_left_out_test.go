package measure

import "testing"

// TestSketchLeavesOutNegativeDurations pins what a sketch makes of a
// duration below 0 (a span written ending before it started): no sample,
// counted in LeftOut, which merging keeps (a shard that saw only such a
// span too) and the percentiles report; a duration of exactly 0 is a real
// sample, exact and folded alike.
func TestSketchLeavesOutNegativeDurations(t *testing.T) {
	for _, bounded := range []bool{false, true} {
		var a, b Sketch
		a.Bounded, b.Bounded = bounded, bounded
		a.Add(0)
		a.Add(-1)
		b.Add(-1) // a shard with nothing but a span left out
		if bounded {
			a.Fold()
		}
		a.Merge(&b)
		p := a.Percentiles()
		if a.N != 1 || a.LeftOut != 2 || p.Count != 1 || p.LeftOut != 2 {
			t.Errorf("bounded %v: N %d, left out %d, count %d, reported left out %d; want 1, 2, 1, 2", bounded, a.N, a.LeftOut, p.Count, p.LeftOut)
		}
		if p.P99 == nil || *p.P99 != 0 {
			t.Errorf("bounded %v: p99 %v, want the one 0 ms sample", bounded, p.P99)
		}
	}
}
