package idle

import (
	"iter"
	"math"
	"time"
)

// Settings are the idle settings of one pool scope: what pool.Options
// holds, and what a pool records on its acquire spans.
type Settings struct {
	// TTL is how long an idle session may wait: one idle strictly longer
	// expires.
	TTL time.Duration
	// MaxIdlePerKey is how many idle sessions a key keeps at least
	// (negative: none; every release closes its session).
	MaxIdlePerKey int
	// FixedPerKey turns off peak-following: a key keeps MaxIdlePerKey and
	// no more, whatever its recent peak.
	FixedPerKey bool
	// MaxIdle bounds the idle sessions of all keys together.
	MaxIdle int
	// SweepInterval is how often an acquire sweeps (Begin); negative: every
	// TTL. It only decides when memory is given back, never a cause.
	SweepInterval time.Duration
}

// Core is one pool scope's idle state. S is the caller's session (the
// pool's connection, a replay's record); D is the caller's own data per key
// (a dial in flight, a negotiated revision), created by the newData given
// to New and forgotten with the key. Not safe for concurrent use.
type Core[K comparable, S, D any] struct {
	set       Settings
	ttl       int64
	newData   func(key K) D
	keys      map[K]*Key[K, S, D]
	head      *Entry[K, S, D] // the LRU of idle sessions, least recently released first
	tail      *Entry[K, S, D]
	idleCount int
	inUse     int
	closed    bool
	lastSweep int64
	swept     bool
	counts    Counts
}

// Key is the state of one key: its idle sessions, its leases and what
// removed its last session.
type Key[K comparable, S, D any] struct {
	name K
	// Data is the caller's, created with the key.
	Data D
	// idle holds the idle sessions, most recently released last.
	idle []*Entry[K, S, D]
	// reserved counts leases out plus dials in flight.
	reserved int
	peak     int
	peakAt   int64
	// lastDrop is the cause the key's next miss carries when no lease is
	// out: what removed its last session, the latest by when it happened
	// (lastDropAt: an expiry counts at the session's expiry, whenever a
	// sweep or an acquire noticed it, so that sweeping changes no cause).
	lastDrop   string
	lastDropAt int64
	lastActive int64
	// shared is a sessionless key's entry while leases use it.
	shared *Entry[K, S, D]
}

// Entry is one session in the core: idle, or out on one or more leases
// (more than one only when shared).
type Entry[K comparable, S, D any] struct {
	// Value is the caller's session.
	Value      S
	key        *Key[K, S, D]
	idleSince  int64
	prev, next *Entry[K, S, D]
	inLRU      bool
	shared     bool
	users      int
	dropped    bool
}

// Eviction is an idle session the core removed, for its caller to close.
type Eviction[K comparable, S, D any] struct {
	Entry  *Entry[K, S, D]
	Reason string // a spans.Evict* value
}

// Counts are the core's cumulative counts and gauges.
type Counts struct {
	Acquires, Hits, Misses int64
	// MissReasons counts misses by cause (spans.Miss* values).
	MissReasons map[string]int64
	// Evictions counts idle sessions closed, by spans.Evict* reason.
	Evictions map[string]int64
	// PeakInUse is the most sessions in use at once.
	PeakInUse int
}

// New returns an empty core under set; newData makes each key's Data
// (nil: the zero D).
func New[K comparable, S, D any](set Settings, newData func(key K) D) *Core[K, S, D] {
	return &Core[K, S, D]{
		set: set, ttl: int64(set.TTL), newData: newData,
		keys: make(map[K]*Key[K, S, D]),
		counts: Counts{
			MissReasons: make(map[string]int64),
			Evictions:   make(map[string]int64),
		},
	}
}

// Settings returns the settings the core was made with.
func (c *Core[K, S, D]) Settings() Settings { return c.set }

// Name returns the key's name.
func (k *Key[K, S, D]) Name() K { return k.name }

// Leased reports how many leases (and dials) of the key are out.
func (k *Key[K, S, D]) Leased() int { return k.reserved }

// Idle reports how many idle sessions the key holds.
func (k *Key[K, S, D]) Idle() int { return len(k.idle) }

// Shared returns the sessionless key's entry in use, or nil.
func (k *Key[K, S, D]) Shared() *Entry[K, S, D] { return k.shared }

// Key returns the entry's key.
func (e *Entry[K, S, D]) Key() *Key[K, S, D] { return e.key }

// IdleSince is when the entry last went idle, in the core's nanoseconds.
func (e *Entry[K, S, D]) IdleSince() int64 { return e.idleSince }

// Leased reports whether the entry is out on a lease.
func (e *Entry[K, S, D]) Leased() bool { return e.users > 0 }

// Users is how many leases use the entry (more than one only when shared).
func (e *Entry[K, S, D]) Users() int { return e.users }

// Dropped reports whether the shared entry failed and waits for its last
// user to leave before it is closed.
func (e *Entry[K, S, D]) Dropped() bool { return e.dropped }

// Counts returns a copy of the counts.
func (c *Core[K, S, D]) Counts() Counts {
	out := c.counts
	out.MissReasons = make(map[string]int64, len(c.counts.MissReasons))
	for k, v := range c.counts.MissReasons {
		out.MissReasons[k] = v
	}
	out.Evictions = make(map[string]int64, len(c.counts.Evictions))
	for k, v := range c.counts.Evictions {
		out.Evictions[k] = v
	}
	return out
}

// IdleCount and InUse are the gauges: idle sessions, sessions in use.
func (c *Core[K, S, D]) IdleCount() int { return c.idleCount }

// InUse is how many sessions are out on a lease (a shared one once).
func (c *Core[K, S, D]) InUse() int { return c.inUse }

// Keys is how many keys the core remembers.
func (c *Core[K, S, D]) Keys() int { return len(c.keys) }

// All yields every key the core remembers, in no order.
func (c *Core[K, S, D]) All() iter.Seq2[K, *Key[K, S, D]] {
	return func(yield func(K, *Key[K, S, D]) bool) {
		for name, k := range c.keys {
			if !yield(name, k) {
				return
			}
		}
	}
}

// elapsed is now - since, saturating instead of wrapping.
func elapsed(since, now int64) int64 {
	d := now - since
	// It overflowed when now and since differ in sign and d's sign is not
	// now's.
	if (now^since) < 0 && (d^now) < 0 {
		if now >= since {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return d
}

// twice is 2d, saturating.
func twice(d int64) int64 {
	if d > math.MaxInt64/2 {
		return math.MaxInt64
	}
	if d < math.MinInt64/2 {
		return math.MinInt64
	}
	return 2 * d
}

// Expired reports whether an entry idle since since has outlived the TTL
// at now: idle strictly longer (exactly the TTL is still fresh).
func (c *Core[K, S, D]) Expired(since, now int64) bool { return elapsed(since, now) > c.ttl }

// ExpiresAt is when an entry idle since since expires: the last instant it
// is still fresh, saturating.
func (c *Core[K, S, D]) ExpiresAt(since int64) int64 {
	if c.ttl > 0 && since > math.MaxInt64-c.ttl {
		return math.MaxInt64
	}
	if c.ttl < 0 && since < math.MinInt64-c.ttl {
		return math.MinInt64
	}
	return since + c.ttl
}

// abandoned reports whether k holds nothing and saw no activity for more
// than forgetAfter: the core forgets such a key, lazily on its next
// acquire or in a sweep, with the same outcome.
func (c *Core[K, S, D]) abandoned(k *Key[K, S, D], now int64) bool {
	return k.reserved == 0 && k.shared == nil && elapsed(k.lastActive, now) > c.forgetAfter()
}

// forgetAfter is how long a key with nothing open is remembered: twice the
// TTL, plus one sweep interval (the TTL when negative), by when a sweep
// has come whenever the last one ran. A fixed span, so that whether a
// key's next miss is cold never depends on when a sweep happened to run.
func (c *Core[K, S, D]) forgetAfter() int64 {
	interval := int64(c.set.SweepInterval)
	if interval < 0 {
		interval = c.ttl
	}
	return addSat(twice(c.ttl), interval)
}

// addSat is a+b for b >= 0, saturating at MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// The pool's defaults for its idle settings: what a zero pool.Options
// gets, and what a replay assumes of a pool scope that recorded none.
const (
	DefaultTTL           = 5 * time.Minute
	DefaultMaxIdlePerKey = 1
	DefaultMaxIdle       = 64
	DefaultSweepInterval = time.Minute
)

// Defaults returns the default settings with the idle TTL ttl (the
// default TTL when ttl is 0).
func Defaults(ttl time.Duration) Settings {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	return Settings{TTL: ttl, MaxIdlePerKey: DefaultMaxIdlePerKey, MaxIdle: DefaultMaxIdle, SweepInterval: DefaultSweepInterval}
}

// setDrop makes cause, which happened at at, the key's last drop unless a
// later one is already recorded (ties: the one recorded last).
func setDrop[K comparable, S, D any](k *Key[K, S, D], cause string, at int64) {
	if cause != "" && (k.lastDrop == "" || at >= k.lastDropAt) {
		k.lastDrop, k.lastDropAt = cause, at
	}
}
