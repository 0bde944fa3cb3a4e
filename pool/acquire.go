package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// An acquire is a loop of decisions, each taken in one short critical
// section (next, dialPlan, dialDone, capDone, healthDone) that consults
// the idle core and returns what to do; every dial, ping, wait and close
// happens between them, with no lock held. No function here takes p.mu in
// one place and leaves it to another to release.

// stepKind is what an acquire does next.
type stepKind uint8

const (
	stepClosed        stepKind = iota // the pool is closed
	stepHit                           // reuse c (after a ping when ping is set)
	stepWaitHandshake                 // wait for the key's handshake in flight
	stepWaitCap                       // wait for one of the key's leases to end
	stepDial                          // dial, as planned
	stepFailFast                      // the breaker refuses the dial
)

// step is one decision of an acquire and what acting on it needs.
type step struct {
	kind  stepKind
	ks    *keyState
	known bool
	evs   []eviction // idle sessions the decision evicted, to close
	// stepHit
	c    *conn
	ping bool
	// stepWaitHandshake, stepWaitCap: what to wait for, the revision the
	// key knows (the span's hint)
	wait chan struct{}
	hint string
	// stepDial, stepFailFast
	plan dialPlan
	err  error
}

// dialPlan is a dial decided on: the miss's cause, whether it is the
// breaker's trial, the handshake channel it owns (nil: none), the revision
// to try first.
type dialPlan struct {
	reason     string
	trial      bool
	myDial     chan struct{}
	remembered string
}

// acquire is Acquire with the attempt number: attempt 2 is the redial after
// an expired session and always dials.
func (p *Pool) acquire(ctx context.Context, t *Target, attempt int) (Lease, error) {
	start := p.now()
	ctx, span := p.inst.startAcquire(ctx, t, attempt)
	var w capWait
	defer w.stop()
	for {
		s := p.next(t, attempt, start)
		p.closeEvicted(ctx, s.evs)
		switch s.kind {
		case stepClosed:
			err := fmt.Errorf("acquire %s: %w", t.shown, ErrPoolClosed)
			p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypePoolClosed, "", "")
			return Lease{}, err
		case stepHit:
			return p.hit(ctx, span, t, s, start)
		case stepWaitHandshake:
			if err := p.waitHandshake(ctx, span, t, s); err != nil {
				return Lease{}, err
			}
		case stepWaitCap:
			if err := p.waitInUseCap(ctx, span, t, s, attempt, &w); err != nil {
				return Lease{}, err
			}
		case stepFailFast:
			return Lease{}, p.failFast(ctx, span, t, nil, s.err)
		default:
			return p.dialLease(ctx, span, t, s.ks, s.plan, start)
		}
	}
}

// next decides, under p.mu, what an acquire of t at start does: it begins
// the acquire in the core and takes the key's shared client or an idle
// session (none on a redial), or waits for the key's handshake or in-use
// cap, or plans a dial.
func (p *Pool) next(t *Target, attempt int, start time.Time) step {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return step{kind: stepClosed}
	}
	now := ns(start)
	ks, known, evs := p.idle.Begin(t.key, now, nil)
	s := step{ks: ks, known: known, evs: evs}
	if attempt == 1 {
		e := ks.Shared() // a sessionless key's shared client serves every caller
		if e == nil {
			e, s.evs = p.idle.TakeIdle(ks, now, s.evs)
		}
		if e != nil {
			s.kind, s.c, s.ping = stepHit, e.Value, p.needsPingLocked(e.Value, start)
			p.idle.Lease(e, now)
			p.leaseLocked(e.Value)
			if !s.ping {
				p.idle.CountHit()
			}
			return s
		}
	}
	switch {
	case attempt == 1 && ks.Data.dialing != nil && mayShare(ks) && p.breakers[ks.Name()] == nil:
		// The key's handshake is in flight and its server may be
		// sessionless: wait for it rather than make a second one. A key
		// with failed dials on its breaker is not waited for: the breaker
		// decides, and fails fast while a trial is in flight.
		s.kind, s.wait, s.hint = stepWaitHandshake, ks.Data.dialing, ks.Data.revision
	case p.opts.MaxInUsePerKey > 0 && ks.Leased() >= p.opts.MaxInUsePerKey && !ks.Data.sessionless:
		// The key is at its in-use cap: wait for one of its leases to
		// end, then look again (an idle session, or room to dial).
		if ks.Data.freed == nil {
			ks.Data.freed = make(chan struct{})
		}
		s.kind, s.wait, s.hint = stepWaitCap, ks.Data.freed, ks.Data.revision
		p.stats.pending++
	default:
		s.kind = stepDial
		s.plan, s.err = p.planDialLocked(ks, known, attempt > 1, start)
		if s.err != nil {
			s.kind = stepFailFast
		}
	}
	return s
}

// planDialLocked decides a dial of ks: the miss's cause, the breaker's
// admission (its error refuses the dial, nothing counted), then the miss
// counted and reserved in the core, and the key's handshake channel taken
// when its server may be sessionless. p.mu must be held.
func (p *Pool) planDialLocked(ks *keyState, known, redial bool, start time.Time) (dialPlan, error) {
	plan := dialPlan{reason: p.idle.Cause(ks, known, redial), remembered: ks.Data.revision}
	trial, err := p.breakerAdmitLocked(ks.Name(), start)
	if err != nil {
		return plan, err
	}
	plan.trial = trial
	p.idle.Miss(ks, plan.reason, ns(start))
	p.stats.dials++
	if ks.Data.dialing == nil && mayShare(ks) {
		plan.myDial = make(chan struct{})
		ks.Data.dialing = plan.myDial
	}
	return plan, nil
}

// hit hands out s.c, pinging it first when it sat idle past
// HealthCheckAfter.
func (p *Pool) hit(ctx context.Context, span acquireSpan, t *Target, s step, start time.Time) (Lease, error) {
	if s.ping {
		// Idle past the health-check threshold: ping before trusting it.
		if err := s.c.session.Ping(ctx, nil); err != nil {
			return p.healthFailed(ctx, span, t, s, start)
		}
		p.mu.Lock()
		p.idle.CountHit()
		p.mu.Unlock()
	}
	p.inst.endAcquire(ctx, span, start, s.ks.Data.metrics, true, "", s.c)
	return p.newLease(s.c, true, start), nil
}

// healthFailed closes s.c, taken idle, whose ping failed, and dials anew as
// a miss for health_check; a caller whose context is done by then gets its
// error instead.
func (p *Pool) healthFailed(ctx context.Context, span acquireSpan, t *Target, s step, start time.Time) (Lease, error) {
	c := s.c
	p.healthDone(s.ks, c, start)
	p.closeEvicted(ctx, []eviction{{Entry: c.e, Reason: spans.EvictHealthCheck}})
	plan, gone, err := p.redialPlan(ctx, s.ks, start)
	switch {
	case gone:
		err := p.scrubber(t).error(fmt.Errorf("acquire %s: health check: %w", t.shown, ctx.Err()))
		p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCanceled, spans.MissHealthCheck, c.revision)
		return Lease{}, err
	case err != nil:
		return Lease{}, p.failFast(ctx, span, t, nil, err)
	}
	return p.dialLease(ctx, span, t, s.ks, plan, start)
}

// healthDone ends the lease of c, whose ping failed, in the core.
func (p *Pool) healthDone(ks *keyState, c *conn, start time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.idle.HealthFailed(c.e, ns(start))
	wakeLocked(ks)
}

// redialPlan plans the dial that replaces a session whose ping failed, or,
// when the caller's context is done (gone), counts the miss undialed.
func (p *Pool) redialPlan(ctx context.Context, ks *keyState, start time.Time) (plan dialPlan, gone bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx.Err() != nil {
		p.idle.MissUndialed(ks, spans.MissHealthCheck)
		return plan, true, nil
	}
	plan, err = p.planDialLocked(ks, true, false, start)
	return plan, false, err
}

// needsPingLocked reports whether an idle session must pass a ping before
// reuse: only sessions with an id are checked, since a sessionless server
// (2026-07-28 has no ping at all) has nothing to lose but an HTTP
// connection, which the transport re-establishes underneath. p.mu must be
// held.
func (p *Pool) needsPingLocked(c *conn, now time.Time) bool {
	if p.opts.HealthCheckAfter <= 0 || c.id == "" || c.e.Leased() {
		return false
	}
	return ns(now)-c.e.IdleSince() > int64(p.opts.HealthCheckAfter)
}

// dialLease dials as planned, with no lock held, and leases the new
// session.
func (p *Pool) dialLease(ctx context.Context, span acquireSpan, t *Target, ks *keyState, plan dialPlan, start time.Time) (Lease, error) {
	c, hs, err := p.dial(ctx, t, ks, plan.remembered)
	opened, recovered := p.dialDone(ctx, ks, c, plan, hs, err)
	if err != nil {
		if opened {
			p.opts.Logger.Warn("mcp pool: circuit breaker opened", "key", ks.Name(), "cooldown", p.opts.BreakerCooldown)
		}
		p.inst.endAcquireFailed(ctx, span, err, errorType(err), plan.reason, hs.version)
		return Lease{}, err
	}
	if recovered {
		p.opts.Logger.Info("mcp pool: circuit breaker closed after a successful trial dial", "key", ks.Name())
	}
	p.inst.endAcquire(ctx, span, start, ks.Data.metrics, false, plan.reason, c)
	return p.newLease(c, false, start), nil
}

// dialDone records a planned dial's end in one critical section: the
// handshake channel released, what the handshake cost, the breaker's
// verdict, and the new session leased (err nil) or the key's next miss
// after_failure. It reports whether the breaker opened or closed.
func (p *Pool) dialDone(ctx context.Context, ks *keyState, c *conn, plan dialPlan, hs handshake, err error) (opened, recovered bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if plan.myDial != nil {
		close(plan.myDial)
		ks.Data.dialing = nil
	}
	p.countHandshakeLocked(hs)
	opened, recovered = p.breakerDialDoneLocked(ks.Name(), p.now(), plan.trial, err, errors.Is(ctx.Err(), context.Canceled))
	if err != nil {
		p.stats.dialFailures++
		p.idle.DialFailed(ks)
		wakeLocked(ks)
		return opened, recovered
	}
	p.openedLocked(ks, c)
	c.e = p.idle.Dialed(ks, c, c.sessionless)
	p.leaseLocked(c)
	return opened, recovered
}

// countHandshakeLocked counts what a dial's handshake cost. p.mu must be
// held.
func (p *Pool) countHandshakeLocked(hs handshake) {
	p.stats.handshakeRequests += int64(hs.requests)
	if hs.how == spans.NegotiationFallback {
		p.stats.negotiationFallbacks++
	}
}

// openedLocked notes a successful dial's session on its key: the revision
// it negotiated and whether it is sessionless, which the key's next dial
// and acquires go by. p.mu must be held.
func (p *Pool) openedLocked(ks *keyState, c *conn) {
	ks.Data.revision = c.revision
	ks.Data.sessionless = c.sessionless
	p.stats.protocols[c.revision]++
}

// leaseLocked begins a lease generation for c when its first user takes
// it (always, for an exclusive session), so that a lease released twice
// is caught. p.mu must be held.
func (p *Pool) leaseLocked(c *conn) {
	if c.e.Users() == 1 {
		c.gen++
	}
}
