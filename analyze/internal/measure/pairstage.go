package measure

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"unsafe"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// pairKey names one (scope, key) pair, the scope in the high half. It is
// one word rather than a struct of two int32s: the map reads a key of two
// 4-byte stores back with one 8-byte load, which the CPU cannot forward,
// and each lookup waits for the stores.
type pairKey uint64

// pairKeyOf returns the key of the pair (scope, key).
func pairKeyOf(scope, key int32) pairKey {
	return pairKey(uint64(uint32(scope))<<32 | uint64(uint32(key)))
}

// pairState is what attribution keeps of a pair between two advances: not
// its acquires, so a stream holds per pair three figures, whatever its
// length.
type pairState struct {
	acquired bool  // an acquire was attributed (a pre-warm alone opens the pair, it is no key's first acquire)
	frontier int64 // the latest start attributed
}

// PairStage attributes the pool's misses across traces (each scope's
// acquires replayed through the pool's idle policy: attribution.go). It
// buffers the acquires observations
// bring and, on advance(t), attributes those that started before t, pair by
// pair in time order, and folds them into counts. Batch analysis advances
// once, to the end of time, after every trace was observed: exactly
// today's single-index answer. A stream advances as its watermark moves; an
// acquire that arrives after its pair was attributed past its start (a
// trace finalized very late) is attributed on arrival against the pair's
// state and counted in late.
type PairStage struct {
	// assumed are the idle settings of a scope that recorded none;
	// recorded, when set, returns what a scope recorded (see
	// aggregate.recordedSettings).
	assumed  idle.Settings
	Recorded func(scope int32) (record.PoolSettings, bool)
	replays  map[int32]*scopeReplay
	// Each, when set, is handed every acquire once attributed, its reason
	// set: the index-local readers (the rules' examples, the HTML
	// timeline) take the attributed events from the one attribution.
	Each func(ev *record.Acquire)
	// EachPrewarm, when set, is handed every pre-warm dial replayed (not
	// an acquire: only ReadAcquires' replay wants them).
	EachPrewarm func(ev *record.Acquire)
	// KeepsEvents says each may keep the pointers it is handed: a batch
	// stage then never moves nor overwrites an attributed acquire (it
	// copies a bucket's rest rather than shift it over them), so a reader
	// points at the acquires where they were filed instead of copying them.
	KeepsEvents bool
	// Bufs holds the buffered acquires as the observations handed them
	// over, one slice each: advance reads them where they are rather than
	// appending them into one buffer first.
	Bufs [][]record.Acquire
	// MinStart is the earliest start of a buffered acquire (MaxInt64 when
	// none): an advance to no later than it has nothing to attribute, and
	// a stream's shards ask for one after every finalization.
	MinStart int64
	// A batch stage (newBatchPairStage) files each acquire under its pair
	// as it is added, instead of buffering: the one advance, at the end,
	// then only sorts the pairs that arrived out of time order and
	// attributes, without grouping every acquire again into a new array.
	batch    bool
	byPair   map[pairKey]int32
	Buckets  [][]record.Acquire
	unsorted []bool
	Held     int // the acquires filed in buckets, not yet attributed
	// A batch stage may also advance before the end (Engine.advanceEarly,
	// a speculative run): attributedTo is the latest t it advanced to,
	// seenMax the latest start filed and lag the furthest an acquire has
	// arrived behind seenMax (earlyMark). An acquire filed that sorts
	// before one of its pair already attributed, or whose session's first
	// call was already decided, sets outOfOrder: the figures could then
	// differ from one advance at the end, and the run must be read again.
	attributedTo, seenMax, lag int64
	OutOfOrder                 bool

	// scopesSeen holds every scope an acquire was added for, attributed
	// or not: each will have a replay, figures and a report row
	// (StateBytes).
	scopesSeen map[int32]struct{}

	pairs      map[pairKey]*pairState
	sessions   map[int32]bool // sessions whose first call was attributed (inferred acquires)
	Scopes     map[int32]*scopeStats
	Handshakes map[int32]int // by scope, -1 included
	examples   []pcommon.TraceID
	Late       int // acquires attributed behind their pair's frontier
}

// NewPairStage returns an empty pair stage that attributes misses under
// cfg's idle settings, for a stream whose acquires arrive in batches.
func NewPairStage(cfg rulefmt.Config) *PairStage {
	return &PairStage{
		assumed:    idle.Defaults(cfg.IdleTTL),
		replays:    map[int32]*scopeReplay{},
		MinStart:   math.MaxInt64,
		scopesSeen: map[int32]struct{}{},
		pairs:      map[pairKey]*pairState{},
		sessions:   map[int32]bool{},
		Scopes:     map[int32]*scopeStats{},
		Handshakes: map[int32]int{},
	}
}

// NewBatchPairStage returns a stage for a batch run, which advances once,
// at the end: see pairStage.batch.
func NewBatchPairStage(cfg rulefmt.Config) *PairStage {
	p := NewPairStage(cfg)
	p.batch, p.byPair = true, map[pairKey]int32{}
	p.attributedTo, p.seenMax = math.MinInt64, math.MinInt64
	return p
}

// file adds events to their pairs' buckets (a batch stage).
func (p *PairStage) file(events []record.Acquire) {
	last, b := pairKey(0), int32(-1)
	for i := range events {
		ev := &events[i]
		p.MinStart = min(p.MinStart, ev.Start)
		p.noteArrival(ev)
		if k := (pairKeyOf(ev.Scope, ev.Key)); b < 0 || k != last {
			id, ok := p.byPair[k]
			if !ok {
				id = int32(len(p.Buckets))
				p.byPair[k] = id
				p.scopesSeen[ev.Scope] = struct{}{} // a scope's first acquire opens a pair
				p.Buckets = append(p.Buckets, nil)
				p.unsorted = append(p.unsorted, false)
			}
			last, b = k, id
		}
		bk := p.Buckets[b]
		if n := len(bk); n > 0 && !p.unsorted[b] && CmpPairTime(bk[n-1], *ev) > 0 {
			p.unsorted[b] = true
		}
		p.Buckets[b] = append(bk, *ev)
	}
	p.Held += len(events)
}

// noteArrival updates the early advance's view of time order for ev, an
// acquire being filed, and sets outOfOrder when ev arrives behind what its
// pair (or, for an acquire inferred from a call, its session) has already
// had attributed. An acquire that starts at or after attributedTo sorts
// after every attributed one (they all started before it).
func (p *PairStage) noteArrival(ev *record.Acquire) {
	if ev.Start < p.seenMax {
		d := p.seenMax - ev.Start
		if d < 0 { // overflowed: hostile timestamps
			d = math.MaxInt64
		}
		p.lag = max(p.lag, d)
	}
	p.seenMax = max(p.seenMax, ev.Start)
	if ev.Start >= p.attributedTo {
		return
	}
	if ev.Inferred() && p.sessions[ev.Session] {
		p.OutOfOrder = true
	}
	if st := p.pairs[pairKeyOf(ev.Scope, ev.Key)]; st != nil && ev.Start <= st.frontier {
		p.OutOfOrder = true // ties at the frontier too: the order then rests on lease ends and ids
	}
}

// EarlyMark is the latest time an early advance trusts no acquire still to
// come starts before: twice the worst lag seen behind the latest start
// filed. MinInt64 until an acquire was filed.
func (p *PairStage) EarlyMark() int64 {
	return subSat(subSat(p.seenMax, p.lag), p.lag)
}

// subSat is a-b for b >= 0, MinInt64 where that would overflow.
func subSat(a, b int64) int64 {
	if a < math.MinInt64+b {
		return math.MinInt64
	}
	return a - b
}

// advanceBatch attributes a batch stage's acquires that started before t,
// pair by pair.
func (p *PairStage) advanceBatch(t int64) {
	var todo [][]record.Acquire
	for b, u := range p.unsorted {
		if u {
			todo = append(todo, p.Buckets[b])
		}
	}
	SortGroups(todo)
	clear(p.unsorted)
	p.attributedTo = max(p.attributedTo, t)
	ready := make([][]record.Acquire, 0, len(p.Buckets))
	readyOf := make([]int32, 0, len(p.Buckets)) // the bucket of each ready group
	p.MinStart = math.MaxInt64
	for b, bk := range p.Buckets {
		n, _ := slices.BinarySearchFunc(bk, t, func(ev record.Acquire, t int64) int { return cmp.Compare(ev.Start, t) })
		if n < len(bk) {
			p.MinStart = min(p.MinStart, bk[n].Start)
		}
		if n == 0 {
			continue
		}
		ready = append(ready, bk[:n])
		readyOf = append(readyOf, int32(b))
		p.Held -= n
	}
	if anyInferred(ready...) {
		var all []record.Acquire
		for _, g := range ready {
			all = append(all, g...)
		}
		p.firstCalls(all)
		for i := 0; len(all) > 0; i++ {
			ready[i], all = all[:len(ready[i])], all[len(ready[i]):]
		}
	}
	if t == math.MaxInt64 && p.Held == 0 {
		// The last advance takes every acquire: the pairs' filing index
		// goes before the attribution rather than after it (a million
		// pairs: some 60 MB of map and bucket headers).
		p.Buckets, p.byPair, p.unsorted = nil, map[pairKey]int32{}, nil
		p.attributeGroups(ready)
		return
	}
	p.attributeGroups(ready)
	for i, g := range ready {
		// Keep the rest at the front of the bucket's array: filed acquires
		// then reuse the memory attributed ones leave.
		bk := p.Buckets[readyOf[i]]
		if p.KeepsEvents {
			p.Buckets[readyOf[i]] = slices.Clone(bk[len(g):])
			continue
		}
		p.Buckets[readyOf[i]] = append(bk[:0], bk[len(g):]...)
	}
}

// Add buffers events until an advance attributes them; the stage keeps
// the slice (the observation hands its events over). A batch stage files
// them under their pairs at once.
func (p *PairStage) Add(events []record.Acquire) {
	if p.batch {
		p.file(events)
		return
	}
	if len(events) > 0 {
		p.Bufs = append(p.Bufs, events)
	}
	for i := range events {
		p.MinStart = min(p.MinStart, events[i].Start)
		if i == 0 || events[i].Scope != events[i-1].Scope {
			p.scopesSeen[events[i].Scope] = struct{}{}
		}
	}
}

// The memory the stage's state takes, past the acquires themselves, for
// the memory budget (StateBytes). Each pool scope keeps a replay of its
// pool, its figures, and at the end a report row with its own map of miss
// reasons, which the renderer writes out again: some 2 KiB in all (200k
// scopes of one acquire each peak at about 440 MB, 380 MB of it live heap,
// with no other state to speak of). Each (scope, key) pair keeps a map
// entry and a bucket to file its acquires under, then its attribution
// state and the replay's entry for its key.
const (
	ScopeBytes = 2 << 10
	PairBytes  = 256
)

// NumScopes returns how many distinct pool scopes acquires were added for.
func (p *PairStage) NumScopes() int { return len(p.scopesSeen) }

// NumPairs returns how many distinct (scope, key) pairs the stage holds.
func (p *PairStage) NumPairs() int { return max(len(p.pairs), len(p.byPair)) }

// StateBytes estimates the memory the stage holds and its report will
// take: the acquires waiting for an advance, and each scope's and pair's
// state (ScopeBytes, PairBytes). A dump of many distinct scopes or keys
// holds it whatever its traces, so the memory budget must see it.
func (p *PairStage) StateBytes() int64 {
	return p.PendingBytes() + int64(len(p.scopesSeen))*ScopeBytes + int64(p.NumPairs())*PairBytes
}

// PendingBytes is the part of StateBytes the acquires waiting for an
// advance take.
func (p *PairStage) PendingBytes() int64 {
	return int64(p.Pending()) * int64(unsafe.Sizeof(record.Acquire{}))
}

// Pending returns how many acquires wait for an advance.
func (p *PairStage) Pending() int {
	n := 0
	for _, b := range p.Bufs {
		n += len(b)
	}
	return n + p.Held
}

// cmpEventSpan orders two events by trace id, then span id: the order's
// tie-break that does not depend on arrival.
func cmpEventSpan(a, b *record.Acquire) int {
	if c := bytes.Compare(a.Trace[:], b.Trace[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.Span, b.Span)
}

// CmpPairTime orders two acquires of one pair: by start, then lease end,
// then trace and span id.
func CmpPairTime(a, b record.Acquire) int {
	return cmpPairTimeOf(&a, &b)
}

// ParallelSortMin is how many acquires an advance must attribute before it
// sorts its pairs on several goroutines: a batch run's one advance, at the
// end, when the shards are done and the CPUs idle.
const ParallelSortMin = 1 << 15

// Advance attributes every buffered acquire that started before t.
func (p *PairStage) Advance(t int64) {
	if t <= p.MinStart {
		return
	}
	if p.batch {
		p.advanceBatch(t)
		return
	}
	grouped, groups := p.takeReady(t)
	if len(grouped) == 0 {
		return
	}
	SortGroups(groups)
	if anyInferred(grouped) {
		p.firstCalls(grouped)
	}
	p.attributeGroups(groups)
}

// takeReady takes the buffered acquires that started before t out of the
// buffer, grouped by pair (a counting sort straight from the buffered
// slices; each pair's then sorted in time order by the caller: cheaper
// than one sort on the pair and the time together). The others stay
// buffered. groups are the pairs' slices of grouped.
func (p *PairStage) takeReady(t int64) (grouped []record.Acquire, groups [][]record.Acquire) {
	counts, pairOf := p.pairReady(t)
	if len(pairOf) == 0 {
		return nil, nil
	}
	first := make([]int32, len(counts)+1) // pair id's acquires are grouped[first[id]:first[id+1]]
	for id, c := range counts {
		first[id+1] = first[id] + c
	}
	grouped = p.scatterReady(t, first[:len(counts)], pairOf)
	groups = make([][]record.Acquire, len(counts))
	for id := range counts {
		groups[id] = grouped[first[id]:first[id+1]]
	}
	return grouped, groups
}

// pairReady numbers the pairs of the buffered acquires that started
// before t, in order of first appearance: pairOf is each ready acquire's
// pair id, in buffer order, and counts each pair's ready acquires. Runs of one pair, the common case, ask
// the map once per run.
func (p *PairStage) pairReady(t int64) (counts, pairOf []int32) {
	ids := map[pairKey]int32{}
	last, lastID := pairKey(0), int32(-1)
	for _, b := range p.Bufs {
		for i := range b {
			ev := &b[i]
			if ev.Start >= t {
				continue
			}
			k := pairKeyOf(ev.Scope, ev.Key)
			if lastID < 0 || k != last {
				id, ok := ids[k]
				if !ok {
					id = int32(len(counts))
					ids[k] = id
					counts = append(counts, 0)
				}
				last, lastID = k, id
			}
			pairOf = append(pairOf, lastID)
			counts[lastID]++
		}
	}
	return counts, pairOf
}

// scatterReady moves the buffered acquires that started before t into a
// new slice, each pair's from first[id] on (pairOf from pairReady), and
// keeps the rest buffered in one slice, noting their earliest start.
func (p *PairStage) scatterReady(t int64, first, pairOf []int32) []record.Acquire {
	next := slices.Clone(first)
	grouped := make([]record.Acquire, len(pairOf))
	buffered := 0
	for _, b := range p.Bufs {
		buffered += len(b)
	}
	kept := make([]record.Acquire, 0, buffered-len(pairOf))
	r := 0
	p.MinStart = math.MaxInt64
	for _, b := range p.Bufs {
		for i := range b {
			if b[i].Start >= t {
				kept = append(kept, b[i])
				p.MinStart = min(p.MinStart, b[i].Start)
				continue
			}
			id := pairOf[r]
			r++
			grouped[next[id]] = b[i]
			next[id]++
		}
	}
	p.Bufs = p.Bufs[:0]
	if len(kept) > 0 {
		p.Bufs = append(p.Bufs, kept)
	}
	return grouped
}

// attributeGroups attributes the ready acquires of every pair (each
// group one pair's, in time order), scope by scope: a scope's pairs share
// its idle caps, so its acquires are replayed together, in time order.
func (p *PairStage) attributeGroups(groups [][]record.Acquire) {
	byScope := map[int32][][]record.Acquire{}
	for _, g := range groups {
		if len(g) > 0 {
			byScope[g[0].Scope] = append(byScope[g[0].Scope], g) // a pair is of one scope
		}
	}
	scopes := slices.Sorted(maps.Keys(byScope))
	var evs []*record.Acquire
	for _, scope := range scopes {
		evs = mergeGroups(evs[:0], byScope[scope])
		p.attributeScope(scope, evs)
	}
}

// attributeScope attributes one scope's acquires, in time order, after
// those attributed before.
func (p *PairStage) attributeScope(scope int32, evs []*record.Acquire) {
	r := p.replay(scope)
	sc := p.Scopes[scope]
	if sc == nil {
		sc = &scopeStats{}
		p.Scopes[scope] = sc
	}
	for _, ev := range evs {
		k := pairKeyOf(scope, ev.Key)
		st, seen := p.pairs[k]
		if !seen {
			st = &pairState{}
			p.pairs[k] = st
		}
		if ev.Prewarm {
			// Not an acquire: the pair's session, idle from the
			// handshake's end.
			r.prewarm(ev.Key, ev.Start, ev.LeaseEnd)
			st.frontier = max(st.frontier, ev.Start)
			if p.EachPrewarm != nil {
				p.EachPrewarm(ev)
			}
			continue
		}
		if seen && ev.Start < st.frontier {
			p.Late++
		}
		sc.acquires++
		if !st.acquired {
			st.acquired = true
			sc.keys++
		}
		p.count(sc, ev, r.Acquire(ev.Key, ev.Start, ev.LeaseEnd, ev.Hit, ev.Redial, ev.Failed, ev.Health))
		st.frontier = max(st.frontier, ev.Start)
		if p.Each != nil {
			p.Each(ev)
		}
	}
}

// count counts one attributed acquire in its scope: a hit, or a miss for
// cause.
func (p *PairStage) count(sc *scopeStats, ev *record.Acquire, cause string) {
	if ev.Hit {
		sc.Hits++
		return
	}
	ev.Reason = reasonIndex[cause]
	sc.misses++
	sc.Reasons[ev.Reason]++
	if !spans.IsExplainedMiss(cause) {
		p.addExample(ev.Trace)
	}
}

// replay returns the scope's replay, made on first use under the settings
// the scope recorded, or the assumed ones.
func (p *PairStage) replay(scope int32) *scopeReplay {
	if r := p.replays[scope]; r != nil {
		return r
	}
	set, assumed, unusable := p.assumed, true, ""
	if p.Recorded != nil {
		ps, mixed := p.Recorded(scope)
		switch s, err := ps.Idle(); {
		case mixed:
			unusable = "its acquire spans recorded different settings"
		case ps == nil:
		case err != nil:
			unusable = err.Error()
		default:
			set, assumed = s, false
		}
	}
	r := NewScopeReplay(set, assumed)
	r.unusable = unusable
	p.replays[scope] = r
	return r
}

// UnusableSettingsWarning says, in one warning, which pool scopes recorded
// idle settings the replay could not use (different ones on different
// spans, or a value that is no idle TTL), so their misses were attributed
// under the assumed settings: the report's "assumed" would otherwise read
// as if they had recorded none. It names the first scope by name and
// counts the rest; "" when there is none.
func (p *PairStage) UnusableSettingsWarning(strs []string) string {
	n, first, why := 0, "", ""
	for scope, r := range p.replays {
		if r.unusable == "" {
			continue
		}
		n++
		name := ""
		if scope >= 0 {
			name = strs[scope]
		}
		if n == 1 || name < first || name == first && r.unusable < why {
			first, why = name, r.unusable
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d pool scope(s) recorded idle settings that cannot be replayed under, first %.64q: %s; their misses were attributed under the assumed idle TTL %s",
		n, first, why, p.assumed.TTL)
}

// SortGroups sorts each group (one pair's acquires) in time order, on
// several goroutines when they hold many: the pairs are independent.
func SortGroups(groups [][]record.Acquire) {
	total := 0
	for _, g := range groups {
		total += len(g)
	}
	workers := min(runtime.GOMAXPROCS(0), len(groups))
	if total < ParallelSortMin || workers < 2 {
		var s pairTimeSorter
		for _, g := range groups {
			s.sort(g)
		}
		return
	}
	// Split the groups into runs of about equal acquires, one per worker.
	var wg sync.WaitGroup
	per := (total + workers - 1) / workers
	for lo := 0; lo < len(groups); {
		hi, n := lo+1, len(groups[lo])
		for hi < len(groups) && n+len(groups[hi]) <= per {
			n += len(groups[hi])
			hi++
		}
		wg.Add(1)
		go func(run [][]record.Acquire) {
			defer wg.Done()
			var s pairTimeSorter
			for _, g := range run {
				s.sort(g)
			}
		}(groups[lo:hi])
		lo = hi
	}
	wg.Wait()
}

// anyInferred reports whether a group holds an acquire inferred from a
// call, whose hit firstCalls decides.
func anyInferred(groups ...[]record.Acquire) bool {
	for _, g := range groups {
		for i := range g {
			if g[i].Inferred() {
				return true
			}
		}
	}
	return false
}

// firstCalls marks the first call of each session, among the acquires
// inferred from calls, as the miss that dialed it, in time order over every
// pair, and counts it as its scope's handshake.
func (p *PairStage) firstCalls(evs []record.Acquire) {
	order := make([]int32, len(evs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		ea, eb := &evs[a], &evs[b]
		return cmp.Or(cmp.Compare(ea.Start, eb.Start), cmpEventSpan(ea, eb))
	})
	for _, i := range order {
		ev := &evs[i]
		if !ev.Inferred() || p.sessions[ev.Session] {
			continue
		}
		p.sessions[ev.Session] = true
		ev.Hit = false
		p.Handshakes[ev.Scope]++
	}
}

// addExample keeps the MaxExamples smallest distinct trace ids.
func (p *PairStage) addExample(t pcommon.TraceID) {
	i, found := slices.BinarySearchFunc(p.examples, t, func(a, b pcommon.TraceID) int { return bytes.Compare(a[:], b[:]) })
	if found || i >= report.MaxExamples {
		return
	}
	p.examples = slices.Insert(p.examples, i, t)
	if len(p.examples) > report.MaxExamples {
		p.examples = p.examples[:report.MaxExamples]
	}
}

// Report returns the pool figures of the attributed acquires; strs names
// the scopes.
func (p *PairStage) Report(strs []string) report.PoolReport {
	r := report.PoolReport{MissReasons: newReasons(), UnexplainedExamples: []string{}, ByScope: []report.ScopeReport{}}
	for scope := range p.Handshakes {
		if p.Scopes[scope] == nil {
			p.Scopes[scope] = &scopeStats{} // a scope with handshakes but no acquire still gets its row
		}
	}
	for scope, st := range p.Scopes {
		r.Acquires += st.acquires
		r.Hits += st.Hits
		r.Misses += st.misses
		r.Keys += st.keys
		for i, n := range st.Reasons[:len(spans.MissReasons)] {
			r.MissReasons[spans.MissReasons[i]] += n
		}
		hs := p.Handshakes[scope]
		r.Handshakes += hs
		name := ""
		if scope >= 0 {
			name = strs[scope]
		}
		r.ByScope = append(r.ByScope, report.ScopeReport{
			Scope:          name,
			Acquires:       st.acquires,
			Hits:           st.Hits,
			Misses:         st.misses,
			HitRate:        ratio(st.Hits, st.acquires),
			Handshakes:     hs,
			Keys:           st.keys,
			ColdStartFloor: ratio(st.keys, st.acquires),
			ExcessMisses:   max(0, st.misses-st.keys),
			MissReasons:    st.Reasons.asMap(),
		})
		p.noteSettings(&r.ByScope[len(r.ByScope)-1], scope)
	}
	slices.SortFunc(r.ByScope, func(a, b report.ScopeReport) int { return cmp.Compare(a.Scope, b.Scope) })
	r.Scopes = len(r.ByScope)
	r.HitRate = ratio(r.Hits, r.Acquires)
	r.AcquiresPerHandshake = ratio(r.Acquires, r.Handshakes)
	r.ColdStartFloor = ratio(r.Keys, r.Acquires)
	r.ExcessMisses = max(0, r.Misses-r.Keys)
	r.UnexplainedMisses = report.Unexplained(r.MissReasons)
	for _, t := range p.examples {
		r.UnexplainedExamples = append(r.UnexplainedExamples, t.String())
	}
	return r
}

// noteSettings says in sc whose idle settings the scope was replayed
// under: its own recorded ones, or the assumed.
func (p *PairStage) noteSettings(sc *report.ScopeReport, scope int32) {
	r := p.replays[scope]
	if r == nil {
		r = p.replay(scope) // a scope with handshakes only: what it would be
	}
	sc.Settings, sc.IdleTTLSeconds = report.SettingsRecorded, r.core.Settings().TTL.Seconds()
	if r.assumed {
		sc.Settings = report.SettingsAssumed
	}
}

// SettingsSource says whose settings the scopes with acquires were
// attributed under: recorded by all, assumed for all, mixed, or "" with
// none.
func SettingsSource(scopes []report.ScopeReport) string {
	out := ""
	for _, sc := range scopes {
		switch {
		case sc.Acquires == 0:
		case out == "":
			out = sc.Settings
		case out != sc.Settings:
			return report.SettingsMixed
		}
	}
	return out
}

// Attributed returns the acquire events attributed by a batch pair stage:
// each with its hit decided and its miss reason set.
func Attributed(e *record.Table, cfg rulefmt.Config) []record.Acquire {
	st := NewBatchPairStage(cfg)
	st.Recorded = func(scope int32) (record.PoolSettings, bool) {
		return record.RecordedIn(e.SettingsByScope, e.Strs, scope)
	}
	out := make([]record.Acquire, 0, len(e.Acquires))
	st.Each = func(ev *record.Acquire) { out = append(out, *ev) }
	st.Add(e.Acquires) // a batch stage files copies
	st.Advance(math.MaxInt64)
	return out
}
