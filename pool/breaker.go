package pool

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// The circuit breaker is per key and counts consecutive failed dials only:
// a server that refuses every handshake (down, overloaded, flapping) would
// otherwise cost every caller a full dial timeout, and pile handshakes on a
// server that is trying to come back. Calls that fail on an established
// session do not count, since the session, not the server, may be what
// broke. Hits never consult the breaker: an idle session is handed out
// whatever the breaker says, because it costs the server nothing.
//
// States: closed (dials allowed; failures counted), open (acquires that
// would dial fail fast with [ErrCircuitOpen] until the cooldown ends), and
// half-open (the cooldown ended: exactly one acquire makes a trial dial while
// the others still fail fast; success closes the breaker, failure opens it
// for another cooldown). A dial the caller cancelled proves nothing about
// the server and is not counted (an abandoned trial lets the next acquire
// try again); a dial that outlasted the caller's deadline counts, since a
// server slower than its callers' deadlines is down for them.
//
// Every function here requires p.mu held and does no I/O.

// breakerState is one key's breaker; it exists only while the key has
// failed dials to remember. Guarded by Pool.mu.
type breakerState struct {
	failures  int       // consecutive failed dials
	open      bool      // failing fast (or half-open once openUntil passed)
	openUntil time.Time // end of the cooldown: the next dial is a trial
	trial     bool      // the half-open trial dial is in flight
	changed   time.Time // last failure or state change, for pruning
}

// CircuitOpenError is the error of an acquire refused by an open circuit
// breaker: the key's last dials failed, so the pool fails fast instead of
// dialing. It matches [ErrCircuitOpen] with errors.Is; errors.As gives the
// delay to back off by. It names the key by its hash only.
type CircuitOpenError struct {
	// Key is the hashed pool key (as in plugin.mcp.cache_key).
	Key string
	// Failures is the number of consecutive dial failures seen.
	Failures int
	// Cooldown is the configured wait between trial dials.
	Cooldown time.Duration
	// RetryIn is how long until the next trial dial may be made; zero while
	// a trial dial is in flight.
	RetryIn time.Duration
}

// Error implements error.
func (e *CircuitOpenError) Error() string {
	next := fmt.Sprintf("next trial dial in %s", e.RetryIn)
	if e.RetryIn <= 0 {
		next = "a trial dial is in flight"
	}
	return fmt.Sprintf("%s for key %s after %d consecutive dial failures: failing fast, %s (cooldown %s)",
		ErrCircuitOpen, e.Key, e.Failures, next, e.Cooldown)
}

// Is makes errors.Is(err, ErrCircuitOpen) hold.
func (e *CircuitOpenError) Is(target error) bool { return target == ErrCircuitOpen }

// breakerAdmitLocked decides whether an acquire of key may dial now. It
// returns a *CircuitOpenError while the breaker is open, and trial true for
// the single half-open trial dial, whose outcome must be reported to
// breakerDialDoneLocked.
func (p *Pool) breakerAdmitLocked(key string, now time.Time) (trial bool, err error) {
	if p.opts.BreakerThreshold <= 0 {
		return false, nil
	}
	b := p.breakers[key]
	if b == nil || !b.open {
		return false, nil
	}
	if b.trial || now.Before(b.openUntil) {
		p.stats.breakerRejects++
		return false, &CircuitOpenError{Key: key, Failures: b.failures, Cooldown: p.opts.BreakerCooldown, RetryIn: max(b.openUntil.Sub(now), 0)}
	}
	b.trial = true
	return true, nil
}

// breakerDialDoneLocked records the outcome of a dial admitted by
// breakerAdmitLocked. callerGone says the caller cancelled the dial, which
// says nothing about the server. It reports a transition
// for the caller to log once unlocked: opened (closed or half-open to open),
// or recovered (open to closed).
func (p *Pool) breakerDialDoneLocked(key string, now time.Time, trial bool, err error, callerGone bool) (opened, recovered bool) {
	if p.opts.BreakerThreshold <= 0 {
		return false, false
	}
	b := p.breakers[key]
	if err == nil {
		if b != nil {
			delete(p.breakers, key)
			return false, b.open
		}
		return false, false
	}
	if callerGone {
		if b != nil && trial {
			b.trial = false // inconclusive: the next acquire tries again
		}
		return false, false
	}
	if b == nil {
		if p.breakers == nil {
			p.breakers = make(map[string]*breakerState)
		}
		// Entries are only added here, after a failed dial: pruning on
		// the way costs nothing next to the dial and bounds the map.
		p.pruneBreakersLocked(now)
		b = &breakerState{}
		p.breakers[key] = b
	}
	b.failures++
	b.changed = now
	switch {
	case trial:
		b.trial = false
		b.openUntil = now.Add(p.opts.BreakerCooldown)
		p.stats.breakerOpens++
		return true, false
	case !b.open && b.failures >= p.opts.BreakerThreshold:
		b.open = true
		b.openUntil = now.Add(p.opts.BreakerCooldown)
		p.stats.breakerOpens++
		return true, false
	}
	// Open already: a dial admitted before it opened failed too. The
	// cooldown is not extended, so a trial still comes on time.
	return false, false
}

// failFast ends an acquire refused by the key's circuit breaker: no dial,
// the error named on the acquire span, evicted sessions closed.
func (p *Pool) failFast(ctx context.Context, span acquireSpan, t *Target, evs []eviction, cause error) error {
	if evs != nil {
		p.closeEvicted(ctx, evs)
	}
	err := fmt.Errorf("acquire %s: %w", t.shown, cause)
	p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCircuitOpen, "", "")
	return err
}

// openBreakersLocked counts the keys whose breaker is open or half-open.
func (p *Pool) openBreakersLocked() int {
	n := 0
	for _, b := range p.breakers {
		if b.open {
			n++
		}
	}
	return n
}

// pruneBreakersLocked forgets breakers untouched for twice the idle TTL and
// not mid-trial, so keys that failed once and were abandoned hold no memory.
// A forgotten open breaker lets the next acquire dial: after that long, the
// server deserves a new look.
func (p *Pool) pruneBreakersLocked(now time.Time) {
	for key, b := range p.breakers {
		if !b.trial && now.Sub(b.changed) > 2*p.opts.IdleTTL && !now.Before(b.openUntil) {
			delete(p.breakers, key)
		}
	}
}
