package whatif_test

import (
	"math"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/spans"
)

// TestReplayChargesAnExpiredSessionsIdleTimeOnlyUntilItsExpiry pins the
// replay's idle session seconds: a session idle past the TTL is charged
// its TTL, not the time until something (the next acquire of its key, the
// global cap) closes it, since the pool's sweep closes it about when it
// expires. A session reused within its TTL, exactly TTL included, is
// charged the time it sat idle.
func TestReplayChargesAnExpiredSessionsIdleTimeOnlyUntilItsExpiry(t *testing.T) {
	const ttl = time.Minute
	base := int64(1_700_000_000) * int64(time.Second)
	at := func(d time.Duration) int64 { return base + int64(d) }
	type lease struct {
		key        string
		start, end time.Duration
	}
	cases := []struct {
		name    string
		maxIdle int
		leases  []lease
		idle    time.Duration
		hits    int
	}{
		{"reused exactly at its TTL", 64, []lease{{"k", 0, time.Second}, {"k", time.Second + ttl, 2*time.Second + ttl}}, ttl, 1},
		{"reused within its TTL", 64, []lease{{"k", 0, time.Second}, {"k", 31 * time.Second, 32 * time.Second}}, 30 * time.Second, 1},
		{"expired, closed by its key's next acquire an hour on", 64,
			[]lease{{"k", 0, time.Second}, {"k", time.Second + time.Hour, 2*time.Second + time.Hour}}, ttl, 0},
		{"expired one nanosecond before its key's next acquire", 64,
			[]lease{{"k", 0, time.Second}, {"k", time.Second + ttl + 1, 2*time.Second + ttl + 1}}, ttl, 0},
		{"expired, closed by the global cap an hour on", 1,
			[]lease{{"a", 0, time.Second}, {"b", time.Hour, time.Hour + time.Second}}, ttl, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := whatif.NewCollector()
			for i, l := range tc.leases {
				a := &events.Acquire{Scope: "s", Key: l.key, HasScope: true, HasKey: true,
					Start: at(l.start), LeaseEnd: at(l.end), Attempt: 1, Cause: spans.MissCold}
				if i > 0 && l.key == tc.leases[0].key {
					a.Cause = spans.MissTTL
				}
				c.Add(a)
			}
			row := c.Workload().Replay(whatif.Settings{IdleTTL: ttl, IdlePerKey: 1, Peak: true, MaxIdle: tc.maxIdle})
			if got, want := row.IdleSessionSeconds, tc.idle.Seconds(); math.Abs(got-want) > 1e-6 || row.Hits != tc.hits {
				t.Errorf("replay: %d hits, %v idle session seconds; want %d, %v", row.Hits, got, tc.hits, want)
			}
		})
	}
}
