package pool

import (
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
)

// The idle policy (which session an acquire takes, why a miss missed,
// which idle sessions close) is package idle's, the same code the analyzer
// and whatif replay. The pool holds one idle.Core under p.mu and keeps
// here only what is its own: each key's dial in flight, negotiated
// revision and metric options (keyData), and the clock conversion.

// keyState is one key's state: the core's, with the pool's keyData.
type keyState = idle.Key[string, *conn, *keyData]

// eviction is an idle session the core removed, to be closed.
type eviction = idle.Eviction[string, *conn, *keyData]

// keyData is what the pool keeps per key beside the idle policy; guarded
// by p.mu like the core.
type keyData struct {
	// metrics holds the key's prebuilt metric options; nil when off.
	metrics *keyMetrics
	// revision is the MCP revision the key's last handshake negotiated
	// ("" before the first): the next dial uses it directly.
	revision string
	// sessionless is true when the key's last handshake got no session
	// id: its sessions are shared, not leased exclusively.
	sessionless bool
	// dialing is closed when the key's in-flight handshake ends; nil when
	// none is in flight or the key is known to have sessions (whose
	// concurrent acquires dial their own).
	dialing chan struct{}
	// freed is closed (and cleared) when one of the key's leases ends;
	// acquires waiting for the in-use cap wait on it. nil: no waiter.
	freed chan struct{}
}

// newIdleCore returns the pool's idle core under o's settings.
func (p *Pool) newIdleCore(o Options) *idle.Core[string, *conn, *keyData] {
	return idle.New[string, *conn](idleSettings(o), func(key string) *keyData {
		return &keyData{metrics: p.inst.newKeyMetrics(key)}
	})
}

// idleSettings are the idle settings of a pool configured by o (with its
// defaults filled in): what its acquire spans record and what a replay of
// them needs.
func idleSettings(o Options) idle.Settings {
	return idle.Settings{
		TTL:           o.IdleTTL,
		MaxIdlePerKey: o.MaxIdlePerKey,
		FixedPerKey:   o.FixedIdlePerKey,
		MaxIdle:       o.MaxIdle,
		SweepInterval: o.SweepInterval,
	}
}

// clockEpoch is the origin of the core's nanoseconds. The pool's clock
// reads are all derived from one base (monotonicNow), so their distances
// from a fixed epoch are as exact as their distances from each other.
var clockEpoch = time.Unix(0, 0)

// ns is t as the core's nanoseconds.
func ns(t time.Time) int64 { return int64(t.Sub(clockEpoch)) }

// mayShare reports whether the key's sessions may be shared: its server is
// sessionless, or not known yet. Concurrent acquires of such a key wait for
// its in-flight handshake instead of making their own.
func mayShare(ks *keyState) bool { return ks.Data.revision == "" || ks.Data.sessionless }

// wakeLocked wakes the acquires waiting for the key's in-use cap: one of
// its leases (or dials) ended. p.mu must be held.
func wakeLocked(ks *keyState) {
	if ks.Data.freed != nil {
		close(ks.Data.freed)
		ks.Data.freed = nil
	}
}
