package whatif

import (
	"testing"
	"time"
)

// TestABestLineSaysTheBudgetTheRateAndTheFigure pins bestLine: the budget
// in the cost's own precision (tenths of idle session-seconds, whole
// sessions), the best row's hit rate beside the as-recorded row's, and
// its figure; the as-recorded row itself is said to be the best.
func TestABestLineSaysTheBudgetTheRateAndTheFigure(t *testing.T) {
	rec := Row{Settings: Settings{IdleTTL: time.Minute}, AsRecorded: true, Acquires: 100, Hits: 10, SessionsOpened: 90, IdleSessionSeconds: 5.5}
	better := Row{Settings: Settings{IdleTTL: time.Hour}, Acquires: 100, Hits: 50, SessionsOpened: 95, IdleSessionSeconds: 3.25}
	rows := []Row{better, rec}
	for _, tc := range []struct {
		b          Best
		head, tail string
	}{
		{Best{Cost: CostIdleSessionSeconds, Budget: 5.5, Row: 0}, "at most 5.5 idle session-seconds:", ", hit rate 50.0% against 10.0% as recorded, at 3.2 idle session-seconds"},
		{Best{Cost: CostSessionsOpened, Budget: 90, Row: 1}, "at most 90 sessions opened:", ", hit rate 10.0%, the as-recorded setting: none replayed does better without costing more"},
	} {
		head, tail := bestLine(tc.b, rows)
		if head != tc.head || tail != tc.tail {
			t.Errorf("bestLine(%s) = %q, %q; want %q, %q", tc.b.Cost, head, tail, tc.head, tc.tail)
		}
	}
	if got := asRecordedRate([]Row{better}); got != 0 {
		t.Errorf("the as-recorded rate of rows without one = %v, want 0", got)
	}
}
