package whatif_test

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/whatif"
)

// row is a test row: hits of 10 acquires and the four costs.
func row(hits, sessions, peak int, idle float64, unused int, rec bool) whatif.Row {
	return whatif.Row{Settings: whatif.Settings{IdleTTL: time.Duration(hits+1) * time.Second, MaxIdle: 64}, AsRecorded: rec,
		Acquires: 10, Hits: hits, SessionsOpened: sessions, PeakSessions: peak, IdleSessionSeconds: idle, PrewarmUnused: unused}
}

// TestBestPerCostPinsBudgetsAndTies pins the best-per-cost rule: the
// highest hit rate among the rows costing at most the as-recorded row's
// figure (equal to the budget is in, a hair over is out); equal hit rates
// go to the lower cost, then the as-recorded row, then the earlier row;
// each cost is judged alone; no as-recorded row, no answer.
func TestBestPerCostPinsBudgetsAndTies(t *testing.T) {
	rec := row(5, 10, 4, 2.5, 1, true)
	for _, tc := range []struct {
		name string
		rows []whatif.Row
		want map[whatif.Cost]int // index of the best row per cost; nil: no answer
	}{
		{"no as-recorded row: no budget, no answer", []whatif.Row{row(9, 1, 1, 0, 0, false)}, nil},
		{"as recorded alone is best at every cost", []whatif.Row{rec},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 0, whatif.CostPeakSessions: 0, whatif.CostIdleSessionSeconds: 0, whatif.CostPrewarmUnused: 0}},
		{"a better row at exactly the budget wins; one a hair over does not",
			[]whatif.Row{row(9, 11, 5, 2.5001, 2, false), row(8, 10, 4, 2.5, 1, false), rec},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 1, whatif.CostPeakSessions: 1, whatif.CostIdleSessionSeconds: 1, whatif.CostPrewarmUnused: 1}},
		{"each cost judged alone",
			[]whatif.Row{row(9, 20, 4, 9, 1, false), row(7, 9, 9, 1, 9, false), rec},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 1, whatif.CostPeakSessions: 0, whatif.CostIdleSessionSeconds: 1, whatif.CostPrewarmUnused: 0}},
		{"equal hit rates: the lower cost wins",
			[]whatif.Row{row(8, 10, 4, 2.5, 1, false), row(8, 9, 3, 2.4, 0, false), rec},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 1, whatif.CostPeakSessions: 1, whatif.CostIdleSessionSeconds: 1, whatif.CostPrewarmUnused: 1}},
		{"equal hit rate and cost to as recorded: as recorded wins, listed first or last",
			[]whatif.Row{row(5, 10, 4, 2.5, 1, false), rec, row(5, 10, 4, 2.5, 1, false)},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 1, whatif.CostPeakSessions: 1, whatif.CostIdleSessionSeconds: 1, whatif.CostPrewarmUnused: 1}},
		{"equal hit rate and cost between two others: the earlier (the table's order) wins",
			[]whatif.Row{rec, row(7, 8, 3, 1, 0, false), row(7, 8, 3, 1, 0, false)},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 1, whatif.CostPeakSessions: 1, whatif.CostIdleSessionSeconds: 1, whatif.CostPrewarmUnused: 1}},
		{"a worse hit rate at a lower cost never beats as recorded",
			[]whatif.Row{rec, row(4, 1, 1, 0, 0, false)},
			map[whatif.Cost]int{whatif.CostSessionsOpened: 0, whatif.CostPeakSessions: 0, whatif.CostIdleSessionSeconds: 0, whatif.CostPrewarmUnused: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := whatif.BestPerCost(tc.rows)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("got %+v, want no answer", got)
				}
				return
			}
			if len(got) != len(whatif.Costs) {
				t.Fatalf("got %d answers, want one per cost (%d)", len(got), len(whatif.Costs))
			}
			for i, b := range got {
				if b.Cost != whatif.Costs[i] {
					t.Errorf("answer %d is for %s, want %s (the table's order)", i, b.Cost, whatif.Costs[i])
				}
				if b.Budget != b.Cost.Of(tc.rows[indexOfRecorded(tc.rows)]) {
					t.Errorf("%s: budget %v, want the as-recorded row's figure", b.Cost, b.Budget)
				}
				if b.Row != tc.want[b.Cost] {
					t.Errorf("%s: best row %d, want %d", b.Cost, b.Row, tc.want[b.Cost])
				}
			}
		})
	}
}

func indexOfRecorded(rows []whatif.Row) int {
	for i, r := range rows {
		if r.AsRecorded {
			return i
		}
	}
	return -1
}
