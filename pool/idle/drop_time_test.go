package idle_test

import (
	"math"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// noSweep is a sweep interval no test here reaches: acquires never sweep
// on their own, so each case decides where an expired session goes.
const noSweep = time.Duration(1) << 40

// TestAnExpiryCountsAsOfItsExpiryAgainstAFailure pins that a session that
// expired counts as removed at its expiry, whichever of the three ways
// notices it (the key's next acquire, the global cap, a sweep), and
// however late: against a failure of another of the key's leases, the
// later of the two is the next miss's cause, and at the same instant the
// one recorded last (the expiry, noticed after the failure).
func TestAnExpiryCountsAsOfItsExpiryAgainstAFailure(t *testing.T) {
	const ttl = 100 // the idle session, released at 10, expires at 110
	paths := []struct {
		name   string
		notice func(c *core)
	}{
		{"the key's next acquire", func(c *core) {}},
		{"a sweep", func(c *core) { c.Sweep(200, nil) }},
		{"the global cap", func(c *core) {
			b, _ := lease(c, "b", 160)
			c.Release(b, 200, "", nil) // one idle session too many: the oldest goes
		}},
	}
	fails := []struct {
		name   string
		failAt int64
		want   string
	}{
		{"a failure before the expiry", 50, spans.MissTTL},
		{"a failure at the expiry's instant", 110, spans.MissTTL},
		{"a failure after the expiry", 150, spans.MissAfterFailure},
	}
	for _, p := range paths {
		for _, f := range fails {
			t.Run(p.name+"/"+f.name, func(t *testing.T) {
				c := newCore(idle.Settings{TTL: ttl, MaxIdlePerKey: 1, MaxIdle: 1, SweepInterval: noSweep})
				kept, _ := lease(c, "a", 0)
				failing, _ := lease(c, "a", 1)
				c.Release(kept, 10, "", nil)
				c.Release(failing, f.failAt, spans.MissAfterFailure, nil)
				p.notice(c)
				if _, cause := lease(c, "a", 200); cause != f.want {
					t.Errorf("cause %q, want %q", cause, f.want)
				}
			})
		}
	}
}

// TestAKeysCauseSurvivesEvictionsThatNameNone pins that an eviction that
// leaves no cause (the per-key cap closing an older session while a newer
// one stays idle, Close) keeps the cause the key had, and that a successful
// dial does not clear it: the key's next miss still names the failure.
func TestAKeysCauseSurvivesEvictionsThatNameNone(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, FixedPerKey: true, MaxIdle: 8, SweepInterval: noSweep})
	e, _ := lease(c, "a", 0)
	c.Release(e, 0, spans.MissAfterFailure, nil)
	x, cause := lease(c, "a", 1)
	if cause != spans.MissAfterFailure {
		t.Fatalf("the miss after a failure: %q, want after_failure", cause)
	}
	y, _ := lease(c, "a", 2)
	c.Release(x, 3, "", nil)
	if _, evs := c.Release(y, 4, "", nil); len(evs) != 1 || evs[0].Reason != spans.EvictIdleLimit {
		t.Fatalf("a second idle session over a fixed limit of 1: evictions %v, want the older closed for idle_limit", evs)
	}
	if evs := c.Close(nil); len(evs) != 1 || evs[0].Reason != spans.EvictPoolClosed || !c.Closed() {
		t.Fatalf("close: evictions %v, closed %v; want the idle session closed for pool_closed", evs, c.Closed())
	}
	if _, cause := lease(c, "a", 5); cause != spans.MissAfterFailure {
		t.Errorf("the next miss: %q, want after_failure still", cause)
	}
}

// TestAnotherLeaseOutnamesWhatRemovedTheLastSession pins the order of the
// causes: with a lease of the key out, a miss is concurrent even when the
// key's last session was removed for a failure.
func TestAnotherLeaseOutnamesWhatRemovedTheLastSession(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	e, _ := lease(c, "a", 0)
	c.Release(e, 1, spans.MissAfterFailure, nil)
	lease(c, "a", 2) // after_failure, and stays out
	if _, cause := lease(c, "a", 3); cause != spans.MissConcurrent {
		t.Errorf("cause %q, want concurrent", cause)
	}
}

// TestTimeArithmeticBeforeTheEpochAndForNegativeTTLs pins the clock
// arithmetic on the negative side: a clock before its epoch (a replay's),
// where a session idle for no time is fresh, and a negative TTL, whose
// expiry is before the session went idle, saturating at MinInt64, and
// under which an idle time of -5 is exact, not saturated; and the
// forget span of a TTL of half of int64, one short of MaxInt64, so that a
// key idle for all of int64 is forgotten.
func TestTimeArithmeticBeforeTheEpochAndForNegativeTTLs(t *testing.T) {
	c := newCore(idle.Settings{TTL: time.Second, MaxIdlePerKey: 1, MaxIdle: 8})
	if c.Expired(-5, -5) {
		t.Error("a session idle for no time before the epoch reads as expired")
	}
	e, _ := lease(c, "a", -100)
	c.Release(e, -50, "", nil)
	if _, cause := lease(c, "a", -50); cause != "" {
		t.Errorf("an acquire at the release's instant before the epoch missed (%s)", cause)
	}

	neg := newCore(idle.Settings{TTL: -5, MaxIdlePerKey: 1, MaxIdle: 8})
	if got := neg.ExpiresAt(10); got != 5 {
		t.Errorf("ExpiresAt(10) at TTL -5 = %d, want 5", got)
	}
	if got := neg.ExpiresAt(math.MinInt64 + 3); got != math.MinInt64 {
		t.Errorf("ExpiresAt(MinInt64+3) at TTL -5 = %d, want MinInt64", got)
	}
	// A clock that moved back across its epoch, by less than int64 holds:
	// the idle time is exactly -5, longer than the TTL of -10.
	if !newCore(idle.Settings{TTL: -10, MaxIdlePerKey: 1, MaxIdle: 8}).Expired(0, -5) {
		t.Error("idle since 0 at -5 (an idle time of -5) under TTL -10 reads as fresh")
	}

	half := newCore(idle.Settings{TTL: time.Duration(math.MaxInt64 / 2), MaxIdlePerKey: 1, MaxIdle: 8})
	half.BeginLazy("a", 0, nil)
	if _, known, _ := half.BeginLazy("a", math.MaxInt64, nil); known {
		t.Error("a key inactive for MaxInt64 ns at a TTL of MaxInt64/2 (forget span MaxInt64-1) is still known")
	}
}

// TestAPeakRestartsOnlyOnceOlderThanTheTTL pins the in-use peak's two
// edges: a lease exactly a TTL after the peak does not restart it, and
// reaching the peak's count again renews it, so that a key keeps what its
// latest burst needed.
func TestAPeakRestartsOnlyOnceOlderThanTheTTL(t *testing.T) {
	tests := []struct {
		name   string
		leases [][2]int64
		want   int
	}{
		// A peak of three at 2; a single lease at 102, exactly the TTL
		// later, keeps it, so its release keeps all three idle and the
		// burst at 103 hits three times.
		{"a lease exactly a TTL after the peak", [][2]int64{{0, 5}, {1, 6}, {2, 7}, {102, 102}, {103, 110}, {104, 110}, {105, 110}}, 4},
		// A peak of two at 1, reached again at 91: released at 150, both
		// sessions stay idle (the peak is 59 old, not 149).
		{"the peak's count reached again", [][2]int64{{0, 5}, {1, 6}, {90, 150}, {91, 150}, {160, 170}, {161, 170}}, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
			if got := hitsOf(c, tc.leases); got != tc.want {
				t.Errorf("%d hits, want %d", got, tc.want)
			}
		})
	}
}
