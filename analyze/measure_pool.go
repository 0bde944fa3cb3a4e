package analyze

import (
	"cmp"
	"slices"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// PoolReport is the pool measure: how often acquires reused an idle session,
// how close the misses are to the cold-start floor, and why each miss
// happened.
type PoolReport struct {
	// Acquires counts acquires: acquire spans, plus under acquire-on-miss the
	// invocations without one (hits), or under semconv the tool calls.
	Acquires int `json:"acquires"`
	// Hits and Misses split Acquires.
	Hits   int `json:"hits"`
	Misses int `json:"misses"`
	// HitRate is Hits / Acquires; null without acquires.
	HitRate *float64 `json:"hit_rate"`
	// Handshakes counts new sessions: handshake spans (semconv: distinct
	// session ids).
	Handshakes int `json:"handshakes"`
	// AcquiresPerHandshake is Acquires / Handshakes; null without handshakes.
	AcquiresPerHandshake *float64 `json:"acquires_per_handshake"`
	// Scopes counts distinct pool scopes; Keys distinct (scope, key) pairs.
	Scopes int `json:"scopes"`
	Keys   int `json:"keys"`
	// ColdStartFloor is Keys / Acquires: the miss rate no pool can beat,
	// since the first acquire of each pair must dial. Null without acquires.
	ColdStartFloor *float64 `json:"cold_start_floor"`
	// ExcessMisses is Misses - Keys, at least 0: misses above the floor.
	ExcessMisses int `json:"excess_misses"`
	// MissReasons counts misses by attributed cause, one key per entry of
	// spans.MissReasons (cold, concurrent, ttl, redial, after_failure,
	// health_check, unexplained); every key is always present.
	MissReasons map[string]int `json:"miss_reasons"`
	// UnexplainedExamples are trace ids holding an unexplained miss, sorted,
	// at most MaxExamples.
	UnexplainedExamples []string `json:"unexplained_examples"`
	// Latency holds duration percentiles in milliseconds.
	Latency LatencyReport `json:"latency_ms"`
	// ByScope breaks the figures down per pool scope, sorted by scope.
	ByScope []ScopeReport `json:"by_scope"`
}

// ScopeReport is the pool measure for one pool scope.
type ScopeReport struct {
	// Scope is the scope's name; "" for acquires nothing names.
	Scope          string         `json:"scope"`
	Acquires       int            `json:"acquires"`
	Hits           int            `json:"hits"`
	Misses         int            `json:"misses"`
	HitRate        *float64       `json:"hit_rate"`
	Handshakes     int            `json:"handshakes"`
	Keys           int            `json:"keys"`
	ColdStartFloor *float64       `json:"cold_start_floor"`
	ExcessMisses   int            `json:"excess_misses"`
	MissReasons    map[string]int `json:"miss_reasons"`
}

// MaxExamples caps every list of example trace ids in a report.
const MaxExamples = 10

// acqEvent is one acquire as the pool measure sees it, whatever the profile
// that produced it.
type acqEvent struct {
	start    int64 // acquire start
	leaseEnd int64 // when the lease went back: the invocation's end, or the redial's start
	span     int32 // the acquire span (or the invoke of an implied hit, or the semconv call)
	parent   int32 // the acquire's invocation
	scope    int32 // interned scope name, -1 none
	key      int64 // pool key: an interned value, or semconv's (address, port); -1 none
	hit      bool
	redial   bool  // attempt 2: the transparent redial
	failed   bool  // the lease ended in a failure that drops the session
	recorded int32 // the pool's own miss_reason, -1 none
	reason   uint8 // index into spans.MissReasons, for a miss once attributed
}

// poolAcc accumulates the pool measure.
type poolAcc struct {
	v      *vocab
	ttl    int64
	lat    *latencyAcc
	events []acqEvent
	// handshakes per scope (scope -1 included)
	handshakes map[int32]int
	// compares counts acquiredBefore calls: a test pins that ordering an
	// invocation's acquires stays O(n log n) for a huge fan-out.
	compares int
}

func newPoolAcc(v *vocab, cfg Config, lat *latencyAcc) *poolAcc {
	return &poolAcc{v: v, ttl: int64(cfg.IdleTTL / time.Nanosecond), lat: lat, handshakes: map[int32]int{}}
}

// collect gathers the acquire events of the whole index under the profile.
func (p *poolAcc) collect() {
	x := p.v.x
	if p.v.profile == ProfileSemconv {
		p.collectSemconv()
		return
	}
	n := x.nspans // arrays below are indexed by span index

	// One pass for the facts that live on other spans: which acquires have a
	// handshake child, and the acquires of each invocation (nearly always
	// one; a redial makes two, a hostile dump a hundred thousand).
	hasHandshake := make([]bool, n)
	var withParent []int32 // acquires with a parent, in index order
	var orphans []int32    // acquires without a parent
	perName := p.v.countNames()
	p.lat.grow(latHandshake, nameCount(perName, p.v.handshake))
	p.lat.grow(latCall, p.v.callSpans(perName))
	for _, i := range x.order {
		if p.v.poll.stop() {
			return
		}
		s := x.sp(i)
		switch s.name {
		case p.v.handshake:
			if s.parent >= 0 {
				hasHandshake[s.parent] = true
			}
			p.handshakes[p.v.scopeOf(i)]++
			p.lat.add(latHandshake, s.end-s.start)
		case p.v.acquire:
			if s.parent < 0 {
				orphans = append(orphans, i)
				break
			}
			withParent = append(withParent, i)
		}
		if p.v.isCall(i) {
			p.lat.add(latCall, s.end-s.start)
		}
	}
	// Group the acquires by invocation (a counting sort) and sort each
	// invocation's in start order: O(n log n) whatever the fan-out.
	acqFirst := make([]int32, n+1) // invocation inv's acquires are byInv[acqFirst[inv]:acqFirst[inv+1]]
	for _, a := range withParent {
		acqFirst[x.sp(a).parent+1]++
	}
	for inv := int32(0); inv < n; inv++ {
		acqFirst[inv+1] += acqFirst[inv]
	}
	byInv := make([]int32, len(withParent))
	{
		next := slices.Clone(acqFirst[:n])
		for _, a := range withParent {
			inv := x.sp(a).parent
			byInv[next[inv]] = a
			next[inv]++
		}
	}
	acquiresOf := func(inv int32) []int32 { return byInv[acqFirst[inv]:acqFirst[inv+1]] }
	for _, inv := range x.order {
		if g := acquiresOf(inv); len(g) > 1 {
			slices.SortFunc(g, func(a, b int32) int {
				if p.acquiredBefore(a, b) {
					return -1
				}
				return 1 // never equal: acquires of one invocation differ in span id
			})
		}
	}

	// One event per acquire, an invocation's contiguous and in start order,
	// so each lease ends where the next attempt of its invocation begins.
	capEvents := nameCount(perName, p.v.acquire)
	if p.v.profile == ProfileAcquireOnMiss {
		capEvents += nameCount(perName, p.v.invoke) // implied hits
	}
	p.events = make([]acqEvent, 0, capEvents)
	p.lat.grow(latAcquireHit, nameCount(perName, p.v.acquire))
	leaseFirst := make([]int32, n) // per invocation: its first event, -1 none
	for i := range leaseFirst {
		leaseFirst[i] = -1
	}
	emit := func(a, next int32) {
		s := x.sp(a)
		ev := acqEvent{start: s.start, leaseEnd: s.end, span: a, parent: s.parent, scope: p.v.scopeOf(a), key: -1, recorded: -1}
		if key, ok := p.v.inherited(a, p.v.kKey); ok {
			ev.key = int64(key)
		}
		if r, ok := x.attrVal(a, p.v.kReason); ok {
			ev.recorded = r
		}
		if at, ok := x.attrVal(a, p.v.kAttempt); ok && x.vals[at] != "1" && x.vals[at] != "0" {
			ev.redial = true
		}
		if h, ok := x.attrVal(a, p.v.kHit); ok {
			ev.hit = h == p.v.valTrue
		} else {
			ev.hit = !hasHandshake[a]
		}
		if s.parent >= 0 {
			ev.leaseEnd = x.sp(s.parent).end
			if next >= 0 {
				ev.leaseEnd = x.sp(next).start
			}
		}
		ev.leaseEnd = max(ev.leaseEnd, ev.start)
		if ev.hit {
			p.lat.add(latAcquireHit, s.end-s.start)
		} else {
			p.lat.add(latAcquireMiss, s.end-s.start)
		}
		p.events = append(p.events, ev)
	}
	for _, inv := range x.order {
		g := acquiresOf(inv)
		if len(g) == 0 {
			continue
		}
		leaseFirst[inv] = int32(len(p.events))
		for k, a := range g {
			next := int32(-1)
			if k+1 < len(g) {
				next = g[k+1]
			}
			emit(a, next)
		}
	}
	acqFirst, byInv, withParent = nil, nil, nil
	for _, a := range orphans {
		emit(a, -1)
	}
	acquireEvents := len(p.events)

	// acquire-on-miss: an invocation without a first-attempt acquire child
	// reused an idle session; it is a hit the dump shows only by absence.
	var implied []int32 // per invocation: its implied hit event, -1 none
	if p.v.profile == ProfileAcquireOnMiss {
		implied = make([]int32, n)
		for i := range implied {
			implied[i] = -1
		}
		for _, i := range x.order {
			if p.v.poll.stop() {
				return
			}
			s := x.sp(i)
			if s.name != p.v.invoke {
				continue
			}
			leaseEnd := s.end
			if k := leaseFirst[i]; k >= 0 {
				if !p.events[k].redial {
					continue // its first attempt is an acquire span: a miss
				}
				leaseEnd = p.events[k].start // reused, expired, then redialed
			}
			ev := acqEvent{start: s.start, leaseEnd: max(leaseEnd, s.start), span: i, parent: i, scope: p.v.scopeOf(i), key: -1, hit: true, recorded: -1}
			if key, ok := x.attrVal(i, p.v.kKey); ok {
				ev.key = int64(key)
			}
			implied[i] = int32(len(p.events))
			p.events = append(p.events, ev)
		}
	}
	// leasesOf returns the events of invocation inv in start order.
	leasesOf := func(inv int32, buf []int32) []int32 {
		buf = buf[:0]
		if implied != nil && implied[inv] >= 0 {
			buf = append(buf, implied[inv])
		}
		if k := leaseFirst[inv]; k >= 0 {
			for ; int(k) < acquireEvents && p.events[k].parent == inv; k++ {
				buf = append(buf, k)
			}
		}
		return buf
	}

	// A failed call fails the lease it ran on: the last lease of its
	// invocation that began before it.
	// The invocation is the call's nearest ancestor holding a lease, found
	// for every span in one pass over the tree rather than a walk per call.
	var buf []int32
	var leased []int32
	for _, i := range x.order {
		if p.v.poll.stop() {
			return
		}
		if !p.v.isCall(i) || !p.v.failed(i) {
			continue
		}
		if leased == nil {
			leased = x.nearestAncestors(func(inv int32) bool {
				return leaseFirst[inv] >= 0 || (implied != nil && implied[inv] >= 0)
			})
		}
		inv := leased[i]
		if inv < 0 {
			continue
		}
		buf = leasesOf(inv, buf)
		best := buf[0]
		for _, k := range buf {
			if p.events[k].start <= x.sp(i).start {
				best = k
			}
		}
		p.events[best].failed = true
	}
	// An invocation that failed (the dial itself, a cancellation) fails its
	// last lease, call span or not.
	for inv := int32(0); inv < n; inv++ {
		if (leaseFirst[inv] >= 0 || (implied != nil && implied[inv] >= 0)) && p.v.failed(inv) {
			buf = leasesOf(inv, buf)
			p.events[buf[len(buf)-1]].failed = true
		}
	}
}

// collectSemconv reads OpenTelemetry MCP client spans: every tools/call with
// a session id is an acquire, and the first call of each session a miss.
func (p *poolAcc) collectSemconv() {
	x := p.v.x
	type first struct {
		start int64
		ev    int
	}
	firstOf := map[int32]first{}
	for _, i := range x.order {
		if p.v.poll.stop() {
			return
		}
		if !p.v.isCall(i) {
			continue
		}
		s := x.sp(i)
		p.lat.add(latCall, s.end-s.start)
		sess, ok := x.attrVal(i, p.v.kSession)
		if !ok {
			continue // a stateless call: nothing to pool
		}
		ev := acqEvent{start: s.start, leaseEnd: s.end, span: i, scope: p.v.scopeOf(i), key: -1, hit: true, failed: p.v.failed(i), recorded: -1}
		addr, okA := x.attrVal(i, p.v.kAddr)
		port, okP := x.attrVal(i, p.v.kPort)
		if okA || okP {
			if !okA {
				addr = -1
			}
			if !okP {
				port = -1
			}
			ev.key = int64(addr+1)<<32 | int64(port+1)
		}
		p.events = append(p.events, ev)
		if f, seen := firstOf[sess]; !seen || s.start < f.start || (s.start == f.start && x.cmpSpans(i, p.events[f.ev].span) < 0) {
			firstOf[sess] = first{start: s.start, ev: len(p.events) - 1}
		}
	}
	for _, f := range firstOf {
		p.events[f.ev].hit = false
		p.handshakes[p.events[f.ev].scope]++
	}
}

// reasonIndex maps a miss reason to its index in spans.MissReasons.
var reasonIndex = func() map[string]uint8 {
	m := make(map[string]uint8, len(spans.MissReasons))
	for i, r := range spans.MissReasons {
		m[r] = uint8(i)
	}
	return m
}()

// scopeStats accumulates one scope's figures.
type scopeStats struct {
	acquires, hits, misses, keys int
	reasons                      map[string]int
}

func newReasons() map[string]int {
	m := make(map[string]int, len(spans.MissReasons))
	for _, r := range spans.MissReasons {
		m[r] = 0
	}
	return m
}

// attribute walks each (scope, key) pair's acquires in time order and gives
// every miss one cause, in this order of precedence: redial (attempt 2),
// cold (first acquire of the pair), concurrent (another lease of the pair
// still open), after_failure (the pair's last lease to end failed), ttl (the
// idle gap since the pair's last release exceeds the TTL), health_check (the
// pool says so and the dump cannot contradict it), else unexplained.
func (p *poolAcc) attribute() {
	// Bucket the events by pair (a counting sort, stable), then order each
	// pair's events in time.
	type pairKey struct {
		scope int32
		key   int64
	}
	pairs := map[pairKey]int32{}
	pairOf := make([]int32, len(p.events))
	var counts []int32
	for i := range p.events {
		k := pairKey{p.events[i].scope, p.events[i].key}
		id, ok := pairs[k]
		if !ok {
			id = int32(len(counts))
			pairs[k] = id
			counts = append(counts, 0)
		}
		pairOf[i] = id
		counts[id]++
	}
	offsets := make([]int32, len(counts)+1)
	for id, c := range counts {
		offsets[id+1] = offsets[id] + c
	}
	// pairOf becomes each event's destination; the permutation is applied in
	// place, one cycle at a time, rather than into a second copy.
	next := slices.Clone(offsets[:len(counts)])
	dest := pairOf
	for i, id := range pairOf {
		dest[i] = next[id]
		next[id]++
	}
	for i := range p.events {
		for int(dest[i]) != i {
			j := dest[i]
			p.events[i], p.events[j] = p.events[j], p.events[i]
			dest[i], dest[j] = dest[j], dest[i]
		}
	}

	x := p.v.x
	for id := range counts {
		group := p.events[offsets[id]:offsets[id+1]]
		slices.SortFunc(group, func(a, b acqEvent) int {
			switch {
			case a.start != b.start:
				return cmp.Compare(a.start, b.start)
			case a.leaseEnd != b.leaseEnd:
				return cmp.Compare(a.leaseEnd, b.leaseEnd)
			}
			return x.cmpSpans(a.span, b.span)
		})
		var lastEnd int64
		lastFailed := false
		for j := range group {
			ev := &group[j]
			if !ev.hit {
				ev.reason = reasonIndex[p.reason(ev, j == 0, lastEnd, lastFailed)]
			}
			if j == 0 || ev.leaseEnd > lastEnd || (ev.leaseEnd == lastEnd && ev.failed) {
				lastEnd, lastFailed = ev.leaseEnd, ev.failed
			}
		}
	}
}

// acquiredBefore reports whether acquire a orders before acquire b of the
// same invocation: by start, ties by span id.
func (p *poolAcc) acquiredBefore(a, b int32) bool {
	p.compares++
	sa, sb := p.v.x.sp(a), p.v.x.sp(b)
	if sa.start != sb.start {
		return sa.start < sb.start
	}
	return sa.id < sb.id
}

func (p *poolAcc) reason(ev *acqEvent, first bool, lastEnd int64, lastFailed bool) string {
	return reasonFor(ev.redial, first, ev.start, lastEnd, lastFailed, ev.recorded >= 0 && ev.recorded == p.v.valHealthCheck, p.ttl)
}

// ratio returns a/b, or nil when b is 0 (the figure is undefined, not 0).
func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	f := float64(a) / float64(b)
	return &f
}

// exampleTraces returns the distinct hex ids of traces, sorted, at most
// MaxExamples.
func exampleTraces(x *Index, traces []int32) []string {
	ids := make([]string, 0, len(traces))
	for _, t := range traces {
		ids = append(ids, x.traceID(t))
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > MaxExamples {
		ids = ids[:MaxExamples]
	}
	return ids
}
