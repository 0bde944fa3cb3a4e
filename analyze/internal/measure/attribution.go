package measure

import (
	"cmp"

	"github.com/mcptrace/mcptrace/analyze/internal/minheap"
	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// The miss attribution replays each pool scope's acquires, in time order,
// through the pool's own idle policy (package idle, the code the pool
// decides with), under the settings the scope recorded on its acquire
// spans, or the assumed ones where it recorded none. The dump says which
// acquires hit; the core says why each miss found no session: the same
// answer the pool gave, for the same reasons.

// replayCore is the idle core of one pool scope's replay.
type replayCore = idle.Core[int32, struct{}, struct{}]

// replayEntry is one session in it.
type replayEntry = idle.Entry[int32, struct{}, struct{}]

// scopeReplay is one pool scope's replay between two advances: its core
// and the leases still out, to end in time order.
type scopeReplay struct {
	core *replayCore
	out  minheap.Heap[leaseEnd]
	seq  int64
	// assumed says the settings were assumed, not recorded.
	assumed bool
	// unusable says why the scope's recorded settings could not be
	// replayed under, so they were assumed ("" when it recorded none, or
	// they were used).
	unusable string
}

// leaseEnd is a lease (or a pre-warm dial) to end at end: seq orders
// ties as the acquires were replayed.
type leaseEnd struct {
	end, seq int64
	e        *replayEntry
	key      *idle.Key[int32, struct{}, struct{}]
	drop     string // the cause a failed lease leaves, "" clean
	prewarm  bool   // a pre-warm dial: its session goes idle at end
}

// cmpLeaseEnd orders lease ends by time, then as they were replayed.
func cmpLeaseEnd(a, b *leaseEnd) int {
	return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.seq, b.seq))
}

// NewScopeReplay returns the replay of a scope under set.
func NewScopeReplay(set idle.Settings, assumed bool) *scopeReplay {
	return &scopeReplay{core: idle.New[int32, struct{}, struct{}](set, nil), assumed: assumed, out: minheap.New(cmpLeaseEnd)}
}

// endUntil ends every lease that ended at or before t: a lease ending when
// another acquire starts is not concurrent with it (the pool releases
// before it acquires again).
func (r *scopeReplay) endUntil(t int64) {
	for r.out.Len() > 0 && r.out.Min().end <= t {
		x := r.out.Pop()
		if x.prewarm {
			r.core.Prewarmed(x.key, struct{}{}, false, x.end, nil)
			continue
		}
		r.core.Release(x.e, x.end, x.drop, nil)
	}
}

// push schedules x's end.
func (r *scopeReplay) push(x leaseEnd) {
	r.seq++
	x.seq = r.seq
	r.out.Push(x)
}

// prewarm replays a pre-warm dial of key: the key is known from its start,
// its session idle from its end.
func (r *scopeReplay) prewarm(key int32, start, end int64) {
	r.endUntil(start)
	k, _, _ := r.core.KeyOf(key, start, nil)
	r.push(leaseEnd{end: end, key: k, prewarm: true}) // end ≥ start: record.Acquire.LeaseEnd
}

// Acquire replays one acquire of key and returns its cause ("" on a hit).
// hit is what the dump says; a session the core holds but the dump did
// not reuse is closed as the pool would a failed health check, for the
// cause health says (health_check, or unexplained: nothing the spans show
// kept it from reuse).
func (r *scopeReplay) Acquire(key int32, start, end int64, hit, redial, failed, health bool) string {
	r.endUntil(start)
	c := r.core
	k, known, _ := c.BeginLazy(key, start, nil)
	var e *replayEntry
	if !redial {
		e, _ = c.TakeIdle(k, start, nil)
	}
	cause := ""
	switch {
	case hit && e != nil:
		c.Lease(e, start)
	case hit:
		// The pool reused a session the replay does not hold (settings
		// larger than assumed, or a dump that starts mid-run).
		c.Miss(k, spans.MissUnexplained, start)
		e = c.Dialed(k, struct{}{}, false)
	default:
		if e != nil {
			c.Lease(e, start)
			drop := spans.MissUnexplained
			if health {
				drop = spans.MissHealthCheck
			}
			c.Release(e, start, drop, nil)
		}
		cause = c.Cause(k, known, redial)
		c.Miss(k, cause, start)
		e = c.Dialed(k, struct{}{}, false)
	}
	drop := ""
	if failed {
		drop = spans.MissAfterFailure
	}
	r.push(leaseEnd{end: end, e: e, drop: drop}) // end ≥ start: record.Acquire.LeaseEnd
	return cause
}
