package idle_test

import (
	"math"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

type core = idle.Core[string, int, struct{}]

func newCore(set idle.Settings) *core { return idle.New[string, int, struct{}](set, nil) }

// lease acquires key at now as the pool does: a hit on an idle session, or
// a miss dialed at once; it returns the entry and the miss's cause ("" on a
// hit).
func lease(c *core, key string, now int64) (*idle.Entry[string, int, struct{}], string) {
	k, known, _ := c.Begin(key, now, nil)
	if e, _ := c.TakeIdle(k, now, nil); e != nil {
		c.Lease(e, now)
		c.CountHit()
		return e, ""
	}
	cause := c.Cause(k, known, false)
	c.Miss(k, cause, now)
	return c.Dialed(k, 0, false), cause
}

// TestTimeArithmeticSaturates pins the core's clock arithmetic at the ends
// of int64: a TTL of 2562047h never wraps an expiry into the past, an idle
// time that overflows is longest, not negative, and a key is never
// forgotten early because twice a huge TTL wrapped.
func TestTimeArithmeticSaturates(t *testing.T) {
	huge := time.Duration(math.MaxInt64)
	c := newCore(idle.Settings{TTL: huge, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: time.Minute})
	if got := c.ExpiresAt(10); got != math.MaxInt64 {
		t.Errorf("ExpiresAt(10) at TTL MaxInt64 = %d, want MaxInt64", got)
	}
	if c.Expired(math.MinInt64, math.MaxInt64) {
		t.Error("an idle time that overflows reads as expired under a TTL of MaxInt64")
	}
	small := newCore(idle.Settings{TTL: time.Second, MaxIdlePerKey: 1, MaxIdle: 8})
	if !small.Expired(math.MinInt64, math.MaxInt64) {
		t.Error("an idle time that overflows int64 is not the longest")
	}
	if small.Expired(math.MaxInt64, math.MinInt64) {
		t.Error("a clock that went back past MinInt64 reads as expired")
	}
	if got := small.ExpiresAt(10); got != 10+int64(time.Second) {
		t.Errorf("ExpiresAt(10) at TTL 1s = %d, want 10 plus the TTL", got)
	}
	if got := small.ExpiresAt(math.MaxInt64 - 5); got != math.MaxInt64 {
		t.Errorf("ExpiresAt near MaxInt64 = %d, want MaxInt64", got)
	}
	e, _ := lease(c, "k", 0)
	c.Release(e, 0, "", nil)
	if _, cause := lease(c, "k", math.MaxInt64); cause != "" {
		t.Errorf("at TTL MaxInt64 a session idle since 0 missed at MaxInt64 (%s): the key was forgotten or expired", cause)
	}
}

// TestTheLastMissCauseIsWhatRemovedTheKeysSession pins each cause a miss
// takes from the key's history.
func TestTheLastMissCauseIsWhatRemovedTheKeysSession(t *testing.T) {
	const ttl = 100
	base := idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: ttl}
	tests := []struct {
		name string
		set  idle.Settings
		run  func(c *core) string
		want string
	}{
		{"first acquire: cold", base, func(c *core) string { _, cause := lease(c, "a", 0); return cause }, spans.MissCold},
		{"exactly the TTL idle: a hit", base, func(c *core) string {
			e, _ := lease(c, "a", 0)
			c.Release(e, 10, "", nil)
			_, cause := lease(c, "a", 10+ttl)
			return cause
		}, ""},
		{"one ns over: ttl", base, func(c *core) string {
			e, _ := lease(c, "a", 0)
			c.Release(e, 10, "", nil)
			_, cause := lease(c, "a", 10+ttl+1)
			return cause
		}, spans.MissTTL},
		{"another lease out: concurrent", base, func(c *core) string {
			lease(c, "a", 0)
			_, cause := lease(c, "a", 1)
			return cause
		}, spans.MissConcurrent},
		{"a failed lease: after_failure", base, func(c *core) string {
			e, _ := lease(c, "a", 0)
			c.Release(e, 10, spans.MissAfterFailure, nil)
			_, cause := lease(c, "a", 11)
			return cause
		}, spans.MissAfterFailure},
		{"keep none: evicted", idle.Settings{TTL: ttl, MaxIdlePerKey: -1, MaxIdle: 8}, func(c *core) string {
			e, _ := lease(c, "a", 0)
			c.Release(e, 10, "", nil)
			_, cause := lease(c, "a", 11)
			return cause
		}, spans.MissEvicted},
		{"a fixed limit of 0 closed it: evicted", idle.Settings{TTL: ttl, MaxIdlePerKey: 0, FixedPerKey: true, MaxIdle: 8}, func(c *core) string {
			e, _ := lease(c, "a", 0)
			c.Release(e, 10, "", nil)
			_, cause := lease(c, "a", 11)
			return cause
		}, spans.MissEvicted},
		{"the global cap closed it: evicted", idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 1}, func(c *core) string {
			a, _ := lease(c, "a", 0)
			b, _ := lease(c, "b", 1)
			c.Release(a, 10, "", nil)
			c.Release(b, 11, "", nil)
			_, cause := lease(c, "a", 12)
			return cause
		}, spans.MissEvicted},
		{"the global cap closed it expired: ttl, whenever a sweep ran", idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 1}, func(c *core) string {
			a, _ := lease(c, "a", 0)
			c.Release(a, 10, "", nil)
			b, _ := lease(c, "b", 50)
			c.Release(b, 10+ttl+1, "", nil)
			_, cause := lease(c, "a", 10+ttl+2)
			return cause
		}, spans.MissTTL},
		{"nothing removed it, the dial failed: after_failure", base, func(c *core) string {
			k, known, _ := c.Begin("a", 0, nil)
			c.Miss(k, c.Cause(k, known, false), 0)
			c.DialFailed(k)
			_, cause := lease(c, "a", 1)
			return cause
		}, spans.MissAfterFailure},
		{"a redial: redial", base, func(c *core) string {
			k, known, _ := c.Begin("a", 0, nil)
			return c.Cause(k, known, true)
		}, spans.MissRedial},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.run(newCore(tc.set)); got != tc.want {
				t.Errorf("cause %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAKeyKeepsItsRecentPeakIdle pins peak-following sizing: after three
// leases at once, all three go idle and the next three acquires hit, while
// a fixed sizing keeps one; a release once the peak is older than the TTL
// closes the oldest idle session (one per release, as the pool does).
func TestAKeyKeepsItsRecentPeakIdle(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fixed     bool
		releaseAt int64
		wantHits  int
	}{
		{"peak, within the TTL", false, 10, 3},
		{"peak, the last released exactly the TTL after the peak", false, 100, 3},
		{"peak, the last released one ns past the TTL after the peak: it closes the oldest", false, 101, 2},
		{"fixed", true, 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, FixedPerKey: tc.fixed, MaxIdle: 8})
			var es []*idle.Entry[string, int, struct{}]
			for i := range 3 {
				e, _ := lease(c, "a", int64(i))
				es = append(es, e)
			}
			for i, e := range es {
				c.Release(e, tc.releaseAt+int64(i), "", nil)
			}
			hits := 0
			for i := range 3 {
				if _, cause := lease(c, "a", tc.releaseAt+20+int64(i)); cause == "" {
					hits++
				}
			}
			if hits != tc.wantHits {
				t.Errorf("%d hits, want %d", hits, tc.wantHits)
			}
		})
	}
}

// TestASharedEntryClosesWithItsLastUser pins a sessionless key's shared
// entry: a second user leases it at once; a failure by one marks it
// dropped (later acquires make a new one) and its last user's release
// closes it.
func TestASharedEntryClosesWithItsLastUser(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	k, known, _ := c.Begin("a", 0, nil)
	c.Miss(k, c.Cause(k, known, false), 0)
	e := c.Dialed(k, 1, true)
	if k.Shared() != e {
		t.Fatal("a shared dial is not the key's shared entry")
	}
	c.Lease(e, 1)
	if e.Users() != 2 || c.InUse() != 1 {
		t.Fatalf("users %d, in use %d; want 2 users of one session", e.Users(), c.InUse())
	}
	if closeIt, _ := c.Release(e, 2, spans.MissAfterFailure, nil); closeIt || !e.Dropped() || k.Shared() != nil {
		t.Fatalf("a failing user: close now %v, dropped %v, still shared %v; want dropped, closed by the last user", closeIt, e.Dropped(), k.Shared() != nil)
	}
	if closeIt, evs := c.Release(e, 3, "", nil); !closeIt || len(evs) != 0 {
		t.Fatalf("the last user of a dropped entry: close %v, %d evictions; want closed, never idle", closeIt, len(evs))
	}
	if c.IdleCount() != 0 || c.InUse() != 0 {
		t.Errorf("idle %d, in use %d; want nothing held", c.IdleCount(), c.InUse())
	}
}

// TestASweepForgetsOnlyAbandonedKeys pins the sweep: expired idle sessions
// go for ttl, and a key is forgotten only once it held nothing for more
// than twice the TTL plus one sweep interval, never while a lease is out.
func TestASweepForgetsOnlyAbandonedKeys(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50})
	a, _ := lease(c, "a", 0)
	c.Release(a, 10, "", nil)
	lease(c, "b", 0) // stays out
	y, _ := lease(c, "y", 1)
	c.Release(y, 10, "", nil)
	z, _ := lease(c, "z", 1)
	c.Release(z, 60, "", nil)
	if evs := c.Sweep(111, nil); len(evs) != 2 || evs[0].Entry.Key().Name() != "a" || evs[1].Entry.Key().Name() != "y" {
		t.Fatalf("sweep with a and y expired and z fresh: evicted %v, want a then y", evs)
	}
	lease(c, "z", 62) // z taken again: out, so not forgotten
	c.Sweep(10+250, nil)
	if c.Keys() != 4 {
		t.Fatalf("sweep at exactly a's forget age: %d keys, want all four kept", c.Keys())
	}
	c.Sweep(10+251, nil)
	if c.Keys() != 2 {
		t.Fatalf("sweep one ns past a's forget age: %d keys, want b and z only (their leases are out)", c.Keys())
	}
	if got := c.Counts().Evictions[spans.EvictTTL]; got != 2 {
		t.Errorf("ttl evictions %d, want 2", got)
	}
}
