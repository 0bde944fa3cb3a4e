package whatif

import (
	"maps"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
)

// TestTheRecordedRowCountsPrewarmDialsAsSessions pins Workload.Recorded:
// a recorded pre-warm dial is a session opened and a pre-warm dial, never
// an acquire; a hit opens none; a miss opens one, by its cause.
func TestTheRecordedRowCountsPrewarmDialsAsSessions(t *testing.T) {
	c := NewCollector()
	c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 0, LeaseEnd: 5, Prewarm: true})
	c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 10, LeaseEnd: 20, Attempt: 1, Hit: true})
	c.Add(&analyze.Acquire{Scope: "s", Key: "j", Start: 30, LeaseEnd: 40, Attempt: 1, Cause: "cold"})
	r := c.Workload().Recorded()
	if r.Acquires != 2 || r.Hits != 1 || r.SessionsOpened != 2 || r.PrewarmDials != 1 || !maps.Equal(r.MissesByCause, map[string]int{"cold": 1}) {
		t.Errorf("recorded row %+v; want 2 acquires, 1 hit, 2 sessions opened, 1 pre-warm dial, cold=1", r)
	}
}

// TestAnIdleSessionDeadOnItsPingStaysAMiss pins the replay of an acquire
// whose idle session the pool found dead (health_check): a miss, as
// recorded, its dead session closed, never a hit on it.
func TestAnIdleSessionDeadOnItsPingStaysAMiss(t *testing.T) {
	c := NewCollector()
	c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 0, LeaseEnd: 10, Attempt: 1, Cause: "cold"})
	c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 20, LeaseEnd: 30, Attempt: 1, Cause: "health_check", HealthCheck: true})
	r := c.Workload().Replay(Settings{IdleTTL: time.Second, IdlePerKey: 1, MaxIdle: 64})
	if r.Hits != 0 || r.SessionsOpened != 2 || r.PeakSessions != 1 || !maps.Equal(r.MissesByCause, map[string]int{"cold": 1, "health_check": 1}) || r.Acquires != 2 {
		t.Errorf("replay %+v; want no hit, 2 sessions opened, at most 1 open, a cold and a health_check miss", r)
	}
}
