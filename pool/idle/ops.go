package idle

import "github.com/mcptrace/mcptrace/spans"

// Begin starts an acquire of name at now: it sweeps when a sweep is due,
// returns the key (created on first use, or anew once abandoned: known is
// false then, and the miss is cold) and marks it active. Evicted sessions
// are appended to evs for the caller to close.
func (c *Core[K, S, D]) Begin(name K, now int64, evs []Eviction[K, S, D]) (*Key[K, S, D], bool, []Eviction[K, S, D]) {
	evs = c.sweepIfDue(now, evs)
	k, known, evs := c.key(name, now, evs)
	k.lastActive = now
	return k, known, evs
}

// BeginLazy is Begin without the sweep: a replay's. A sweep decides no
// cause (expired sessions and abandoned keys are dealt with lazily, to the
// same effect), but it touches every key at once, so a replay that meets a
// scope's acquires out of time order (a stream finalizing one trace after
// a later one) would let one key's late acquire forget another key early.
func (c *Core[K, S, D]) BeginLazy(name K, now int64, evs []Eviction[K, S, D]) (*Key[K, S, D], bool, []Eviction[K, S, D]) {
	k, known, evs := c.key(name, now, evs)
	k.lastActive = now
	return k, known, evs
}

// KeyOf returns the key of name at now as Begin does, without marking it
// active: what a pre-warm dial reserves its session under.
func (c *Core[K, S, D]) KeyOf(name K, now int64, evs []Eviction[K, S, D]) (*Key[K, S, D], bool, []Eviction[K, S, D]) {
	return c.key(name, now, evs)
}

func (c *Core[K, S, D]) key(name K, now int64, evs []Eviction[K, S, D]) (*Key[K, S, D], bool, []Eviction[K, S, D]) {
	k, ok := c.keys[name]
	if ok && c.abandoned(k, now) {
		for len(k.idle) > 0 {
			evs = c.evict(k.idle[0], spans.EvictTTL, "", 0, evs)
		}
		delete(c.keys, name)
		ok = false
	}
	if !ok {
		k = &Key[K, S, D]{name: name, lastActive: now}
		if c.newData != nil {
			k.Data = c.newData(name)
		}
		c.keys[name] = k
	}
	return k, ok, evs
}

// TakeIdle removes and returns the key's most recently released idle
// session, or nil. When that one has outlived the TTL, all have (the list
// is in release order): they are evicted for ttl and nil is returned.
func (c *Core[K, S, D]) TakeIdle(k *Key[K, S, D], now int64, evs []Eviction[K, S, D]) (*Entry[K, S, D], []Eviction[K, S, D]) {
	n := len(k.idle)
	if n == 0 {
		return nil, evs
	}
	e := k.idle[n-1]
	if c.Expired(e.idleSince, now) {
		for len(k.idle) > 0 {
			evs = c.evict(k.idle[0], spans.EvictTTL, spans.MissTTL, c.ExpiresAt(k.idle[0].idleSince), evs)
		}
		return nil, evs
	}
	k.idle[n-1] = nil
	k.idle = k.idle[:n-1]
	c.lruRemove(e)
	return e, evs
}

// Lease hands e (taken idle, or the key's shared entry) to one more user
// at now. Whether that is a hit is the caller's to say (CountHit), after a
// health check if it makes one.
func (c *Core[K, S, D]) Lease(e *Entry[K, S, D], now int64) {
	c.reserve(e.key, now)
	c.lease(e)
}

// CountHit counts an acquire that reused a session.
func (c *Core[K, S, D]) CountHit() {
	c.counts.Acquires++
	c.counts.Hits++
}

// Cause is why an acquire of k finds no session to reuse: redial (a second
// attempt), cold (a key the core did not know), concurrent (another lease
// or dial of the key is out), else what removed the key's last session,
// else unexplained.
func (c *Core[K, S, D]) Cause(k *Key[K, S, D], known, redial bool) string {
	switch {
	case redial:
		return spans.MissRedial
	case !known:
		return spans.MissCold
	case k.reserved > 0:
		return spans.MissConcurrent
	case k.lastDrop != "":
		return k.lastDrop
	}
	return spans.MissUnexplained
}

// Miss counts a miss of k for cause and reserves the dial it makes at now.
// The dial ends with Dialed or DialFailed.
func (c *Core[K, S, D]) Miss(k *Key[K, S, D], cause string, now int64) {
	c.counts.Acquires++
	c.counts.Misses++
	c.counts.MissReasons[cause]++
	c.reserve(k, now)
}

// MissUndialed counts a miss of k for cause that ends without a dial (the
// caller gave up after a failed health check): the key's next miss is
// after_failure.
func (c *Core[K, S, D]) MissUndialed(k *Key[K, S, D], cause string) {
	c.counts.Acquires++
	c.counts.Misses++
	c.counts.MissReasons[cause]++
	setDrop(k, spans.MissAfterFailure, k.lastActive)
}

// Dialed ends a Miss's dial with a session, leased to its acquire; shared
// says it serves every acquire of its sessionless key at once.
func (c *Core[K, S, D]) Dialed(k *Key[K, S, D], s S, shared bool) *Entry[K, S, D] {
	e := &Entry[K, S, D]{Value: s, key: k, shared: shared}
	c.lease(e)
	return e
}

// DialFailed ends a Miss's dial without a session: the key's next miss
// is after_failure.
func (c *Core[K, S, D]) DialFailed(k *Key[K, S, D]) {
	k.reserved--
	setDrop(k, spans.MissAfterFailure, k.lastActive)
}

// Release ends one lease of e at now. drop is "" for a clean end, or the
// cause the key's next miss carries (spans.MissAfterFailure,
// spans.MissHealthCheck): the session will not be reused. closeIt says the
// caller must close e now (its last lease ended and it was dropped);
// a clean last release puts e idle, under the caps, and the sessions that
// costs are appended to evs.
func (c *Core[K, S, D]) Release(e *Entry[K, S, D], now int64, drop string, evs []Eviction[K, S, D]) (closeIt bool, out []Eviction[K, S, D]) {
	if !c.unlease(e, now, drop) {
		return false, evs
	}
	if drop != "" || e.dropped {
		return true, evs
	}
	return false, c.putIdle(e, now, evs)
}

// HealthFailed ends the lease of e, taken idle, whose health check failed
// at now: the session is closed (counted as an eviction for
// health_check) and the key's next miss carries health_check.
func (c *Core[K, S, D]) HealthFailed(e *Entry[K, S, D], now int64) {
	c.unlease(e, now, spans.MissHealthCheck)
	c.counts.Evictions[spans.EvictHealthCheck]++
}

// Prewarmed puts a pre-warm dial's session idle at now, its key counted
// active from then, as a release would; shared as in Dialed.
func (c *Core[K, S, D]) Prewarmed(k *Key[K, S, D], s S, shared bool, now int64, evs []Eviction[K, S, D]) (*Entry[K, S, D], []Eviction[K, S, D]) {
	e := &Entry[K, S, D]{Value: s, key: k, shared: shared}
	k.lastActive = now
	return e, c.putIdle(e, now, evs)
}

// ForgetIfUnused forgets k when it holds nothing (no idle session, no
// lease, no shared entry): a failed pre-warm dial leaves no trace, and the
// key's next miss is cold.
func (c *Core[K, S, D]) ForgetIfUnused(k *Key[K, S, D]) {
	if len(k.idle) == 0 && k.reserved == 0 && k.shared == nil && c.keys[k.name] == k {
		delete(c.keys, k.name)
	}
}

// reserve counts one more lease or dial of k at now and updates its recent
// peak, which restarts from the current count once older than the TTL.
func (c *Core[K, S, D]) reserve(k *Key[K, S, D], now int64) {
	k.reserved++
	if k.reserved >= k.peak || elapsed(k.peakAt, now) > c.ttl {
		k.peak, k.peakAt = k.reserved, now
	}
}

// lease marks e out on one more lease.
func (c *Core[K, S, D]) lease(e *Entry[K, S, D]) {
	e.users++
	if e.users > 1 {
		return
	}
	c.inUse++
	c.counts.PeakInUse = max(c.counts.PeakInUse, c.inUse)
	if e.shared && e.key.shared == nil {
		e.key.shared = e
	}
}

// unlease ends one lease of e at now and reports whether e has no lease
// left. A drop marks a shared entry dropped, so later acquires make a new
// one.
func (c *Core[K, S, D]) unlease(e *Entry[K, S, D], now int64, drop string) (last bool) {
	k := e.key
	k.reserved--
	k.lastActive = now
	if drop != "" {
		setDrop(k, drop, now)
		if e.shared {
			e.dropped = true
		}
	}
	e.users--
	if k.shared == e && (drop != "" || e.users == 0) {
		k.shared = nil
	}
	if e.users > 0 {
		return false
	}
	c.inUse--
	return true
}
