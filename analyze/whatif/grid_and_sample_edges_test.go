package whatif

import (
	"slices"
	"testing"
	"time"
)

// TestTheBusiestKeysFillTheAcquireBudgetExactly pins busiestPairs'
// acquire budget: keys are kept while their acquires fit, a key whose
// acquires reach the budget exactly included; the busiest is kept even
// past it.
func TestTheBusiestKeysFillTheAcquireBudgetExactly(t *testing.T) {
	counts := func() []pairCount {
		return []pairCount{{name: pairName{"s", "a"}, n: 3}, {name: pairName{"s", "b"}, n: 2}, {name: pairName{"s", "c"}, n: 1}}
	}
	for _, tc := range []struct {
		maxAcquires int
		want        []string
	}{
		{6, []string{"a", "b", "c"}},
		{5, []string{"a", "b"}},
		{4, []string{"a"}},
		{1, []string{"a"}},
	} {
		keep := busiestPairs(counts(), 10, tc.maxAcquires)
		var got []string
		for _, k := range []string{"a", "b", "c"} {
			if keep[pairName{"s", k}] {
				got = append(got, k)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("budget %d: kept %v, want %v", tc.maxAcquires, got, tc.want)
		}
	}
}

// TestTheReportGridHoldsTheRecordedTTLUnrounded pins that the report's
// grid replays the as-recorded TTL itself, even one of a fraction of a
// second, while the TTLs around it are rounded to the second.
func TestTheReportGridHoldsTheRecordedTTLUnrounded(t *testing.T) {
	rec := Settings{IdleTTL: 1500 * time.Millisecond, IdlePerKey: 1, Peak: true, MaxIdle: 64}
	grid := ReportGrid(rec)
	if !slices.Contains(grid, rec) {
		t.Errorf("grid %v lacks the as-recorded setting %v", grid, rec)
	}
	for _, s := range grid {
		if s.IdleTTL != rec.IdleTTL && s.IdleTTL%time.Second != 0 {
			t.Errorf("grid TTL %v not rounded to the second", s.IdleTTL)
		}
	}
}
