package whatif

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/spans"
)

// TestReplayCountsEachSessionOnce pins the replay's own counts: a
// pre-warmed session taken twice is one used pre-warm, never a negative
// unused count; a failed lease's dropped session no longer counts as
// open, so the next dial is not a second one held at once; an idle
// session the global cap closes is charged its idle time up to then.
func TestReplayCountsEachSessionOnce(t *testing.T) {
	sec := int64(time.Second)
	fixed := Settings{IdleTTL: 10 * time.Second, IdlePerKey: 1, MaxIdle: 64}
	pre := fixed
	pre.Prewarm = 1
	cap1 := fixed
	cap1.MaxIdle = 1
	for _, tc := range []struct {
		name string
		set  Settings
		as   []acq
		want Row
	}{
		{"a pre-warmed session taken twice", pre, []acq{
			{"s1", "k", 0, 10, false, 1}, {"s2", "k", 100, 110, false, 1}, {"s2", "k", 120, 130, false, 1}},
			Row{Acquires: 3, Hits: 2, MissesByCause: map[string]int{"cold": 1}, SessionsOpened: 2, PeakSessions: 1, PrewarmDials: 1, PrewarmUnused: 0}},
		{"a failed lease's session is dropped", fixed, []acq{{"s", "k", 0, 10, true, 1}, {"s", "k", 20, 30, false, 1}},
			Row{Acquires: 2, MissesByCause: map[string]int{"cold": 1, "after_failure": 1}, SessionsOpened: 2, PeakSessions: 1}},
		{"the global cap closes an idle session", cap1, []acq{{"s", "a", 0, 1 * sec, false, 1}, {"s", "b", 3 * sec, 4 * sec, false, 1}},
			Row{Acquires: 2, MissesByCause: map[string]int{"cold": 2}, SessionsOpened: 2, PeakSessions: 2, IdleSessionSeconds: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := workload(tc.as).Replay(tc.set)
			if r.Acquires != tc.want.Acquires || r.Hits != tc.want.Hits || !maps.Equal(r.MissesByCause, tc.want.MissesByCause) ||
				r.SessionsOpened != tc.want.SessionsOpened || r.PeakSessions != tc.want.PeakSessions ||
				math.Abs(r.IdleSessionSeconds-tc.want.IdleSessionSeconds) > 1e-6 || r.PrewarmDials != tc.want.PrewarmDials || r.PrewarmUnused != tc.want.PrewarmUnused {
				t.Errorf("replay = %+v\nwant     %+v", r, tc.want)
			}
		})
	}
}

// TestReplayForgetsAKeyAfterTheScopesOwnSweep pins that each scope's
// replay remembers a key as long as its own recorded sweep interval says
// (twice the TTL plus one interval), not the pool's default: with a 10s
// sweep and a 1s TTL a key acquired again 30s on is forgotten (cold),
// with the default minute it is remembered (ttl).
func TestReplayForgetsAKeyAfterTheScopesOwnSweep(t *testing.T) {
	sec := int64(time.Second)
	settings := func(sweep string) analyze.PoolSettings {
		return analyze.PoolSettings{spans.AttrPoolIdleTTL: "1", spans.AttrPoolMaxIdlePerKey: "1", spans.AttrPoolIdleSizing: spans.IdleSizingFixed,
			spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: sweep}
	}
	for _, tc := range []struct {
		name     string
		settings analyze.PoolSettings
		cause    string
	}{
		{"a 10s sweep", settings("10"), "cold"},
		{"the default sweep", settings("60"), "ttl"},
		{"none recorded", nil, "ttl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			for _, start := range []int64{0, 30 * sec} {
				c.Add(&analyze.Acquire{Scope: "s", Key: "k", Start: start, LeaseEnd: start + sec, Attempt: 1, Settings: tc.settings})
			}
			r := c.Workload().Replay(Settings{IdleTTL: time.Second, IdlePerKey: 1, MaxIdle: 64})
			want := map[string]int{"cold": 1}
			want[tc.cause]++
			if !maps.Equal(r.MissesByCause, want) {
				t.Errorf("misses %v, want %v", r.MissesByCause, want)
			}
		})
	}
}
