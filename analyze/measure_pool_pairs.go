package analyze

import (
	"bytes"
	"cmp"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/mcptrace/mcptrace/spans"
)

// pairEvent is one acquire out of its index: what miss attribution needs,
// with the scope, key and session as ids into a string table (-1 none) and
// the trace and span ids as the order's last tie-break.
type pairEvent struct {
	start, leaseEnd     int64
	trace               pcommon.TraceID
	span                uint64
	scope, key, session int32
	hit, redial, failed bool
	health              bool // the pool recorded health_check as the miss reason
}

// pairKey names one (scope, key) pair.
type pairKey struct{ scope, key int32 }

// pairState is what attribution keeps of a pair between two advances: not
// its acquires, so a stream holds per pair three figures, whatever its
// length.
type pairState struct {
	lastEnd    int64 // when the latest lease of the pair ended
	lastFailed bool  // whether that lease failed
	frontier   int64 // the latest start attributed
}

// pairStage attributes the pool's misses across traces (the rule is
// poolAcc.attribute's, see reasonFor). It buffers the acquires observations
// bring and, on advance(t), attributes those that started before t, pair by
// pair in time order, and folds them into counts. Batch analysis advances
// once, to the end of time, after every trace was observed: exactly
// today's single-index answer. A stream advances as its watermark moves; an
// acquire that arrives after its pair was attributed past its start (a
// trace finalized very late) is attributed on arrival against the pair's
// state and counted in late.
type pairStage struct {
	ttl     int64
	semconv bool
	buf     []pairEvent

	pairs      map[pairKey]*pairState
	sessions   map[int32]bool // semconv: sessions whose first call was attributed
	scopes     map[int32]*scopeStats
	handshakes map[int32]int // by scope, -1 included
	examples   []pcommon.TraceID
	late       int // acquires attributed behind their pair's frontier
}

func newPairStage(cfg Config) *pairStage {
	return &pairStage{
		ttl:        int64(cfg.IdleTTL / time.Nanosecond),
		semconv:    cfg.Profile == ProfileSemconv,
		pairs:      map[pairKey]*pairState{},
		sessions:   map[int32]bool{},
		scopes:     map[int32]*scopeStats{},
		handshakes: map[int32]int{},
	}
}

// add buffers events until an advance attributes them.
func (p *pairStage) add(events []pairEvent) {
	if len(p.buf) == 0 {
		p.buf = events // the observation hands its events over
		return
	}
	p.buf = append(p.buf, events...)
}

// cmpEventSpan orders two events by trace id, then span id: the order's
// tie-break that does not depend on arrival.
func cmpEventSpan(a, b *pairEvent) int {
	if c := bytes.Compare(a.trace[:], b.trace[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.span, b.span)
}

// advance attributes every buffered acquire that started before t.
func (p *pairStage) advance(t int64) {
	// Partition in place: the acquires to attribute first, the others
	// after, moved back to the front once these are done.
	n := 0
	for i := range p.buf {
		if p.buf[i].start < t {
			p.buf[i], p.buf[n] = p.buf[n], p.buf[i]
			n++
		}
	}
	if n == 0 {
		return
	}
	ready := p.buf[:n]
	defer func() {
		rest := copy(p.buf, p.buf[n:])
		p.buf = p.buf[:rest]
	}()
	if p.semconv {
		// The first call of each session dialed it.
		slices.SortFunc(ready, func(a, b pairEvent) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmpEventSpan(&a, &b))
		})
		for i := range ready {
			ev := &ready[i]
			if ev.session < 0 || p.sessions[ev.session] {
				continue
			}
			p.sessions[ev.session] = true
			ev.hit = false
			p.handshakes[ev.scope]++
		}
	}
	// Group by pair (a counting sort), then each pair's acquires in time
	// order: cheaper than one sort on the pair and the time together.
	pairOf := make([]int32, len(ready))
	ids := map[pairKey]int32{}
	var counts []int32
	for i := range ready {
		k := pairKey{ready[i].scope, ready[i].key}
		id, ok := ids[k]
		if !ok {
			id = int32(len(counts))
			ids[k] = id
			counts = append(counts, 0)
		}
		pairOf[i] = id
		counts[id]++
	}
	next := make([]int32, len(counts))
	for id := 1; id < len(counts); id++ {
		next[id] = next[id-1] + counts[id-1]
	}
	grouped := make([]pairEvent, len(ready))
	for i := range ready {
		grouped[next[pairOf[i]]] = ready[i]
		next[pairOf[i]]++
	}
	start := int32(0)
	for _, c := range counts {
		slices.SortFunc(grouped[start:start+c], func(a, b pairEvent) int {
			return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.leaseEnd, b.leaseEnd), cmpEventSpan(&a, &b))
		})
		start += c
	}
	ready = grouped
	for i := range ready {
		ev := &ready[i]
		k := pairKey{ev.scope, ev.key}
		st, seen := p.pairs[k]
		if !seen {
			st = &pairState{}
			p.pairs[k] = st
		} else if ev.start < st.frontier {
			p.late++
		}
		sc := p.scopes[ev.scope]
		if sc == nil {
			sc = &scopeStats{reasons: newReasons()}
			p.scopes[ev.scope] = sc
		}
		sc.acquires++
		if !seen {
			sc.keys++
		}
		if ev.hit {
			sc.hits++
		} else {
			reason := reasonFor(ev.redial, !seen, ev.start, st.lastEnd, st.lastFailed, ev.health, p.ttl)
			sc.misses++
			sc.reasons[reason]++
			if reason == spans.MissUnexplained {
				p.addExample(ev.trace)
			}
		}
		if !seen || ev.leaseEnd > st.lastEnd || (ev.leaseEnd == st.lastEnd && ev.failed) {
			st.lastEnd, st.lastFailed = ev.leaseEnd, ev.failed
		}
		st.frontier = max(st.frontier, ev.start)
	}
}

// addExample keeps the MaxExamples smallest distinct trace ids.
func (p *pairStage) addExample(t pcommon.TraceID) {
	i, found := slices.BinarySearchFunc(p.examples, t, func(a, b pcommon.TraceID) int { return bytes.Compare(a[:], b[:]) })
	if found || i >= MaxExamples {
		return
	}
	p.examples = slices.Insert(p.examples, i, t)
	if len(p.examples) > MaxExamples {
		p.examples = p.examples[:MaxExamples]
	}
}

// reasonFor gives a miss its cause (see poolAcc.attribute for the order of
// precedence): first says it is its pair's first acquire; lastEnd and
// lastFailed describe the pair's latest lease before it.
func reasonFor(redial, first bool, start, lastEnd int64, lastFailed, health bool, ttl int64) string {
	switch {
	case redial:
		return spans.MissRedial
	case first:
		return spans.MissCold
	case lastEnd > start:
		return spans.MissConcurrent
	case lastFailed:
		return spans.MissAfterFailure
	case start-lastEnd > ttl:
		return spans.MissTTL
	case health:
		return spans.MissHealthCheck
	}
	return spans.MissUnexplained
}

// report returns the pool figures of the attributed acquires; strs names
// the scopes.
func (p *pairStage) report(strs []string) PoolReport {
	r := PoolReport{MissReasons: newReasons(), UnexplainedExamples: []string{}, ByScope: []ScopeReport{}}
	for scope := range p.handshakes {
		if p.scopes[scope] == nil {
			p.scopes[scope] = &scopeStats{reasons: newReasons()} // a scope with handshakes but no acquire still gets its row
		}
	}
	for scope, st := range p.scopes {
		r.Acquires += st.acquires
		r.Hits += st.hits
		r.Misses += st.misses
		r.Keys += st.keys
		for k, n := range st.reasons {
			r.MissReasons[k] += n
		}
		hs := p.handshakes[scope]
		r.Handshakes += hs
		name := ""
		if scope >= 0 {
			name = strs[scope]
		}
		r.ByScope = append(r.ByScope, ScopeReport{
			Scope:          name,
			Acquires:       st.acquires,
			Hits:           st.hits,
			Misses:         st.misses,
			HitRate:        ratio(st.hits, st.acquires),
			Handshakes:     hs,
			Keys:           st.keys,
			ColdStartFloor: ratio(st.keys, st.acquires),
			ExcessMisses:   max(0, st.misses-st.keys),
			MissReasons:    st.reasons,
		})
	}
	slices.SortFunc(r.ByScope, func(a, b ScopeReport) int { return cmp.Compare(a.Scope, b.Scope) })
	r.Scopes = len(r.ByScope)
	r.HitRate = ratio(r.Hits, r.Acquires)
	r.AcquiresPerHandshake = ratio(r.Acquires, r.Handshakes)
	r.ColdStartFloor = ratio(r.Keys, r.Acquires)
	r.ExcessMisses = max(0, r.Misses-r.Keys)
	for _, t := range p.examples {
		r.UnexplainedExamples = append(r.UnexplainedExamples, t.String())
	}
	return r
}
