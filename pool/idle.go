package pool

import (
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// This file is the only one that changes the pool's session state: the
// per-key idle lists, the global LRU, the key table, the lease counts
// (leaseLocked, unleaseLocked) and each key's last drop (keyState.lastDrop,
// written only by the functions here that end a session's or an acquire's
// life). Every function here requires p.mu held (the Locked suffix says so)
// and none does I/O: sessions to close are returned and closed by the caller
// after unlocking.

// keyState is the bookkeeping of one key.
type keyState struct {
	key string
	// idle holds the key's idle sessions, most recently released last.
	idle []*conn
	// leased counts sessions of the key out on lease or being dialed.
	leased int
	// lastDrop is the miss reason implied by how the key's last session
	// went away ("" while none did): the next miss that finds no idle
	// session and no concurrent lease carries it.
	lastDrop string
	// lastActive is when the key was last acquired or released.
	lastActive time.Time
	// metrics holds the key's prebuilt metric options; nil when off.
	metrics *keyMetrics
	// revision is the MCP revision the key's last handshake negotiated
	// ("" before the first): the next dial uses it directly.
	revision string
	// sessionless is true when the key's last handshake got no session
	// id: its sessions are shared, not leased exclusively.
	sessionless bool
	// shared is the sessionless key's client while leases use it; nil when
	// none does (an unused shared client waits in idle like any session).
	shared *conn
	// dialing is closed when the key's in-flight handshake ends; nil when
	// none is in flight or the key is known to have sessions (whose
	// concurrent acquires dial their own).
	dialing chan struct{}
	// peak is the most sessions the key had leased at once since peakAt;
	// the key keeps that many idle (see idleLimitLocked). It restarts from
	// the current count once it is older than the idle TTL, so a burst's
	// sessions are kept for the next burst and let go when bursts stop.
	peak   int
	peakAt time.Time
	// freed is closed (and cleared) when one of the key's leases ends;
	// acquires waiting for the in-use cap wait on it. nil: no waiter.
	freed chan struct{}
}

// reserveLocked counts one more lease (or dial) of the key and updates its
// recent peak. p.mu must be held.
func (p *Pool) reserveLocked(ks *keyState, now time.Time) {
	ks.leased++
	if ks.leased >= ks.peak || now.Sub(ks.peakAt) > p.opts.IdleTTL {
		ks.peak, ks.peakAt = ks.leased, now
	}
}

// unreserveLocked counts one lease (or dial) of the key less and wakes the
// acquires waiting for its in-use cap. p.mu must be held.
func (p *Pool) unreserveLocked(ks *keyState) {
	ks.leased--
	if ks.freed != nil {
		close(ks.freed)
		ks.freed = nil
	}
}

// leaseLocked marks c leased: exclusively, or as one more user of a
// sessionless key's shared client. The key's reservation (reserveLocked) is
// the caller's. p.mu must be held.
func (p *Pool) leaseLocked(c *conn) {
	if c.sessionless {
		c.users++
		if c.users == 1 {
			p.inUse++
			p.stats.peakInUse = max(p.stats.peakInUse, p.inUse)
			c.gen++
			if c.ks.shared == nil {
				c.ks.shared = c
			}
		}
		return
	}
	c.gen++
	c.leased = true
	p.inUse++
	p.stats.peakInUse = max(p.stats.peakInUse, p.inUse)
}

// unleaseLocked ends one lease of c, the one place a lease ends: an
// exclusive lease, or one user of a shared client. It ends the key's
// reservation (waking acquires that wait for the in-use cap) and marks the
// key active at now. drop is "" for a clean end; otherwise the session
// failed and will not be reused, and drop is the miss reason the key's next
// miss carries (spans.MissAfterFailure, spans.MissHealthCheck): a shared
// client is marked dropped, so later acquires make a new one. It reports
// whether c has no lease left (always true for an exclusive lease), when the
// caller returns c to idle or closes it. p.mu must be held.
func (p *Pool) unleaseLocked(c *conn, now time.Time, drop string) (last bool) {
	ks := c.ks
	p.unreserveLocked(ks)
	ks.lastActive = now
	if drop != "" {
		ks.lastDrop = drop
	}
	if !c.sessionless {
		c.leased = false
		p.inUse--
		return true
	}
	c.users--
	if drop != "" {
		c.dropped = true
	}
	if (drop != "" || c.users == 0) && ks.shared == c {
		ks.shared = nil
	}
	if c.users > 0 {
		return false
	}
	p.inUse--
	return true
}

// acquireFailedLocked records an acquire of ks that ends with no session
// (a failed dial, a health check cut short by the caller): the key's next
// miss is after_failure. p.mu must be held.
func (p *Pool) acquireFailedLocked(ks *keyState) {
	ks.lastDrop = spans.MissAfterFailure
}

// idleLimitLocked is how many idle sessions the key may keep: its recent
// in-use peak (within the idle TTL), at least Options.MaxIdlePerKey. Keeping
// what the last burst needed avoids closing sessions the next one dials a
// millisecond later; the global MaxIdle cap still bounds the total.
// p.mu must be held.
func (p *Pool) idleLimitLocked(ks *keyState, now time.Time) int {
	limit := p.opts.MaxIdlePerKey
	if !p.opts.FixedIdlePerKey && ks.peak > limit && now.Sub(ks.peakAt) <= p.opts.IdleTTL {
		limit = ks.peak
	}
	return limit
}

// mayShare reports whether the key's sessions may be shared: its server is
// sessionless, or not known yet. Concurrent acquires of such a key wait for
// its in-flight handshake instead of making their own.
func (ks *keyState) mayShare() bool { return ks.revision == "" || ks.sessionless }

// eviction is an idle session removed from the pool, to be closed.
type eviction struct {
	c      *conn
	reason string
}

// keyLocked returns the state of key, creating it on first use. The second
// result is false for a key this pool has no memory of (a cold miss).
func (p *Pool) keyLocked(key string) (*keyState, bool) {
	ks, ok := p.keys[key]
	if !ok {
		ks = &keyState{key: key, metrics: p.inst.newKeyMetrics(key)}
		p.keys[key] = ks
	}
	return ks, ok
}

// expiredLocked reports whether an idle session has outlived the idle TTL:
// idle strictly longer than it (exactly IdleTTL is still fresh; see
// Options.IdleTTL). The lazy path (takeIdleLocked) and the sweep share it.
func (p *Pool) expiredLocked(c *conn, now time.Time) bool {
	return now.Sub(c.idleSince) > p.opts.IdleTTL
}

// takeIdleLocked removes and returns the key's most recently released idle
// session, or nil. Idle sessions past their TTL are appended to evs: since the
// list is ordered by release time, an expired most-recent one means all are.
func (p *Pool) takeIdleLocked(ks *keyState, now time.Time, evs []eviction) (*conn, []eviction) {
	n := len(ks.idle)
	if n == 0 {
		return nil, evs
	}
	c := ks.idle[n-1]
	if p.expiredLocked(c, now) {
		for len(ks.idle) > 0 {
			evs = p.evictLocked(ks.idle[0], spans.EvictTTL, spans.MissTTL, evs)
		}
		return nil, evs
	}
	ks.idle[n-1] = nil
	ks.idle = ks.idle[:n-1]
	p.lruRemoveLocked(c)
	return c, evs
}

// putIdleLocked returns a cleanly released session to the idle set, then
// enforces the per-key and global caps. A pool that is closed, or keeps no
// idle sessions, evicts the session itself.
func (p *Pool) putIdleLocked(c *conn, now time.Time, evs []eviction) []eviction {
	ks := c.ks
	if p.closed {
		return append(evs, eviction{c, spans.EvictPoolClosed})
	}
	if p.opts.MaxIdlePerKey < 0 {
		ks.lastDrop = spans.MissEvicted // never idle, so evictLocked has nothing to remove
		return append(evs, eviction{c, spans.EvictIdleLimit})
	}
	c.idleSince = now
	ks.idle = append(ks.idle, c)
	p.lruPushLocked(c)
	if len(ks.idle) > p.idleLimitLocked(ks, now) {
		// The key keeps a newer idle session, so no miss follows: no drop.
		evs = p.evictLocked(ks.idle[0], spans.EvictIdleLimit, "", evs)
	}
	for p.idleCount > p.opts.MaxIdle {
		evs = p.evictLocked(p.lruHead, spans.EvictLRU, spans.MissEvicted, evs)
	}
	return evs
}

// evictLocked takes the idle session c out of the pool for the reason (a
// spans.Evict* value) and appends it to evs for closing. drop, when not "",
// is the miss reason the key's next miss carries (see keyState.lastDrop).
func (p *Pool) evictLocked(c *conn, reason, drop string, evs []eviction) []eviction {
	p.removeIdleLocked(c)
	if drop != "" {
		c.ks.lastDrop = drop
	}
	return append(evs, eviction{c, reason})
}

// putPrewarmedLocked puts a session dialed for Options.Prewarm idle, as a
// release would, the key counted active from now (so the sweep does not
// forget it before its first acquire). p.mu must be held.
func (p *Pool) putPrewarmedLocked(c *conn, now time.Time, evs []eviction) []eviction {
	c.ks.lastActive = now
	return p.putIdleLocked(c, now, evs)
}

// forgetUnusedKeyLocked forgets a key that holds nothing (no idle session,
// no lease, no shared client), as the sweep forgets an abandoned one, so
// that its next miss is cold: a failed pre-warm dial leaves no trace.
// p.mu must be held.
func (p *Pool) forgetUnusedKeyLocked(ks *keyState) {
	if len(ks.idle) == 0 && ks.leased == 0 && ks.shared == nil {
		delete(p.keys, ks.key)
	}
}

// removeIdleLocked takes one idle session out of its key's list and the LRU.
func (p *Pool) removeIdleLocked(c *conn) {
	ks := c.ks
	for i, x := range ks.idle {
		if x == c {
			copy(ks.idle[i:], ks.idle[i+1:])
			ks.idle[len(ks.idle)-1] = nil
			ks.idle = ks.idle[:len(ks.idle)-1]
			break
		}
	}
	p.lruRemoveLocked(c)
}

// sweepLocked evicts every idle session past its TTL, oldest first, and
// forgets keys that have had nothing open for twice the TTL, so abandoned
// keys hold neither sessions nor memory. A forgotten key's next miss counts
// as cold: the pool no longer knows it.
func (p *Pool) sweepLocked(now time.Time, evs []eviction) []eviction {
	p.lastSweep = now
	for c := p.lruHead; c != nil && p.expiredLocked(c, now); c = p.lruHead {
		evs = p.evictLocked(c, spans.EvictTTL, spans.MissTTL, evs)
	}
	for key, ks := range p.keys {
		if len(ks.idle) == 0 && ks.leased == 0 && now.Sub(ks.lastActive) > 2*p.opts.IdleTTL {
			delete(p.keys, key)
		}
	}
	return evs
}

// sweepIfDueLocked runs sweepLocked when the sweep interval has passed, so
// acquires pay for a sweep at most once per interval.
func (p *Pool) sweepIfDueLocked(now time.Time, evs []eviction) []eviction {
	if p.lastSweep.IsZero() {
		p.lastSweep = now
		return evs
	}
	interval := p.opts.SweepInterval
	if interval < 0 {
		interval = p.opts.IdleTTL
	}
	if now.Sub(p.lastSweep) < interval {
		return evs
	}
	return p.sweepLocked(now, evs)
}

// drainIdleLocked removes every idle session; used by Close.
func (p *Pool) drainIdleLocked(evs []eviction) []eviction {
	for c := p.lruHead; c != nil; c = p.lruHead {
		evs = p.evictLocked(c, spans.EvictPoolClosed, "", evs)
	}
	return evs
}

// The global LRU is an intrusive doubly linked list through the idle
// sessions, least recently released at the head, so that pushes and removals
// allocate nothing on the hit path.

func (p *Pool) lruPushLocked(c *conn) {
	c.prev, c.next = p.lruTail, nil
	if p.lruTail != nil {
		p.lruTail.next = c
	} else {
		p.lruHead = c
	}
	p.lruTail = c
	c.inLRU = true
	p.idleCount++
}

func (p *Pool) lruRemoveLocked(c *conn) {
	if !c.inLRU {
		return
	}
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		p.lruHead = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		p.lruTail = c.prev
	}
	c.prev, c.next, c.inLRU = nil, nil, false
	p.idleCount--
}
