package whatif

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/mcptrace/mcptrace/spans"
)

// sess is one modelled session: idle (in its pair's list and its scope's
// LRU) or leased.
type sess struct {
	idleSince  int64
	prev, next *sess // the scope's LRU, least recently released first
	prewarm    bool
	pair       int32
}

type pairState struct {
	idle       []*sess // most recently released last
	leased     int
	peak       int
	peakAt     int64
	lastEnd    int64
	lastFailed bool
	evicted    bool // its last idle session went to the caps
	// opened says the pair had a session before its first acquire: a
	// pre-warm's, so that a miss after it is not cold (the analyzer's
	// reading of a pre-warm handshake, its pair's first session).
	opened bool
}

type scopeState struct {
	head, tail *sess
	idle, open int
	started    bool
	lastEnd    int64
}

// release is a lease to end: at end, of rec i, on session s.
type release struct {
	end int64
	i   int32
	s   *sess
}

type releases []release

func (h releases) Len() int { return len(h) }
func (h releases) Less(i, j int) bool {
	return h[i].end < h[j].end || (h[i].end == h[j].end && h[i].i < h[j].i)
}
func (h releases) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *releases) Push(x any)   { *h = append(*h, x.(release)) }
func (h *releases) Pop() any     { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// replayer is one replay's state.
type replayer struct {
	w      *Workload
	set    Settings
	ttl    int64
	pairs  []pairState
	scopes []scopeState
	recent []int64 // per (service, key) id: the latest start an acquire of it had
	rel    releases
	row    Row
}

// replayPoll is how many acquires a replay runs between two looks at its
// context: a look costs far less than the acquires between two, and even a
// slow replay step (a scope's pre-warm ranking its service's keys) leaves
// a cancellation answered well within a second.
const replayPoll = 4096

// Replay replays w under set and returns its row.
func (w *Workload) Replay(set Settings) Row {
	row, _ := w.ReplayContext(context.Background(), set)
	return row
}

// ReplayContext is Replay stopped by ctx: it looks at ctx before the first
// acquire and every replayPoll acquires after, so a Ctrl-C during a long
// replay is answered promptly. Stopped, it returns ctx's error (wrapped)
// and the row so far, whose counts cover only the acquires replayed.
func (w *Workload) ReplayContext(ctx context.Context, set Settings) (Row, error) {
	if err := ctx.Err(); err != nil {
		return Row{Settings: set, MissesByCause: map[string]int{}}, fmt.Errorf("whatif: replay not started: %w", err)
	}
	r := &replayer{w: w, set: set, ttl: int64(set.IdleTTL), pairs: make([]pairState, w.pairs),
		scopes: make([]scopeState, w.scopes), recent: make([]int64, len(w.skKey))}
	for i := range r.recent {
		r.recent[i] = math.MinInt64
	}
	r.row = Row{Settings: set, MissesByCause: map[string]int{}}
	for i := range w.recs {
		if i > 0 && i%replayPoll == 0 {
			if err := ctx.Err(); err != nil {
				return r.row, fmt.Errorf("whatif: replay stopped after %d of %d acquires: %w", i, len(w.recs), err)
			}
		}
		ev := &w.recs[i]
		r.releaseUntil(ev.start)
		r.acquire(int32(i), ev)
	}
	r.releaseUntil(math.MaxInt64)
	for s := range r.scopes {
		r.closeScope(&r.scopes[s])
	}
	return r.row, nil
}

// releaseUntil ends every lease that ended at or before t: a lease ending
// when another starts is not concurrent with it (the analyzer's rule).
func (r *replayer) releaseUntil(t int64) {
	for len(r.rel) > 0 && r.rel[0].end <= t {
		x := heap.Pop(&r.rel).(release)
		r.end(x)
	}
}

func (r *replayer) acquire(i int32, ev *rec) {
	sc := &r.scopes[ev.scope]
	if !sc.started {
		sc.started = true
		r.prewarm(ev, sc)
	}
	r.recent[ev.sk] = ev.start
	ps := &r.pairs[ev.pair]
	r.row.Acquires++
	var s *sess
	if !ev.redial {
		s = r.takeIdle(ps, sc, ev.start)
	}
	if s != nil && ev.health {
		// The pool found this idle session dead on its ping: kept as
		// observed, a miss.
		sc.open-- // taken (its idle time counted) and dropped
		s = nil
		r.row.MissesByCause[spans.MissHealthCheck]++
	} else if s != nil {
		r.row.Hits++
		if s.prewarm {
			s.prewarm = false
			r.row.PrewarmUnused--
		}
	} else {
		r.row.MissesByCause[r.cause(ev, ps)]++
	}
	if s == nil {
		s = &sess{pair: ev.pair}
		sc.open++
		r.row.SessionsOpened++
		r.row.PeakSessions = max(r.row.PeakSessions, sc.open)
	}
	ps.leased++
	if ps.leased >= ps.peak || ev.start-ps.peakAt > r.ttl {
		ps.peak, ps.peakAt = ps.leased, ev.start
	}
	if ev.end > ps.lastEnd || ev.first || (ev.end == ps.lastEnd && ev.failed) {
		ps.lastEnd, ps.lastFailed = ev.end, ev.failed
	}
	heap.Push(&r.rel, release{end: ev.end, i: i, s: s})
}

// cause is the analyzer's attribution (analyze's reasonFor) over the
// replayed history, with evicted where only the caps explain the miss.
func (r *replayer) cause(ev *rec, ps *pairState) string {
	switch {
	case ev.redial:
		return spans.MissRedial
	case ev.first && !ps.opened:
		return spans.MissCold
	case ps.lastEnd > ev.start:
		return spans.MissConcurrent
	case ps.lastFailed:
		return spans.MissAfterFailure
	case ev.start-ps.lastEnd > r.ttl:
		return spans.MissTTL
	case ev.health:
		return spans.MissHealthCheck
	case ps.evicted:
		return MissEvicted
	}
	return spans.MissUnexplained
}

// takeIdle takes the pair's most recently released idle session, or
// closes them all when it has outlived the TTL (strictly longer, as the
// pool's expiredLocked).
func (r *replayer) takeIdle(ps *pairState, sc *scopeState, now int64) *sess {
	n := len(ps.idle)
	if n == 0 {
		return nil
	}
	s := ps.idle[n-1]
	if now-s.idleSince > r.ttl {
		for len(ps.idle) > 0 {
			r.evict(ps.idle[0], sc, now, false)
		}
		return nil
	}
	ps.idle = ps.idle[:n-1]
	r.lruRemove(sc, s)
	r.row.IdleSessionSeconds += float64(now-s.idleSince) / 1e9
	return s
}

// end ends one lease: a failed one drops its session, a clean one goes idle
// under the caps.
func (r *replayer) end(x release) {
	ev := &r.w.recs[x.i]
	ps := &r.pairs[ev.pair]
	sc := &r.scopes[ev.scope]
	ps.leased--
	sc.lastEnd = max(sc.lastEnd, x.end)
	if ev.failed {
		sc.open--
		return
	}
	r.putIdle(x.s, ps, sc, x.end)
}

func (r *replayer) putIdle(s *sess, ps *pairState, sc *scopeState, now int64) {
	if r.set.IdlePerKey < 0 {
		ps.evicted = true
		sc.open--
		return
	}
	s.idleSince = now
	ps.idle = append(ps.idle, s)
	ps.evicted = false
	r.lruPush(sc, s)
	limit := r.set.IdlePerKey
	if r.set.Peak && ps.peak > limit && now-ps.peakAt <= r.ttl {
		limit = ps.peak
	}
	if len(ps.idle) > limit {
		r.evict(ps.idle[0], sc, now, false) // a newer one stays: no drop
	}
	for sc.idle > r.set.MaxIdle {
		r.evict(sc.head, sc, now, true)
	}
}

// evict closes an idle session at now.
func (r *replayer) evict(s *sess, sc *scopeState, now int64, drop bool) {
	ps := &r.pairs[s.pair]
	for i, x := range ps.idle {
		if x == s {
			ps.idle = append(ps.idle[:i], ps.idle[i+1:]...)
			break
		}
	}
	if drop {
		ps.evicted = true
	}
	r.closeIdleAccounted(s, now)
	sc.open--
}

// closeIdleAccounted takes s out of the LRU and counts its idle time,
// capped at its expiry when it expired unused.
func (r *replayer) closeIdleAccounted(s *sess, now int64) {
	sc := &r.scopes[r.scopeOfPair(s.pair)]
	r.lruRemove(sc, s)
	end := now
	if exp := s.idleSince + r.ttl; now > exp {
		end = exp // the sweep (or the next acquire) closes it about then
	}
	r.row.IdleSessionSeconds += float64(end-s.idleSince) / 1e9
}

func (r *replayer) scopeOfPair(p int32) int32 { return r.w.pairScope[p] }

// closeScope closes a scope's idle sessions at its last lease end (the
// pool's Close).
func (r *replayer) closeScope(sc *scopeState) {
	for sc.head != nil {
		r.evict(sc.head, sc, sc.lastEnd, false)
	}
}

// prewarm dials, before a scope's first acquire, the Prewarm keys the
// earlier scopes of its service called most recently.
func (r *replayer) prewarm(ev *rec, sc *scopeState) {
	n := r.set.Prewarm
	if n <= 0 || r.set.IdlePerKey < 0 {
		return
	}
	var best []int32
	for _, sk := range r.w.svcKeys[r.w.scopeSvc[ev.scope]] {
		if r.recent[sk] != math.MinInt64 {
			best = append(best, sk)
		}
	}
	if len(best) == 0 {
		return
	}
	sortRecent(best, r.recent, r.w.skKey)
	for _, sk := range best[:min(n, len(best))] {
		k := r.w.skKey[sk]
		p, ok := r.w.pairOf[[2]int32{ev.scope, k}]
		if !ok {
			// A key this scope never calls: its handshake is wasted.
			r.row.SessionsOpened++
			r.row.PrewarmDials++
			r.row.PrewarmUnused++
			r.row.IdleSessionSeconds += float64(min(r.ttl, max(0, r.w.scopeEnd[ev.scope]-ev.start))) / 1e9
			continue
		}
		s := &sess{pair: p, prewarm: true}
		ps := &r.pairs[p]
		ps.opened, ps.lastEnd = true, ev.start // idle from the scope's start, as the analyzer reads the handshake's end
		sc.open++
		r.row.SessionsOpened++
		r.row.PrewarmDials++
		r.row.PrewarmUnused++
		r.row.PeakSessions = max(r.row.PeakSessions, sc.open)
		r.putIdle(s, ps, sc, ev.start)
	}
}

func (r *replayer) lruPush(sc *scopeState, s *sess) {
	s.prev, s.next = sc.tail, nil
	if sc.tail != nil {
		sc.tail.next = s
	} else {
		sc.head = s
	}
	sc.tail = s
	sc.idle++
}

func (r *replayer) lruRemove(sc *scopeState, s *sess) {
	if s.prev == nil && s.next == nil && sc.head != s {
		return
	}
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		sc.head = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		sc.tail = s.prev
	}
	s.prev, s.next = nil, nil
	sc.idle--
}

// sortRecent orders (service, key) ids by their latest acquire, most
// recent first, ties by key id so the replay is deterministic.
func sortRecent(sks []int32, recent []int64, key []int32) {
	slices.SortFunc(sks, func(a, b int32) int { return cmp.Or(cmp.Compare(recent[b], recent[a]), cmp.Compare(key[a], key[b])) })
}
