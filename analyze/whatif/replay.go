package whatif

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/minheap"
	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// The replay decides nothing itself: each scope's acquires go, in time
// order, through package idle, the pool's own idle policy, under the
// settings replayed. What the replay adds is only what the pool does not
// count: the sessions each scope holds open, their idle time and the
// pre-warm's unused dials.

// sess is one modelled session: prewarm says a pre-warm dialed it and no
// acquire took it yet.
type sess struct{ prewarm bool }

type (
	core  = idle.Core[int32, *sess, struct{}]
	entry = idle.Entry[int32, *sess, struct{}]
	evict = idle.Eviction[int32, *sess, struct{}]
)

// scopeState is one pool scope's replay: its core and the sessions it
// holds open (leased and idle).
type scopeState struct {
	core    *core
	open    int
	started bool
	lastEnd int64
}

// release is a lease to end: at end, of rec i, on entry e; or, with key
// set, a pre-warm dial whose session goes idle at end.
type release struct {
	end int64
	i   int32
	e   *entry
	key *idle.Key[int32, *sess, struct{}]
}

// cmpRelease orders releases by end, then by record.
func cmpRelease(a, b *release) int {
	return cmp.Or(cmp.Compare(a.end, b.end), cmp.Compare(a.i, b.i))
}

// replayer is one replay's state.
type replayer struct {
	w      *Workload
	set    Settings
	scopes []scopeState
	recent []int64 // per (service, key) id: the latest start an acquire of it had
	rel    minheap.Heap[release]
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
	r := &replayer{w: w, set: set, scopes: make([]scopeState, w.scopes), recent: make([]int64, len(w.skKey)), rel: minheap.New(cmpRelease)}
	for i := range r.recent {
		r.recent[i] = math.MinInt64
	}
	for i := range r.scopes {
		r.scopes[i].core = idle.New[int32, *sess, struct{}](set.idle(w.sweep(i)), nil)
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
		if ev.prewarm {
			r.recordedPrewarm(int32(i), ev)
			continue
		}
		r.acquire(int32(i), ev)
	}
	r.releaseUntil(math.MaxInt64)
	for s := range r.scopes {
		sc := &r.scopes[s]
		r.closed(sc, sc.lastEnd, sc.core.Close(nil))
	}
	return r.row, nil
}

// idle is the core's settings for s, with the scope's sweep interval.
func (s Settings) idle(sweep time.Duration) idle.Settings {
	return idle.Settings{TTL: s.IdleTTL, MaxIdlePerKey: s.IdlePerKey, FixedPerKey: !s.Peak, MaxIdle: s.MaxIdle, SweepInterval: sweep}
}

// sweep is the sweep interval scope s recorded, or the pool's default:
// no setting a what-if varies, but it bounds how long a pool remembers a
// key (idle.Settings.SweepInterval).
func (w *Workload) sweep(s int) time.Duration {
	if s < len(w.scopeRecs) && w.scopeRecs[s].settings != nil {
		if set, err := w.scopeRecs[s].settings.Idle(); err == nil {
			return set.SweepInterval
		}
	}
	return idle.DefaultSweepInterval
}

// releaseUntil ends every lease that ended at or before t: a lease ending
// when another starts is not concurrent with it (the analyzer's rule).
func (r *replayer) releaseUntil(t int64) {
	for r.rel.Len() > 0 && r.rel.Min().end <= t {
		x := r.rel.Pop()
		r.end(x)
	}
}

// acquire replays one acquire: the core decides its hit or its miss's
// cause; a redial and an idle session the pool found dead on its ping
// stay as recorded.
func (r *replayer) acquire(i int32, ev *rec) {
	sc := &r.scopes[ev.scope]
	if !sc.started {
		sc.started = true
		r.prewarm(ev, sc)
	}
	r.recent[ev.sk] = ev.start
	c := sc.core
	k, known, evs := c.Begin(r.w.pairKey[ev.pair], ev.start, nil)
	r.closed(sc, ev.start, evs)
	r.row.Acquires++
	var e *entry
	if !ev.redial {
		e, evs = c.TakeIdle(k, ev.start, nil)
		r.closed(sc, ev.start, evs)
	}
	if e != nil {
		r.row.IdleSessionSeconds += float64(ev.start-e.IdleSince()) / 1e9
		if ev.health {
			// The pool found this idle session dead on its ping: kept as
			// observed, a miss.
			c.Lease(e, ev.start)
			c.HealthFailed(e, ev.start)
			sc.open--
			e = nil
		}
	}
	if e != nil {
		r.row.Hits++
		c.Lease(e, ev.start)
		if e.Value.prewarm {
			e.Value.prewarm = false
			r.row.PrewarmUnused--
		}
	} else {
		cause := c.Cause(k, known, ev.redial)
		r.row.MissesByCause[cause]++
		c.Miss(k, cause, ev.start)
		e = c.Dialed(k, &sess{}, false)
		r.opened(sc)
	}
	r.rel.Push(release{end: ev.end, i: i, e: e})
}

// opened counts a session dialed in scope sc.
func (r *replayer) opened(sc *scopeState) {
	sc.open++
	r.row.SessionsOpened++
	r.row.PeakSessions = max(r.row.PeakSessions, sc.open)
}

// closed counts the idle sessions the core closed at now: their idle time,
// up to their expiry when they expired unused (the sweep, or the next
// acquire, closes them about then).
func (r *replayer) closed(sc *scopeState, now int64, evs []evict) {
	for _, ev := range evs {
		since := ev.Entry.IdleSince()
		end := min(now, sc.core.ExpiresAt(since))
		r.row.IdleSessionSeconds += float64(max(end-since, 0)) / 1e9
		sc.open--
	}
}

// end ends one lease: a failed one drops its session, a clean one goes idle
// under the caps.
func (r *replayer) end(x release) {
	ev := &r.w.recs[x.i]
	sc := &r.scopes[ev.scope]
	sc.lastEnd = max(sc.lastEnd, x.end)
	if x.key != nil {
		_, evs := sc.core.Prewarmed(x.key, &sess{prewarm: true}, false, x.end, nil)
		r.closed(sc, x.end, evs)
		return
	}
	drop := ""
	if ev.failed {
		drop = spans.MissAfterFailure
	}
	closeIt, evs := sc.core.Release(x.e, x.end, drop, nil)
	if closeIt {
		sc.open--
	}
	r.closed(sc, x.end, evs)
}

// recordedPrewarm replays a pre-warm dial the dump recorded, when the
// settings are the run's own pre-warm (PrewarmAsRecorded); none and a
// recent:N pre-warm replace the recorded one. The key
// is known from the dial's start, its session idle from its end, as the
// pool's Options.Prewarm does.
func (r *replayer) recordedPrewarm(i int32, ev *rec) {
	if r.set.Prewarm != PrewarmAsRecorded || r.set.IdlePerKey < 0 {
		return
	}
	sc := &r.scopes[ev.scope]
	k, _, evs := sc.core.KeyOf(r.w.pairKey[ev.pair], ev.start, nil)
	r.closed(sc, ev.start, evs)
	r.opened(sc)
	r.row.PrewarmDials++
	r.row.PrewarmUnused++
	r.rel.Push(release{end: max(ev.end, ev.start), i: i, key: k})
}

// prewarm dials, before a scope's first acquire, the Prewarm keys the
// earlier scopes of its service called most recently, and puts their
// sessions idle, as the pool's Options.Prewarm does.
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
	sortRecent(best, r.recent, r.w.skKey)
	for _, sk := range best[:min(n, len(best), r.set.MaxIdle)] {
		k, _, evs := sc.core.KeyOf(r.w.skKey[sk], ev.start, nil)
		r.closed(sc, ev.start, evs)
		r.opened(sc)
		r.row.PrewarmDials++
		r.row.PrewarmUnused++
		_, evs = sc.core.Prewarmed(k, &sess{prewarm: true}, false, ev.start, nil)
		r.closed(sc, ev.start, evs)
	}
}

// sortRecent orders (service, key) ids by their latest acquire, most
// recent first, ties by key id so the replay is deterministic.
func sortRecent(sks []int32, recent []int64, key []int32) {
	slices.SortFunc(sks, func(a, b int32) int { return cmp.Or(cmp.Compare(recent[b], recent[a]), cmp.Compare(key[a], key[b])) })
}
