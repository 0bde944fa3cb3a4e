package idle_test

import (
	"maps"
	"testing"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// TestCountsFollowEveryDecision pins the core's counts: acquires, hits and
// misses by cause as they are decided, evictions by reason (a release after
// Close counted for pool_closed), the in-use peak kept after leases end.
func TestCountsFollowEveryDecision(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	a, _ := lease(c, "a", 0) // cold
	b, _ := lease(c, "a", 1) // concurrent
	c.Release(a, 5, "", nil)
	c.Release(b, 6, "", nil) // a second idle session over the per-key limit of 1, but the peak of 2 keeps it
	lease(c, "a", 7)         // hit
	if c.Counts().PeakInUse != 2 {
		t.Errorf("peak in use %d after a hit with one lease out, want the earlier 2", c.Counts().PeakInUse)
	}
	x, _ := lease(c, "b", 8) // cold
	c.Close(nil)             // a's other idle session closed
	c.Release(x, 9, "", nil) // closed: evicted at once
	got := c.Counts()
	if got.Acquires != 4 || got.Hits != 1 || got.Misses != 3 {
		t.Errorf("acquires %d hits %d misses %d, want 4, 1, 3", got.Acquires, got.Hits, got.Misses)
	}
	if want := map[string]int64{spans.MissCold: 2, spans.MissConcurrent: 1}; !maps.Equal(got.MissReasons, want) {
		t.Errorf("miss reasons %v, want %v", got.MissReasons, want)
	}
	if want := map[string]int64{spans.EvictPoolClosed: 2}; !maps.Equal(got.Evictions, want) {
		t.Errorf("evictions %v, want %v", got.Evictions, want)
	}
	if got.PeakInUse != 2 || c.InUse() != 1 {
		t.Errorf("peak in use %d, in use %d; want 2 and the one lease still out", got.PeakInUse, c.InUse())
	}
	got.MissReasons[spans.MissCold] = 99
	if c.Counts().MissReasons[spans.MissCold] != 2 {
		t.Error("Counts hands out the core's own map")
	}
}

// TestTheGlobalCapClosesInReleaseOrder pins the LRU: with room for two
// idle sessions, releasing a, b, c, d closes a then b, the least recently
// released, and a taken session leaves the order of the rest as it was.
func TestTheGlobalCapClosesInReleaseOrder(t *testing.T) {
	c := newCore(idle.Settings{TTL: 1000, MaxIdlePerKey: 1, MaxIdle: 2})
	es := map[string]*idle.Entry[string, int, struct{}]{}
	for i, k := range []string{"a", "b", "c", "d", "e"} {
		es[k], _ = lease(c, k, int64(i))
	}
	var closed []string
	release := func(k string, at int64) {
		_, evs := c.Release(es[k], at, "", nil)
		for _, ev := range evs {
			closed = append(closed, ev.Entry.Key().Name())
		}
	}
	release("a", 10)
	release("b", 11)
	release("c", 12)
	lease(c, "b", 13) // a hit: b leaves the idle set, c stays
	release("d", 14)
	release("e", 15)
	if want := []string{"a", "c"}; len(closed) != 2 || closed[0] != want[0] || closed[1] != want[1] {
		t.Errorf("closed %v, want %v", closed, want)
	}
	if c.IdleCount() != 2 {
		t.Errorf("idle %d, want the cap of 2", c.IdleCount())
	}
}

// TestASweepIsDueExactlyAnIntervalAfterTheLast pins when an acquire
// sweeps: the first acquire only starts the interval, one exactly an
// interval later sweeps (closing another key's expired session), one a
// nanosecond earlier does not.
func TestASweepIsDueExactlyAnIntervalAfterTheLast(t *testing.T) {
	for _, tc := range []struct {
		at    int64
		swept bool
	}{{149, false}, {150, true}} {
		c := newCore(idle.Settings{TTL: 10, MaxIdlePerKey: 1, MaxIdle: 8, SweepInterval: 50})
		e, _ := lease(c, "a", 100) // the first acquire: the interval starts at 100
		c.Release(e, 101, "", nil)
		_, _, evs := c.Begin("b", tc.at, nil) // another key
		if swept := len(evs) == 1; swept != tc.swept {
			t.Errorf("acquire at %d: %d evictions, want a sweep %v", tc.at, len(evs), tc.swept)
		}
	}
}

// TestAKeepNoneReleaseIsCountedAndEvicted pins keep-none (MaxIdlePerKey
// negative): every clean release closes its session at once, counted as an
// idle_limit eviction, and the key's next miss is evicted.
func TestAKeepNoneReleaseIsCountedAndEvicted(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: -1, MaxIdle: 8})
	e, _ := lease(c, "a", 0)
	closeIt, evs := c.Release(e, 1, "", nil)
	if closeIt || len(evs) != 1 || evs[0].Reason != spans.EvictIdleLimit || c.IdleCount() != 0 {
		t.Fatalf("release: close %v, evictions %v, idle %d; want one idle_limit eviction, nothing idle", closeIt, evs, c.IdleCount())
	}
	if got := c.Counts().Evictions[spans.EvictIdleLimit]; got != 1 {
		t.Errorf("idle_limit evictions %d, want 1", got)
	}
}

// TestASharedEntryGoesIdleWithItsLastCleanUser pins that a sessionless
// key's shared entry, released clean by its last user, is idle and no
// longer the key's shared entry: the next acquire takes it from the idle
// set, never through Shared while it sits there.
func TestASharedEntryGoesIdleWithItsLastCleanUser(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	k, known, _ := c.Begin("a", 0, nil)
	c.Miss(k, c.Cause(k, known, false), 0)
	e := c.Dialed(k, 1, true)
	c.Lease(e, 1)
	c.Release(e, 2, "", nil)
	if k.Shared() != e {
		t.Fatal("one user left: the entry is no longer shared")
	}
	c.Release(e, 3, "", nil)
	if k.Shared() != nil || c.IdleCount() != 1 || e.Leased() {
		t.Fatalf("last clean release: shared %v, idle %d, leased %v; want idle only", k.Shared() != nil, c.IdleCount(), e.Leased())
	}
	if got, _ := c.TakeIdle(k, 4, nil); got != e {
		t.Error("the shared entry is not in the idle set")
	}
}

// TestAnOldSharedEntryLeavesTheNewOneShared pins that a dropped shared
// entry's last release does not unshare the key's new shared entry: the
// next acquire still rides the new one.
func TestAnOldSharedEntryLeavesTheNewOneShared(t *testing.T) {
	c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
	k, known, _ := c.Begin("a", 0, nil)
	c.Miss(k, c.Cause(k, known, false), 0)
	old := c.Dialed(k, 1, true)
	c.Lease(old, 1)
	c.Release(old, 2, spans.MissAfterFailure, nil) // one user fails: old is dropped
	c.Miss(k, c.Cause(k, true, false), 3)
	fresh := c.Dialed(k, 2, true)
	if closeIt, _ := c.Release(old, 4, "", nil); !closeIt {
		t.Fatal("the dropped entry's last user did not close it")
	}
	if k.Shared() != fresh {
		t.Error("the old entry's last release unshared the new one")
	}
}

// hitsOf runs leases (key "a", start and end) through c and counts hits.
func hitsOf(c *core, leases [][2]int64) int {
	type out struct {
		e   *idle.Entry[string, int, struct{}]
		end int64
	}
	var open []out
	hits := 0
	for _, l := range leases {
		for i := 0; i < len(open); {
			if open[i].end <= l[0] {
				c.Release(open[i].e, open[i].end, "", nil)
				open = append(open[:i], open[i+1:]...)
				continue
			}
			i++
		}
		e, cause := lease(c, "a", l[0])
		if cause == "" {
			hits++
		}
		open = append(open, out{e, l[1]})
	}
	return hits
}

// TestAPeakNeverLowersTheMinimumAndRestartsFromItsOwnTime pins the
// peak-following limit's two other edges: a recent peak below
// MaxIdlePerKey never lowers what the key keeps, and the peak restarts a
// TTL after it was reached, however busy the key was since.
func TestAPeakNeverLowersTheMinimumAndRestartsFromItsOwnTime(t *testing.T) {
	t.Run("a peak of one keeps the minimum of two", func(t *testing.T) {
		c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 2, MaxIdle: 8})
		// Two sessions from a burst at 0; a hit at 102 restarts the peak at
		// one; both sessions still fresh are kept, and the burst at 104
		// hits twice.
		if got := hitsOf(c, [][2]int64{{0, 5}, {1, 6}, {102, 103}, {104, 110}, {105, 110}}); got != 3 {
			t.Errorf("%d hits, want 3", got)
		}
	})
	t.Run("a minimum of 0 with peak sizing keeps the recent peak", func(t *testing.T) {
		c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 0, MaxIdle: 8})
		if got := hitsOf(c, [][2]int64{{0, 5}, {10, 20}}); got != 1 {
			t.Errorf("%d hits, want 1", got)
		}
	})
	t.Run("a busy key's peak still restarts a TTL after it", func(t *testing.T) {
		c := newCore(idle.Settings{TTL: 100, MaxIdlePerKey: 1, MaxIdle: 8})
		// A peak of three at 2, single leases every 40 keep the key busy
		// (hits at 40, 80, 120 and 160); the burst of two at 160 is a new
		// peak, so both of its sessions stay idle and the burst at 170
		// hits twice.
		leases := [][2]int64{{0, 5}, {1, 6}, {2, 7}, {40, 41}, {80, 81}, {120, 121}, {160, 165}, {161, 165}, {170, 175}, {171, 175}}
		if got := hitsOf(c, leases); got != 6 {
			t.Errorf("%d hits, want 6", got)
		}
	})
}
