package whatif

import (
	"testing"
	"time"
)

// TestSortRanksByHitRateThenCosts pins Sort's keys in turn: the higher
// hit rate first; at equal rates fewer sessions opened; then less idle
// time; then the settings' text, so equal rows keep one order.
func TestSortRanksByHitRateThenCosts(t *testing.T) {
	mk := func(name string, ttl time.Duration, hits, sessions int, idle float64) Row {
		return Row{Settings: Settings{IdleTTL: ttl, IdlePerKey: 1, MaxIdle: 64}, Acquires: 100, Hits: hits, SessionsOpened: sessions, IdleSessionSeconds: idle,
			MissesByCause: map[string]int{name: 1}}
	}
	rows := []Row{
		mk("e", 5*time.Second, 50, 10, 1),
		mk("d", 4*time.Second, 50, 10, 1),
		mk("c", 3*time.Second, 50, 10, 2),
		mk("b", 2*time.Second, 50, 20, 0),
		mk("a", time.Second, 90, 99, 99),
	}
	Sort(rows)
	got := ""
	for _, r := range rows {
		for name := range r.MissesByCause {
			got += name
		}
	}
	if want := "adecb"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
}
