package idle_test

import (
	"testing"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

type entry = idle.Entry[string, int, struct{}]

// dialed leases a new session of key with value v at now, as a miss.
func dialed(c *core, key string, now int64, v int) *entry {
	k, known, _ := c.Begin(key, now, nil)
	c.Miss(k, c.Cause(k, known, false), now)
	return c.Dialed(k, v, false)
}

// TestTakeIdleTakesTheMostRecentlyReleased pins which idle session an
// acquire takes: the most recently released, while an older one past the
// TTL waits for a sweep; once the newest has expired, all have, and all go
// for ttl at once, oldest first.
func TestTakeIdleTakesTheMostRecentlyReleased(t *testing.T) {
	set := idle.Settings{TTL: 100, MaxIdlePerKey: 2, MaxIdle: 8, SweepInterval: noSweep}
	c := newCore(set)
	one, two := dialed(c, "a", 0, 1), dialed(c, "a", 1, 2)
	c.Release(one, 10, "", nil)
	c.Release(two, 20, "", nil)
	k, _, _ := c.Begin("a", 115, nil)
	if e, evs := c.TakeIdle(k, 115, nil); e == nil || e.Value != 2 || len(evs) != 0 {
		t.Fatalf("take at 115: %v, evictions %v; want session 2, the newest, and none closed", e, evs)
	}
	if k.Idle() != 1 || c.IdleCount() != 1 {
		t.Fatalf("idle %d (key %d), want session 1 left", c.IdleCount(), k.Idle())
	}

	c = newCore(set)
	one, two = dialed(c, "a", 0, 1), dialed(c, "a", 1, 2)
	c.Release(one, 10, "", nil)
	c.Release(two, 20, "", nil)
	k, _, _ = c.Begin("a", 121, nil)
	e, evs := c.TakeIdle(k, 121, nil)
	if e != nil || len(evs) != 2 || evs[0].Entry.Value != 1 || evs[1].Entry.Value != 2 || evs[0].Reason != spans.EvictTTL || evs[1].Reason != spans.EvictTTL {
		t.Fatalf("take at 121, both expired: %v, evictions %v; want none taken, 1 then 2 closed for ttl", e, evs)
	}
	if c.IdleCount() != 0 || c.Cause(k, true, false) != spans.MissTTL {
		t.Errorf("idle %d, cause %q; want nothing idle and a ttl miss", c.IdleCount(), c.Cause(k, true, false))
	}
}

// TestAFailedHealthCheckClosesTheSessionAndNamesTheNextMiss pins the
// health check's two outcomes in the core: the failed session is no
// longer in use nor idle, counted as a health_check eviction and not a
// hit, and the miss that follows is health_check; a caller that gives up
// instead counts that miss undialed, and the key's next miss is then
// after_failure.
func TestAFailedHealthCheckClosesTheSessionAndNamesTheNextMiss(t *testing.T) {
	for _, gaveUp := range []bool{false, true} {
		c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
		e, _ := lease(c, "a", 0)
		c.Release(e, 10, "", nil)
		k, _, _ := c.Begin("a", 20, nil)
		got, _ := c.TakeIdle(k, 20, nil)
		c.Lease(got, 20)
		c.HealthFailed(got, 20)
		if c.InUse() != 0 || c.IdleCount() != 0 || k.Leased() != 0 || got.Leased() {
			t.Fatalf("after a failed check: in use %d, idle %d, key leased %d; want nothing held", c.InUse(), c.IdleCount(), k.Leased())
		}
		cnt := c.Counts()
		if cnt.Evictions[spans.EvictHealthCheck] != 1 || cnt.Hits != 0 || cnt.Acquires != 1 {
			t.Fatalf("counts %+v, want one health_check eviction, and the first acquire's miss only: no hit", cnt)
		}
		cause := c.Cause(k, true, false)
		if cause != spans.MissHealthCheck {
			t.Fatalf("cause after a failed check %q, want health_check", cause)
		}
		if !gaveUp {
			c.Miss(k, cause, 20)
			c.Dialed(k, 1, false)
			if c.InUse() != 1 || c.Counts().MissReasons[spans.MissHealthCheck] != 1 {
				t.Errorf("redial: in use %d, misses %v; want the new session out and one health_check miss", c.InUse(), c.Counts().MissReasons)
			}
			continue
		}
		c.MissUndialed(k, cause)
		cnt = c.Counts()
		if cnt.Acquires != 2 || cnt.Misses != 2 || cnt.MissReasons[spans.MissHealthCheck] != 1 || k.Leased() != 0 {
			t.Fatalf("gave up: counts %+v, key leased %d; want the acquire counted once, as a health_check miss, nothing reserved", cnt, k.Leased())
		}
		if _, cause := lease(c, "a", 21); cause != spans.MissAfterFailure {
			t.Errorf("the next miss after giving up: %q, want after_failure", cause)
		}
	}
}

// TestAPrewarmedSessionIsIdleAndItsKeyActiveFromThen pins a pre-warm in
// the core: KeyOf makes the key (not known before) without marking it
// active, Prewarmed puts the session idle and marks the key active as of
// then, so the first acquire hits, and a key pre-warmed late is remembered
// from the pre-warm, not from when its dial began.
func TestAPrewarmedSessionIsIdleAndItsKeyActiveFromThen(t *testing.T) {
	set := idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50} // a key is forgotten 250 after its last activity
	c := newCore(set)
	k, known, _ := c.KeyOf("a", 0, nil)
	if known || c.Keys() != 1 || k.Leased() != 0 {
		t.Fatalf("KeyOf a new key: known %v, keys %d, leased %d; want a new key, nothing reserved", known, c.Keys(), k.Leased())
	}
	e, evs := c.Prewarmed(k, 7, false, 50, nil)
	if len(evs) != 0 || c.IdleCount() != 1 || e.IdleSince() != 50 || e.Leased() {
		t.Fatalf("pre-warmed: evictions %v, idle %d, idle since %d; want it idle since 50", evs, c.IdleCount(), e.IdleSince())
	}
	if got, cause := lease(c, "a", 60); cause != "" || got != e {
		t.Errorf("first acquire: cause %q, want a hit on the pre-warmed session", cause)
	}

	c = newCore(set)
	k, _, _ = c.KeyOf("a", 0, nil)
	c.Prewarmed(k, 7, false, 50, nil)
	if _, cause := lease(c, "a", 260); cause != spans.MissTTL {
		t.Errorf("an acquire 260 after KeyOf, 210 after the pre-warm: %q, want ttl (the key remembered)", cause)
	}

	c = newCore(set)
	e, _ = lease(c, "a", 0)
	c.Release(e, 0, "", nil)
	if again, known, _ := c.KeyOf("a", 200, nil); !known || again.Name() != "a" {
		t.Fatal("KeyOf a known key: not known")
	}
	k, known, evs = c.BeginLazy("a", 251, nil)
	if known || len(evs) != 1 || evs[0].Reason != spans.EvictTTL || c.IdleCount() != 0 || k.Idle() != 0 {
		t.Errorf("an acquire 251 after the last activity (KeyOf at 200 is none): known %v, evictions %v, idle %d; want the key forgotten, its expired session closed for ttl", known, evs, c.IdleCount())
	}
	if got := c.Counts().Evictions[spans.EvictTTL]; got != 1 {
		t.Errorf("ttl evictions %d, want 1", got)
	}
}

// TestForgetIfUnusedForgetsOnlyAKeyHoldingNothing pins ForgetIfUnused: a
// key with no idle session and no lease is forgotten (its next miss is
// cold); one with an idle session or a lease out is kept, and so is the
// key that has since replaced the one given.
func TestForgetIfUnusedForgetsOnlyAKeyHoldingNothing(t *testing.T) {
	tests := []struct {
		name   string
		setup  func(c *core) *idle.Key[string, int, struct{}]
		forget bool
	}{
		{"nothing held", func(c *core) *idle.Key[string, int, struct{}] {
			k, _, _ := c.KeyOf("a", 0, nil)
			return k
		}, true},
		{"an idle session", func(c *core) *idle.Key[string, int, struct{}] {
			e, _ := lease(c, "a", 0)
			c.Release(e, 1, "", nil)
			return e.Key()
		}, false},
		{"a lease out", func(c *core) *idle.Key[string, int, struct{}] {
			e, _ := lease(c, "a", 0)
			return e.Key()
		}, false},
		{"a shared lease out", func(c *core) *idle.Key[string, int, struct{}] {
			k, known, _ := c.Begin("a", 0, nil)
			c.Miss(k, c.Cause(k, known, false), 0)
			c.Dialed(k, 1, true)
			return k
		}, false},
		{"replaced since", func(c *core) *idle.Key[string, int, struct{}] {
			old, _, _ := c.KeyOf("a", 0, nil)
			c.BeginLazy("a", 251, nil) // old abandoned: a new key
			return old
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50})
			c.ForgetIfUnused(tc.setup(c))
			if forgotten := c.Keys() == 0; forgotten != tc.forget {
				t.Errorf("keys %d; want forgotten %v", c.Keys(), tc.forget)
			}
		})
	}
}

// TestBeginLazyMarksTheKeyActiveAndNeverSweeps pins the two ways an
// acquire begins: both mark the key active (a key is forgotten 250 after
// its last acquire, not its first), and only Begin sweeps another key's
// expired session.
func TestBeginLazyMarksTheKeyActiveAndNeverSweeps(t *testing.T) {
	set := idle.Settings{TTL: 10, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50}
	begins := []struct {
		name  string
		begin func(c *core, key string, now int64) (bool, []idle.Eviction[string, int, struct{}])
		sweep bool
	}{
		{"Begin", func(c *core, key string, now int64) (bool, []idle.Eviction[string, int, struct{}]) {
			_, known, evs := c.Begin(key, now, nil)
			return known, evs
		}, true},
		{"BeginLazy", func(c *core, key string, now int64) (bool, []idle.Eviction[string, int, struct{}]) {
			_, known, evs := c.BeginLazy(key, now, nil)
			return known, evs
		}, false},
	}
	for _, b := range begins {
		t.Run(b.name, func(t *testing.T) {
			c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50})
			b.begin(c, "a", 0)
			b.begin(c, "a", 200)
			if _, known, _ := c.BeginLazy("a", 450, nil); !known {
				t.Error("a key acquired at 200 is forgotten at 450")
			}

			c = newCore(set)
			e, _ := lease(c, "a", 100) // the first acquire: the sweep interval starts
			c.Release(e, 101, "", nil)
			if _, evs := b.begin(c, "b", 150); (len(evs) == 1) != b.sweep || c.IdleCount() != 1-len(evs) {
				t.Errorf("another key's acquire at the sweep's time: evictions %v, idle %d; want swept %v", evs, c.IdleCount(), b.sweep)
			}
		})
	}
}

// TestANegativeSweepIntervalIsTheTTL pins SweepInterval < 0: acquires
// sweep every TTL (not at every acquire), and a key is forgotten three TTLs
// after its last activity.
func TestANegativeSweepIntervalIsTheTTL(t *testing.T) {
	set := idle.Settings{TTL: 10, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: -1}
	c := newCore(set)
	e, _ := lease(c, "a", 100) // the interval starts at 100
	c.Release(e, 100, "", nil) // expires after 110
	for _, step := range []struct {
		at    int64
		swept int
	}{{105, 0}, {110, 0}, {115, 0}, {120, 1}} {
		if _, _, evs := c.Begin("b", step.at, nil); len(evs) != step.swept {
			t.Errorf("acquire at %d: %d evictions, want %d (a sweep at 110, nothing expired; the next at 120)", step.at, len(evs), step.swept)
		}
	}

	for _, tc := range []struct {
		at    int64
		known bool
	}{{30, true}, {31, false}} {
		c := newCore(set)
		c.BeginLazy("a", 0, nil)
		if _, known, _ := c.BeginLazy("a", tc.at, nil); known != tc.known {
			t.Errorf("acquire at %d after one at 0, TTL 10: known %v, want %v", tc.at, known, tc.known)
		}
	}
}

// TestASecondSharedDialLeavesTheFirstShared pins that of two dials of a
// sessionless key in flight at once, the first to end is the key's shared
// entry; the second serves its own acquire only.
func TestASecondSharedDialLeavesTheFirstShared(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	k, known, _ := c.Begin("a", 0, nil)
	c.Miss(k, c.Cause(k, known, false), 0)
	c.Miss(k, c.Cause(k, true, false), 1)
	first := c.Dialed(k, 1, true)
	c.Dialed(k, 2, true)
	if k.Shared() != first {
		t.Errorf("the key's shared entry is session %d, want 1, the first dialed", k.Shared().Value)
	}
}

// TestCountsHandsOutCopies pins that the counts returned are the caller's:
// writing to their maps changes none of the core's.
func TestCountsHandsOutCopies(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: -1, MaxIdle: 8})
	e, _ := lease(c, "a", 0)
	c.Release(e, 1, "", nil)
	got := c.Counts()
	got.Evictions[spans.EvictIdleLimit] = 99
	got.MissReasons[spans.MissCold] = 99
	if again := c.Counts(); again.Evictions[spans.EvictIdleLimit] != 1 || again.MissReasons[spans.MissCold] != 1 {
		t.Errorf("counts after writing to a copy: %+v, want 1 idle_limit eviction and 1 cold miss", again)
	}
}
