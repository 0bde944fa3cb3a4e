package idle

import "github.com/mcptrace/mcptrace/spans"

// putIdle returns a cleanly released (or pre-warmed) session to the idle
// set at now, then enforces the per-key and global caps. A closed core, or
// one that keeps no idle session, evicts it at once.
func (c *Core[K, S, D]) putIdle(e *Entry[K, S, D], now int64, evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	k := e.key
	if c.closed {
		return c.count(append(evs, Eviction[K, S, D]{e, spans.EvictPoolClosed}))
	}
	if c.set.MaxIdlePerKey < 0 {
		setDrop(k, spans.MissEvicted, now) // never idle: nothing to remove
		return c.count(append(evs, Eviction[K, S, D]{e, spans.EvictIdleLimit}))
	}
	e.idleSince = now
	k.idle = append(k.idle, e)
	c.lruPush(e)
	if len(k.idle) > c.idleLimit(k, now) {
		// Where the key keeps a newer idle session no miss follows, so no
		// cause is left for one; a limit of 0 keeps none, and the key's
		// next miss is the caps'.
		drop := ""
		if len(k.idle) == 1 {
			drop = spans.MissEvicted
		}
		evs = c.evict(k.idle[0], spans.EvictIdleLimit, drop, now, evs)
	}
	for c.idleCount > c.set.MaxIdle {
		h := c.head
		reason, drop, at := spans.EvictLRU, spans.MissEvicted, now
		if c.Expired(h.idleSince, now) {
			// Dead already: it goes for its age, at its expiry, whenever a
			// sweep would have come, so the cause never depends on the
			// sweep's timing.
			reason, drop, at = spans.EvictTTL, spans.MissTTL, c.ExpiresAt(h.idleSince)
		}
		evs = c.evict(h, reason, drop, at, evs)
	}
	return evs
}

// idleLimit is how many idle sessions k may keep at now: its in-use peak
// within the TTL, at least MaxIdlePerKey (only MaxIdlePerKey when
// FixedPerKey). Keeping what the last burst needed avoids closing sessions
// the next one dials a moment later; MaxIdle still bounds the total.
func (c *Core[K, S, D]) idleLimit(k *Key[K, S, D], now int64) int {
	limit := c.set.MaxIdlePerKey
	if !c.set.FixedPerKey && k.peak > limit && elapsed(k.peakAt, now) <= c.ttl {
		limit = k.peak
	}
	return limit
}

// evict takes the idle entry e out for reason (a spans.Evict* value) and
// appends it to evs. drop, when not "", is the cause the key's next miss
// carries, as of at.
func (c *Core[K, S, D]) evict(e *Entry[K, S, D], reason, drop string, at int64, evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	k := e.key
	for i, x := range k.idle {
		if x == e {
			copy(k.idle[i:], k.idle[i+1:])
			k.idle[len(k.idle)-1] = nil
			k.idle = k.idle[:len(k.idle)-1]
			break
		}
	}
	c.lruRemove(e)
	setDrop(k, drop, at)
	c.counts.Evictions[reason]++
	return append(evs, Eviction[K, S, D]{e, reason})
}

// count counts the last eviction appended to evs (one made without evict:
// the session was never idle).
func (c *Core[K, S, D]) count(evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	c.counts.Evictions[evs[len(evs)-1].Reason]++
	return evs
}

// Sweep evicts every idle session past its TTL at now, least recently
// released first, and forgets the keys abandoned by then (see abandoned),
// so that keys no one calls hold neither sessions nor memory.
func (c *Core[K, S, D]) Sweep(now int64, evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	c.lastSweep, c.swept = now, true
	for e := c.head; e != nil && c.Expired(e.idleSince, now); e = c.head {
		evs = c.evict(e, spans.EvictTTL, spans.MissTTL, c.ExpiresAt(e.idleSince), evs)
	}
	for name, k := range c.keys {
		if len(k.idle) == 0 && c.abandoned(k, now) {
			delete(c.keys, name)
		}
	}
	return evs
}

// sweepIfDue sweeps when the sweep interval (the TTL when negative) has
// passed since the last sweep, so acquires pay for a sweep at most once
// per interval. The first call only starts the interval.
func (c *Core[K, S, D]) sweepIfDue(now int64, evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	if !c.swept {
		c.lastSweep, c.swept = now, true
		return evs
	}
	interval := int64(c.set.SweepInterval)
	if interval < 0 {
		interval = c.ttl
	}
	if elapsed(c.lastSweep, now) < interval {
		return evs
	}
	return c.Sweep(now, evs)
}

// Close evicts every idle session for pool_closed and makes every later
// release close its session instead of keeping it.
func (c *Core[K, S, D]) Close(evs []Eviction[K, S, D]) []Eviction[K, S, D] {
	c.closed = true
	for e := c.head; e != nil; e = c.head {
		evs = c.evict(e, spans.EvictPoolClosed, "", 0, evs)
	}
	return evs
}

// Closed reports whether Close was called.
func (c *Core[K, S, D]) Closed() bool { return c.closed }

// The LRU is an intrusive doubly linked list through the idle entries,
// least recently released at the head, so that the hit path allocates
// nothing.

func (c *Core[K, S, D]) lruPush(e *Entry[K, S, D]) {
	e.prev, e.next = c.tail, nil
	if c.tail != nil {
		c.tail.next = e
	} else {
		c.head = e
	}
	c.tail = e
	e.inLRU = true
	c.idleCount++
}

func (c *Core[K, S, D]) lruRemove(e *Entry[K, S, D]) {
	if !e.inLRU {
		return
	}
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next, e.inLRU = nil, nil, false
	c.idleCount--
}
