package whatif

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
)

// TestPrewarmDialsNoMoreThanTheSettingsKeep pins how many pre-warm dials
// a replay makes: recent:N dials at most N keys, no more than the global
// idle cap, none when no idle session is kept (idle per key negative);
// the dump's own pre-warm dials are replayed only at PrewarmAsRecorded,
// and serve the acquire of their key.
func TestPrewarmDialsNoMoreThanTheSettingsKeep(t *testing.T) {
	base := Settings{IdleTTL: time.Second, IdlePerKey: 1, MaxIdle: 64}
	with := func(f func(*Settings)) Settings { s := base; f(&s); return s }
	// s1 calls a, b and c; s2 then calls c.
	recent := []acq{{"s1", "a", 0, 10, false, 1}, {"s1", "b", 20, 30, false, 1}, {"s1", "c", 40, 50, false, 1}, {"s2", "c", 100, 110, false, 1}}
	for _, tc := range []struct {
		name        string
		set         Settings
		dials, hits int
	}{
		{"recent:2 dials two keys", with(func(s *Settings) { s.Prewarm = 2 }), 2, 1},
		{"recent:5 dials the three keys there are", with(func(s *Settings) { s.Prewarm = 5 }), 3, 1},
		{"recent:3 under a global cap of 1 dials one", with(func(s *Settings) { s.Prewarm = 3; s.MaxIdle = 1 }), 1, 1},
		{"recent:3 keeping no idle session dials none", with(func(s *Settings) { s.Prewarm = 3; s.IdlePerKey = -1 }), 0, 0},
		{"no pre-warm", base, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := workload(recent).Replay(tc.set)
			if r.PrewarmDials != tc.dials || r.Hits != tc.hits {
				t.Errorf("%d pre-warm dials, %d hits; want %d, %d", r.PrewarmDials, r.Hits, tc.dials, tc.hits)
			}
		})
	}
	recorded := func() *Workload {
		c := NewCollector()
		c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 0, LeaseEnd: 5, Prewarm: true})
		c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: 10, LeaseEnd: 20, Attempt: 1})
		return c.Workload()
	}
	for _, tc := range []struct {
		name                string
		set                 Settings
		dials, unused, hits int
	}{
		{"as recorded: the dial replayed, its session taken", with(func(s *Settings) { s.Prewarm = PrewarmAsRecorded }), 1, 0, 1},
		{"as recorded keeping no idle session: none", with(func(s *Settings) { s.Prewarm = PrewarmAsRecorded; s.IdlePerKey = -1 }), 0, 0, 0},
		{"no pre-warm: the recorded dial left out", base, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := recorded()
			r := w.Replay(tc.set)
			if r.PrewarmDials != tc.dials || r.PrewarmUnused != tc.unused || r.Hits != tc.hits || r.Acquires != 1 || w.Acquires() != 1 {
				t.Errorf("%d pre-warm dials (%d unused), %d hits of %d acquires; want %d (%d), %d of 1", r.PrewarmDials, r.PrewarmUnused, r.Hits, r.Acquires, tc.dials, tc.unused, tc.hits)
			}
		})
	}
}
