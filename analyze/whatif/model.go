// Package whatif replays a dump's acquires through the pool's own idle
// policy (package pool/idle, the code the pool decides with; never the
// pool itself) under other settings, and says what each would have cost: the
// answer to "would a longer TTL, two idle sessions per key or a pre-warm
// pay?" without changing production.
//
// What the replay cannot know is kept as recorded: a session the server
// forgot (a redial) and a failed lease stay as observed, each call's
// duration stays as recorded, and settings that would change the workload
// itself (backpressure: MaxInUsePerKey, AcquireTimeout; health checks)
// are out of scope.
//
// Its outputs are `mcptrace whatif`'s (a table, JSON, Markdown, a page of
// its own) and the what-if section of the analysis's HTML report
// (WriteReportSection, over events.ReportEvents: the recorded or assumed
// settings and ReportGrid around them).
package whatif

import (
	"cmp"
	"slices"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/spans"
)

// Settings is one combination of the pool's idle settings to replay.
type Settings struct {
	// IdleTTL is pool.Options.IdleTTL: idle strictly longer expires.
	IdleTTL time.Duration
	// IdlePerKey is pool.Options.MaxIdlePerKey (negative: keep none).
	IdlePerKey int
	// Peak is the pool's peak-following sizing: a key keeps its in-use
	// peak within the idle TTL, at least IdlePerKey (FixedIdlePerKey off).
	Peak bool
	// MaxIdle is the global cap on idle sessions, least recently used
	// closed first.
	MaxIdle int
	// Prewarm is --prewarm recent:N: at a scope's start, dial the N keys
	// the previous scopes of the same service (service.name) called most
	// recently (0: none).
	// (PrewarmAsRecorded: replay the pre-warm dials the dump recorded,
	// whatever chose them; 0: none).
	Prewarm int
}

// PrewarmAsRecorded is Settings.Prewarm for the run as recorded: the
// dump's own pre-warm dials (plugin.mcp.prewarm handshakes) replayed, not
// a policy's.
const PrewarmAsRecorded = -1

// Row is what one setting would have cost.
type Row struct {
	Settings       Settings
	AsRecorded     bool
	Acquires, Hits int
	MissesByCause  map[string]int
	SessionsOpened int
	// PeakSessions is the most sessions (leased and idle) one pool scope
	// held open at once, the largest over scopes.
	PeakSessions int
	// IdleSessionSeconds is the time sessions sat idle in the pools: what
	// the servers hold for nothing.
	IdleSessionSeconds float64
	// PrewarmDials are the pre-warm handshakes and PrewarmUnused those
	// never taken by an acquire.
	PrewarmDials, PrewarmUnused int
}

// HitRate is hits over acquires, 0 with none.
func (r Row) HitRate() float64 {
	if r.Acquires == 0 {
		return 0
	}
	return float64(r.Hits) / float64(r.Acquires)
}

// rec is one acquire of a Workload, its strings dense ids.
type rec struct {
	start, end     int64
	scope, pair    int32
	sk             int32 // the (service, key) id: what pre-warm ranks
	redial, failed bool
	health         bool
	hit            bool
	prewarm        bool // a recorded pre-warm dial, no acquire

	cause string
}

// Workload is a dump's acquires in time order, ready to replay any number
// of times.
type Workload struct {
	recs     []rec
	prewarms int // recs that are recorded pre-warm dials
	scopes   int
	pairs    int
	// pairKey is each pair's key id.
	pairKey []int32
	// scopeSvc is each scope's service id, skKey each (service, key) id's
	// key id and svcKeys each service's (service, key) ids: pre-warm
	// ranks the keys of the scope's own service.
	scopeSvc, skKey []int32
	svcKeys         [][]int32
	// scopeRecs is what each scope recorded of its settings.
	scopeRecs []scopeRecord
}

// Collector gathers events.Acquire values (analyze.ReadAcquires' fn)
// into a Workload.
type Collector struct {
	recs     []rec
	prewarms int // recs that are recorded pre-warm dials
	scopes   map[string]int32
	pairs    map[[2]int32]int32
	keys     map[string]int32
	pk, ps   []int32
	// svcs interns services ("s"+name, or "-" for none), sks the
	// (service, key) ids; scopeSvc, skKey and svcKeys as in Workload.
	svcs            map[string]int32
	sks             map[[2]int32]int32
	scopeSvc, skKey []int32
	svcKeys         [][]int32
	// recorded is each scope's recorded settings, from its first acquire
	// (analyze gives every acquire of a scope the same).
	recorded []scopeRecord
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{scopes: map[string]int32{}, pairs: map[[2]int32]int32{}, keys: map[string]int32{},
		svcs: map[string]int32{}, sks: map[[2]int32]int32{}}
}

func intern(m map[string]int32, s string) int32 {
	id, ok := m[s]
	if !ok {
		id = int32(len(m))
		m[s] = id
	}
	return id
}

// Add takes one acquire (it does not keep a).
func (c *Collector) Add(a *events.Acquire) {
	s := intern(c.scopes, a.Scope)
	if int(s) == len(c.recorded) {
		c.recorded = append(c.recorded, scopeRecord{name: a.Scope, settings: a.Settings, mixed: a.SettingsMixed})
		svc := "-"
		if a.HasService {
			svc = "s" + a.Service
		}
		id := intern(c.svcs, svc)
		if int(id) == len(c.svcKeys) {
			c.svcKeys = append(c.svcKeys, nil)
		}
		c.scopeSvc = append(c.scopeSvc, id)
	}
	k := intern(c.keys, a.Key)
	svc := c.scopeSvc[s]
	sk, ok := c.sks[[2]int32{svc, k}]
	if !ok {
		sk = int32(len(c.skKey))
		c.sks[[2]int32{svc, k}] = sk
		c.skKey = append(c.skKey, k)
		c.svcKeys[svc] = append(c.svcKeys[svc], sk)
	}
	p, ok := c.pairs[[2]int32{s, k}]
	if !ok {
		p = int32(len(c.pk))
		c.pairs[[2]int32{s, k}] = p
		c.pk = append(c.pk, k)
		c.ps = append(c.ps, s)
	}
	c.recs = append(c.recs, rec{start: a.Start, end: a.LeaseEnd, scope: s, pair: p, sk: sk,
		redial: a.Attempt > 1, failed: a.Failed, health: a.HealthCheck, hit: a.Hit, cause: a.Cause, prewarm: a.Prewarm})
	if a.Prewarm {
		c.prewarms++
	}
}

// Workload sorts what was added into time order.
func (c *Collector) Workload() *Workload {
	recs := c.recs
	slices.SortStableFunc(recs, func(a, b rec) int { return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end)) })
	return &Workload{recs: recs, prewarms: c.prewarms, scopes: len(c.scopes), pairs: len(c.pk),
		pairKey: c.pk, scopeRecs: c.recorded,
		scopeSvc: c.scopeSvc, skKey: c.skKey, svcKeys: c.svcKeys}
}

// Acquires is the number of acquires in w.
func (w *Workload) Acquires() int { return len(w.recs) - w.prewarms }

// Recorded returns the dump's own figures as a Row (its settings zero):
// what the as-recorded replay must reproduce.
func (w *Workload) Recorded() Row {
	r := Row{MissesByCause: map[string]int{}, Acquires: w.Acquires()}
	for i := range w.recs {
		if w.recs[i].prewarm {
			r.SessionsOpened++
			r.PrewarmDials++
			continue
		}
		if w.recs[i].hit {
			r.Hits++
		} else {
			r.MissesByCause[w.recs[i].cause]++
			r.SessionsOpened++
		}
	}
	return r
}

// MissEvicted is the model's cause for a miss whose key's idle session
// the idle caps (per key or the global LRU) closed: the analyzer, which
// cannot see the caps, would call it unexplained.
const MissEvicted = spans.MissEvicted
