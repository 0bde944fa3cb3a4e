package pool

import (
	"maps"

	"github.com/mcptrace/mcptrace/spans"
)

// counters are the pool's cumulative counts; guarded by Pool.mu.
type counters struct {
	dials, dialFailures  int64
	redials              int64
	breakerOpens         int64
	breakerRejects       int64
	handshakeRequests    int64
	timeouts             int64
	pending              int // gauge: acquires waiting for the in-use cap
	negotiationFallbacks int64
	prewarmDials         int64 // Options.Prewarm dials, also in dials
	prewarmFailures      int64 // those that failed, also in dialFailures
	failures             map[string]int64
	protocols            map[string]int64
}

func newCounters() counters {
	return counters{
		failures:  make(map[string]int64),
		protocols: make(map[string]int64),
	}
}

// missReasons are the causes Stat.MissReasons always holds, zero or not.
var missReasons = []string{spans.MissCold, spans.MissConcurrent, spans.MissTTL, spans.MissRedial, spans.MissAfterFailure, spans.MissHealthCheck, spans.MissEvicted}

// Stat is a snapshot of a pool's counters and gauges, copied under the lock:
// callers may keep and change it freely.
type Stat struct {
	// ID is the pool scope id.
	ID string
	// Acquires counts every acquire, hit or miss, including redials.
	Acquires int64
	// Hits counts acquires that reused an idle session, or on a sessionless
	// server the key's client, without a handshake of their own.
	Hits int64
	// Misses counts acquires that dialed (successfully or not).
	Misses int64
	// MissReasons counts misses by reason (spans.Miss* values).
	MissReasons map[string]int64
	// Dials counts handshakes attempted; DialFailures those that failed.
	Dials, DialFailures int64
	// PrewarmDials counts the handshakes New made for Options.Prewarm
	// (also in Dials), PrewarmFailures those that failed (also in
	// DialFailures): sessions opened that no acquire asked for.
	PrewarmDials, PrewarmFailures int64
	// Redials counts transparent redials of expired sessions.
	Redials int64
	// BreakerOpens counts circuit breakers opening: after
	// Options.BreakerThreshold consecutive failed dials, or a failed trial.
	BreakerOpens int64
	// BreakerRejects counts acquires refused with ErrCircuitOpen. They are
	// not in Acquires: they neither hit nor dialed.
	BreakerRejects int64
	// OpenBreakers is the number of keys whose breaker is open (or
	// half-open) at snapshot time.
	OpenBreakers int
	// Failures counts sessions dropped on release, by error.type.
	Failures map[string]int64
	// Evictions counts idle sessions closed, by reason (spans.Evict*).
	Evictions map[string]int64
	// IdleSessions and InUseSessions are the gauges at snapshot time.
	IdleSessions, InUseSessions int
	// Keys is the number of identities the pool remembers.
	Keys int
	// Protocols counts successful handshakes by the MCP revision they
	// negotiated ("2025-11-25", "2026-07-28", ...).
	Protocols map[string]int64
	// KeyProtocols maps each remembered key (its hash) to the revision its
	// last handshake negotiated: which revision each key speaks.
	KeyProtocols map[string]string
	// SharedKeys is the number of remembered keys whose server is
	// sessionless, whose callers share one client.
	SharedKeys int
	// HandshakeRequests counts the HTTP requests handshakes made
	// (server/discover, initialize, notifications/initialized, retries);
	// with Dials, what cold starts cost in round trips.
	HandshakeRequests int64
	// Pending is the number of acquires waiting for their key's in-use cap
	// (Options.MaxInUsePerKey) at snapshot time.
	Pending int
	// Timeouts counts acquires that gave up waiting for the in-use cap
	// (Options.AcquireTimeout).
	Timeouts int64
	// PeakInUse is the most sessions the pool had in use at once.
	PeakInUse int
	// NegotiationFallbacks counts handshakes the server made try again (a
	// refused discover, or an initialize refused with -32022): each cost an
	// extra round trip, paid once per key since the revision is remembered.
	NegotiationFallbacks int64
}

// HitRate is Hits / Acquires, or 0 before the first acquire.
func (s Stat) HitRate() float64 {
	if s.Acquires == 0 {
		return 0
	}
	return float64(s.Hits) / float64(s.Acquires)
}

// Stat returns a snapshot of the pool's statistics. It is safe for
// concurrent use.
func (p *Pool) Stat() Stat {
	p.mu.Lock()
	defer p.mu.Unlock()
	keyProtocols := make(map[string]string, p.idle.Keys())
	shared := 0
	for key, ks := range p.idle.All() {
		if ks.Data.revision != "" {
			keyProtocols[key] = ks.Data.revision
			if ks.Data.sessionless {
				shared++
			}
		}
	}
	ic := p.idle.Counts()
	for _, r := range missReasons {
		ic.MissReasons[r] += 0 // every reason present, counted or not
	}
	return Stat{
		ID:              p.opts.ID,
		Acquires:        ic.Acquires,
		Hits:            ic.Hits,
		Misses:          ic.Misses,
		MissReasons:     ic.MissReasons,
		Dials:           p.stats.dials,
		DialFailures:    p.stats.dialFailures,
		PrewarmDials:    p.stats.prewarmDials,
		PrewarmFailures: p.stats.prewarmFailures,
		Redials:         p.stats.redials,
		BreakerOpens:    p.stats.breakerOpens,
		BreakerRejects:  p.stats.breakerRejects,
		OpenBreakers:    p.openBreakersLocked(),
		Failures:        maps.Clone(p.stats.failures),
		Evictions:       ic.Evictions,
		IdleSessions:    p.idle.IdleCount(),
		InUseSessions:   p.idle.InUse(),
		Keys:            p.idle.Keys(),

		Protocols:            maps.Clone(p.stats.protocols),
		KeyProtocols:         keyProtocols,
		SharedKeys:           shared,
		HandshakeRequests:    p.stats.handshakeRequests,
		Pending:              p.stats.pending,
		Timeouts:             p.stats.timeouts,
		PeakInUse:            ic.PeakInUse,
		NegotiationFallbacks: p.stats.negotiationFallbacks,
	}
}
