package whatif

import (
	"maps"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
)

const ttl = int64(time.Second)

// acq is a test acquire: scope, key, start and lease end in nanoseconds.
type acq struct {
	scope, key string
	start, end int64
	failed     bool
	attempt    int
}

func workload(as []acq) *Workload {
	c := NewCollector()
	for _, a := range as {
		att := a.attempt
		if att == 0 {
			att = 1
		}
		c.Add(&events.Acquire{Scope: a.scope, Key: a.key, Start: a.start, LeaseEnd: a.end, Failed: a.failed, Attempt: att})
	}
	return c.Workload()
}

// TestReplayPinsThePoolsBoundaries pins the model's edges as the pool has
// them: idle exactly the TTL is fresh and a nanosecond more expired; a
// key's peak counts within exactly the TTL; the global cap closes the
// least recently released first, equal release times in acquire order; a
// failed lease drops its session; a redial always dials; a lease ending
// when the next starts is not concurrent; pre-warm recent:1 serves the
// next scope's first acquire of the key called last, idle from the scope's
// start, and once it expired unused that acquire's miss is ttl (as the
// analyzer reads a pre-warm handshake: its pair's first session).
func TestReplayPinsThePoolsBoundaries(t *testing.T) {
	fixed1 := Settings{IdleTTL: time.Second, IdlePerKey: 1, MaxIdle: 64}
	peak := fixed1
	peak.Peak = true
	cap1 := fixed1
	cap1.MaxIdle = 1
	pre := fixed1
	pre.Prewarm = 1
	for _, tc := range []struct {
		name  string
		set   Settings
		as    []acq
		hits  int
		cause map[string]int
		extra func(t *testing.T, r Row)
	}{
		{"idle exactly the TTL is reused", fixed1, []acq{{"s", "k", 0, 10, false, 1}, {"s", "k", 10 + ttl, 20 + ttl, false, 1}},
			1, map[string]int{"cold": 1}, nil},
		{"idle a nanosecond past the TTL expired", fixed1, []acq{{"s", "k", 0, 10, false, 1}, {"s", "k", 11 + ttl, 20 + ttl, false, 1}},
			0, map[string]int{"cold": 1, "ttl": 1}, nil},
		{"a lease ending as the next starts is not concurrent", fixed1, []acq{{"s", "k", 0, 10, false, 1}, {"s", "k", 10, 20, false, 1}},
			1, map[string]int{"cold": 1}, nil},
		{"fixed one per key: the second of a burst again concurrent", fixed1, []acq{
			{"s", "k", 0, 10, false, 1}, {"s", "k", 1, 10, false, 1}, {"s", "k", 20, 30, false, 1}, {"s", "k", 21, 30, false, 1}},
			1, map[string]int{"cold": 1, "concurrent": 2}, nil},
		{"peak keeps the burst's sessions within the TTL", peak, []acq{
			{"s", "k", 0, ttl, false, 1}, {"s", "k", 0, ttl, false, 1}, {"s", "k", ttl + 20, ttl + 30, false, 1}, {"s", "k", ttl + 21, ttl + 30, false, 1}},
			2, map[string]int{"cold": 1, "concurrent": 1}, nil},
		{"a peak older than the TTL at release no longer counts", peak, []acq{
			{"s", "k", 0, ttl + 1, false, 1}, {"s", "k", 0, ttl + 1, false, 1}, {"s", "k", ttl + 20, ttl + 30, false, 1}, {"s", "k", ttl + 21, ttl + 30, false, 1}},
			1, map[string]int{"cold": 1, "concurrent": 2}, nil},
		{"the global cap closes the least recently released, ties in acquire order", cap1, []acq{
			{"s", "a", 0, 10, false, 1}, {"s", "b", 1, 10, false, 1}, {"s", "b", 20, 30, false, 1}, {"s", "a", 40, 50, false, 1}},
			1, map[string]int{"cold": 2, "evicted": 1}, nil},
		{"a failed lease drops its session", fixed1, []acq{{"s", "k", 0, 10, true, 1}, {"s", "k", 20, 30, false, 1}},
			0, map[string]int{"cold": 1, "after_failure": 1}, nil},
		{"a redial always dials", fixed1, []acq{{"s", "k", 0, 10, false, 1}, {"s", "k", 20, 30, true, 1}, {"s", "k", 30, 40, false, 2}},
			1, map[string]int{"cold": 1, "redial": 1}, nil},
		{"pre-warm recent:1 serves the next scope's first acquire", pre, []acq{
			{"s1", "a", 0, 10, false, 1}, {"s1", "b", 20, 30, false, 1}, {"s2", "b", 100, 110, false, 1}, {"s2", "a", 120, 130, false, 1}},
			1, map[string]int{"cold": 3}, func(t *testing.T, r Row) {
				if r.PrewarmDials != 1 || r.PrewarmUnused != 0 || r.SessionsOpened != 4 {
					t.Errorf("pre-warm dials %d unused %d sessions %d; want 1, 0, 4", r.PrewarmDials, r.PrewarmUnused, r.SessionsOpened)
				}
			}},
		{"a pre-warmed session idle exactly the TTL at its first acquire serves it", pre, []acq{
			{"s1", "a", 0, 10, false, 1}, {"s2", "b", 100, 110, false, 1}, {"s2", "a", 100 + ttl, 110 + ttl, false, 1}},
			1, map[string]int{"cold": 2}, nil},
		{"a pre-warmed session that expired unused: its key's miss is ttl, not cold", pre, []acq{
			{"s1", "a", 0, 10, false, 1}, {"s2", "b", 100, 110, false, 1}, {"s2", "a", 101 + ttl, 110 + ttl, false, 1}},
			0, map[string]int{"cold": 2, "ttl": 1}, func(t *testing.T, r Row) {
				if r.PrewarmDials != 1 || r.PrewarmUnused != 1 {
					t.Errorf("pre-warm dials %d unused %d; want 1, 1", r.PrewarmDials, r.PrewarmUnused)
				}
			}},
		{"a pre-warm the scope never calls is wasted", pre, []acq{
			{"s1", "a", 0, 10, false, 1}, {"s2", "b", 100, 110, false, 1}},
			0, map[string]int{"cold": 2}, func(t *testing.T, r Row) {
				if r.PrewarmDials != 1 || r.PrewarmUnused != 1 {
					t.Errorf("pre-warm dials %d unused %d; want 1, 1", r.PrewarmDials, r.PrewarmUnused)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := workload(tc.as).Replay(tc.set)
			if r.Hits != tc.hits || !maps.Equal(r.MissesByCause, tc.cause) {
				t.Errorf("%d hits %v; want %d %v", r.Hits, r.MissesByCause, tc.hits, tc.cause)
			}
			if tc.extra != nil {
				tc.extra(t, r)
			}
		})
	}
}

// TestPrewarmRanksTheKeysOfTheScopesOwnService: recent:1 dials, at a
// scope's start, the key its service's earlier scopes called last, not
// the key another service called last (its previous scopes of the same
// service); scopes that say no service are one service.
func TestPrewarmRanksTheKeysOfTheScopesOwnService(t *testing.T) {
	pre := Settings{IdleTTL: time.Second, IdlePerKey: 1, MaxIdle: 64, Prewarm: 1}
	for _, tc := range []struct {
		name          string
		svc1, svc2    string // the services of scopes s1 and s2 (s3's is svc1)
		hits, dials   int
		unused        int
		wantPrewarmed string
	}{
		// s2 is batch's first scope: nothing to pre-warm; s3 pre-warms a.
		{"two services: s3 pre-warms what s1 called", "gateway", "batch", 1, 1, 0, "a"},
		// s2 pre-warms a (unused), s3 pre-warms b (unused).
		{"one service: s3 pre-warms what s2 called last", "gateway", "gateway", 0, 2, 2, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector()
			add := func(scope, svc, key string, start int64) {
				c.Add(&events.Acquire{Scope: scope, Key: key, Start: start, LeaseEnd: start + 10, Attempt: 1, Service: svc, HasService: true})
			}
			add("s1", tc.svc1, "a", 0)
			add("s2", tc.svc2, "b", 100)
			add("s3", tc.svc1, "a", 200)
			r := c.Workload().Replay(pre)
			if r.Hits != tc.hits || r.PrewarmDials != tc.dials || r.PrewarmUnused != tc.unused {
				t.Errorf("%d hits, %d pre-warm dials (%d unused); want %d hits, %d dials (%d unused): s3 should pre-warm %s", r.Hits, r.PrewarmDials, r.PrewarmUnused, tc.hits, tc.dials, tc.unused, tc.wantPrewarmed)
			}
		})
	}
}
