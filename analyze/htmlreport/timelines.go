package htmlreport

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/spans"
)

// laneAcc gathers one session lane of a scope: its figures, when it was
// first seen and its handshakes; for a kept lane, where its events fall in
// the drawing's count of hits, misses and handshakes (base) and how many
// of each the drawing has met (seen). It holds no event: the lanes' marks
// are drawn in a pass of their own, so a lane of a million acquires costs
// what one of a thousand does.
type laneAcc struct {
	lane  Lane
	first int64
	hss   int
	kept  bool
	base  marker
	seen  marker
}

// scopeAcc gathers one pool scope: its figures and buckets, its lanes by
// session, the lanes kept for its timeline, its load (events) and whether
// it is listed at all.
type scopeAcc struct {
	sc     Scope
	lanes  map[string]*laneAcc
	kept   []*laneAcc
	load   int
	listed bool
}

// scopeSet is pass 1 of the timelines: the scopes sorted by name, found
// by name, and each scope's miss counts by cause.
type scopeSet struct {
	scopes []*scopeAcc
	byName map[string]*scopeAcc
	causes map[string]map[string]int
}

// timelines is the state of one htmlTimelines run: its inputs, the
// sampling it fills in and the trace ids it gives positions.
type timelines struct {
	h        *Report
	ev       *events.ReportEvents
	hss      []events.HandshakeEvent
	t0       int64
	bucketNs int64
	opts     Options
	smp      Sampling
	traceIdx map[string]int
}

// htmlTimelines builds each scope's lanes and buckets. Past the budgets it
// keeps the busiest scopes and, in each, the busiest sessions, then draws
// every miss of the kept lanes while they fit and every k-th hit in the room
// left; Sampling says what was left out.
func htmlTimelines(h *Report, ev *events.ReportEvents, t0, t1 int64, opts Options) ([]Scope, Sampling) {
	tl := &timelines{h: h, ev: ev, hss: ev.Handshakes, t0: t0, opts: opts, traceIdx: map[string]int{},
		smp:      Sampling{Acquires: ev.NumAcquires(), Handshakes: len(ev.Handshakes), HitStride: 1, MissStride: 1},
		bucketNs: max((t1-t0+int64(opts.Buckets)-1)/int64(opts.Buckets), 1)}
	set := tl.gather()
	busiest := tl.list(set)
	hits, misses, hsKept := tl.keepLanes(busiest)
	hsStride := tl.strides(hits, misses, hsKept)
	tl.mark(set, hsStride)
	out := tl.draw(set)
	tl.smp.Scopes, tl.smp.ScopesDrawn = len(set.scopes), len(busiest)
	tl.smp.Note = samplingNote(tl.smp)
	return out, tl.smp
}

// gather is pass 1: per scope, its figures and the events of each lane.
func (tl *timelines) gather() *scopeSet {
	set := &scopeSet{byName: map[string]*scopeAcc{}, causes: map[string]map[string]int{}}
	for i := range tl.ev.NumAcquires() {
		e := tl.ev.Acquire(i)
		sa := set.scope(e.Scope, tl.bucketNs)
		sa.load++
		sc := &sa.sc
		sc.Acquires++
		l := sa.lane(e.Session, e.Start)
		l.lane.Acquires++
		if e.Hit {
			sc.Hits++
			continue
		}
		l.lane.Misses++
		if set.causes[e.Scope] == nil {
			set.causes[e.Scope] = map[string]int{}
		}
		set.causes[e.Scope][e.Cause]++
	}
	for i := range tl.hss {
		sa := set.scope(tl.hss[i].Scope, tl.bucketNs)
		sa.load++
		sa.lane(tl.hss[i].Session, tl.hss[i].Start).hss++
	}
	slices.SortFunc(set.scopes, func(a, b *scopeAcc) int { return cmp.Compare(a.sc.Scope, b.sc.Scope) })
	return set
}

// scope returns the scope named name, added on first sight.
func (set *scopeSet) scope(name string, bucketNs int64) *scopeAcc {
	sa, ok := set.byName[name]
	if !ok {
		// Buckets are allocated for listed scopes only, once known.
		sa = &scopeAcc{sc: Scope{Scope: name, Causes: []Count{}, Lanes: []Lane{}, BucketUs: bucketNs / 1000}, lanes: map[string]*laneAcc{}}
		set.byName[name] = sa
		set.scopes = append(set.scopes, sa)
	}
	return sa
}

// lane returns the scope's lane of session, added (first seen at t) on
// first sight.
func (sa *scopeAcc) lane(session string, t int64) *laneAcc {
	l, ok := sa.lanes[session]
	if !ok {
		l = &laneAcc{lane: Lane{Session: session, Marks: [][5]any{}, Handshakes: [][5]any{}}, first: t}
		sa.lanes[session] = l
	}
	return l
}

// list marks the busiest MaxListedScopes scopes listed and fills their
// over-time buckets, and returns the busiest MaxScopes, which get a
// timeline.
func (tl *timelines) list(set *scopeSet) []*scopeAcc {
	busiest := slices.Clone(set.scopes)
	slices.SortStableFunc(busiest, func(a, b *scopeAcc) int { return cmp.Compare(b.load, a.load) })
	for _, sa := range busiest[:min(len(busiest), tl.opts.MaxListedScopes)] {
		sa.listed = true
		sa.sc.Buckets = make([][3]int, tl.opts.Buckets)
	}
	for i := range tl.ev.NumAcquires() {
		e := tl.ev.Acquire(i)
		sa := set.byName[e.Scope]
		if !sa.listed {
			continue
		}
		b := max(min(int((e.Start-tl.t0)/tl.bucketNs), tl.opts.Buckets-1), 0)
		sa.sc.Buckets[b][0]++
		switch {
		case e.Hit:
			sa.sc.Buckets[b][1]++
		case e.Cause == spans.MissCold:
			sa.sc.Buckets[b][2]++
		}
	}
	return busiest[:min(len(busiest), tl.opts.MaxScopes)]
}

// keepLanes gives each drawn scope its busiest sessions' lanes, sharing
// the lanes among them, in first-seen order, and returns the hits, misses
// and handshakes of the kept lanes.
func (tl *timelines) keepLanes(busiest []*scopeAcc) (hits, misses, hsKept int) {
	maxLanes := min(tl.opts.MaxLanes, max(8, tl.opts.MaxTotalLanes/max(len(busiest), 1)))
	for _, sa := range busiest {
		sa.sc.Drawn = true
		for _, l := range sa.lanes {
			sa.kept = append(sa.kept, l)
		}
		if len(sa.kept) > maxLanes {
			slices.SortFunc(sa.kept, func(a, b *laneAcc) int {
				return cmp.Or(cmp.Compare(b.lane.Acquires+b.hss, a.lane.Acquires+a.hss), cmp.Compare(a.first, b.first), cmp.Compare(a.lane.Session, b.lane.Session))
			})
			sa.kept = sa.kept[:maxLanes]
		}
		slices.SortFunc(sa.kept, func(a, b *laneAcc) int {
			return cmp.Or(cmp.Compare(a.first, b.first), cmp.Compare(a.lane.Session, b.lane.Session))
		})
		for _, l := range sa.kept {
			l.kept = true
			misses += l.lane.Misses
			hits += l.lane.Acquires - l.lane.Misses
			hsKept += l.hss
		}
	}
	return hits, misses, hsKept
}

// strides sets the sampling's strides: every miss of the kept lanes first
// (they are the story), then hits in the room left; handshakes get a
// quarter of the budget, whose stride it returns.
func (tl *timelines) strides(hits, misses, hsKept int) int {
	if hits+misses > tl.opts.MaxMarks {
		if misses > tl.opts.MaxMarks/2 {
			tl.smp.MissStride = ceilDiv(misses, tl.opts.MaxMarks/2)
		}
		room := tl.opts.MaxMarks - ceilDiv(misses, tl.smp.MissStride)
		tl.smp.HitStride = ceilDiv(hits, max(room, 1))
	}
	return max(1, ceilDiv(hsKept, max(tl.opts.MaxMarks/4, 1)))
}

// marker counts hits, misses and handshakes in the drawing's order (the
// drawn scopes by name, each's kept lanes, each lane's events), so the
// strides sample evenly over every drawn scope.
type marker struct {
	hitN, missN, hsN int
}

// mark is the pass that draws the kept lanes' marks: it gives each kept
// lane its place in the drawing's order, then draws every acquire and
// handshake whose place the strides pick, naming its trace by id until
// draw numbers the traces in the drawing's order.
func (tl *timelines) mark(set *scopeSet, hsStride int) {
	var at marker
	for _, sa := range set.scopes {
		for _, l := range sa.kept {
			l.base = at
			at.missN += l.lane.Misses
			at.hitN += l.lane.Acquires - l.lane.Misses
			at.hsN += l.hss
		}
	}
	for i := range tl.ev.NumAcquires() {
		e := tl.ev.Acquire(i)
		if l := keptLane(set, e.Scope, e.Session); l != nil {
			tl.markAcquire(l, &e)
		}
	}
	for i := range tl.hss {
		e := &tl.hss[i]
		l := keptLane(set, e.Scope, e.Session)
		if l == nil {
			continue
		}
		if (l.base.hsN+l.seen.hsN)%hsStride == 0 {
			failed := 0
			if e.Failed {
				failed = 1
			}
			l.lane.Handshakes = append(l.lane.Handshakes, [5]any{tl.us(e.Start), max(e.End-e.Start, 0) / 1000, failed, e.TraceID, e.SpanID})
		}
		l.seen.hsN++
	}
}

// keptLane is the kept lane of session in scope, nil when it is not drawn.
func keptLane(set *scopeSet, scope, session string) *laneAcc {
	if l := set.byName[scope].lanes[session]; l.kept {
		return l
	}
	return nil
}

// markAcquire draws acquire e of kept lane l when the strides pick its
// place among the drawing's hits or misses.
func (tl *timelines) markAcquire(l *laneAcc, e *events.AcquireEvent) {
	draw := false
	if e.Hit {
		draw = (l.base.hitN+l.seen.hitN)%tl.smp.HitStride == 0
		l.seen.hitN++
	} else {
		draw = (l.base.missN+l.seen.missN)%tl.smp.MissStride == 0
		l.seen.missN++
	}
	if draw {
		l.lane.Marks = append(l.lane.Marks, [5]any{tl.us(e.Start), max(e.End-e.Start, 0) / 1000, causeCode(e), e.TraceID, e.SpanID})
	}
}

// draw is the last pass: the listed scopes' figures and the kept lanes'
// marks, in scope order, counting the unlisted scopes' sessions and
// numbering the traces the marks name in that order.
func (tl *timelines) draw(set *scopeSet) []Scope {
	out := make([]Scope, 0, min(len(set.scopes), tl.opts.MaxListedScopes))
	for _, sa := range set.scopes {
		if !sa.listed {
			tl.smp.Sessions += len(sa.lanes)
			tl.smp.ScopesLeftOut++
			continue
		}
		sc := sa.sc
		causes := set.causes[sc.Scope]
		for _, reason := range spans.MissReasons {
			sc.Causes = append(sc.Causes, causeCount(reason, causes[reason]))
		}
		sc.HitRate = ratio(sc.Hits, sc.Acquires)
		sc.ColdStartFloor = ratio(causes[spans.MissCold], sc.Acquires)
		sc.Sessions = len(sa.lanes)
		tl.smp.Sessions += sc.Sessions
		for _, l := range sa.kept {
			tl.trefs(l.lane.Marks)
			tl.trefs(l.lane.Handshakes)
			tl.smp.MarksShown += len(l.lane.Marks)
			tl.smp.HandshakesShown += len(l.lane.Handshakes)
			sc.Lanes = append(sc.Lanes, l.lane)
		}
		tl.smp.LanesShown += len(sc.Lanes)
		out = append(out, sc)
	}
	return out
}

// trefs replaces the trace id of each mark by its position in
// Report.Traces.
func (tl *timelines) trefs(marks [][5]any) {
	for i := range marks {
		marks[i][3] = tl.tref(marks[i][3].(string))
	}
}

// us is a time on the timelines: microseconds after the window's start.
func (tl *timelines) us(ns int64) int64 { return (ns - tl.t0) / 1000 }

// tref is a trace's position in Report.Traces, added on first use.
func (tl *timelines) tref(id string) int {
	i, ok := tl.traceIdx[id]
	if !ok {
		i = len(tl.h.Traces)
		tl.traceIdx[id] = i
		tl.h.Traces = append(tl.h.Traces, id)
	}
	return i
}

// samplingNote says whether the timelines draw everything, or what they
// sampled.
func samplingNote(smp Sampling) string {
	if smp.MarksShown == smp.Acquires && smp.LanesShown == smp.Sessions && smp.HandshakesShown == smp.Handshakes && smp.ScopesDrawn == smp.Scopes {
		return fmt.Sprintf("Complete: every one of the %s and %s is drawn.", countOf(smp.Acquires, "acquire"), countOf(smp.Handshakes, "handshake"))
	}
	c := textfmt.Count
	note := fmt.Sprintf("Sampled: the timelines draw %s of %s (%s and %s of the lanes drawn) and %s of %s, on %s of %s (the busiest of each scope), for %s of %s (the busiest). Every count, rate, cause and latency uses all of them.",
		c(smp.MarksShown), countOf(smp.Acquires, "acquire"), every(smp.MissStride, "miss"), every(smp.HitStride, "hit"), c(smp.HandshakesShown), countOf(smp.Handshakes, "handshake"),
		c(smp.LanesShown), countOf(smp.Sessions, "session lane"), c(smp.ScopesDrawn), countOf(smp.Scopes, "pool scope"))
	if smp.ScopesLeftOut > 0 {
		note += fmt.Sprintf(" The page lists the %s busiest scopes, and %s more.", c(smp.Scopes-smp.ScopesLeftOut), c(smp.ScopesLeftOut))
	}
	return note
}

// countOf counts a noun for the page's notes, with thousands separators:
// "1 acquire", "3,584 acquires".
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return textfmt.Count(n) + " " + noun + "s"
}

// causeCode is the timeline code of an acquire: 0 for a hit, else 1 + the
// cause's index in spans.MissReasons.
func causeCode(e *events.AcquireEvent) int {
	if e.Hit {
		return 0
	}
	return 1 + max(0, slices.Index(spans.MissReasons, e.Cause))
}

func ceilDiv(a, b int) int { return (a + b - 1) / max(b, 1) }

// every says "every miss" for k = 1 and "every 3rd miss" for k = 3.
func every(k int, noun string) string {
	if k <= 1 {
		return "every " + noun
	}
	suffix := "th"
	switch {
	case k%100 >= 11 && k%100 <= 13:
	case k%10 == 1:
		suffix = "st"
	case k%10 == 2:
		suffix = "nd"
	case k%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("every %d%s %s", k, suffix, noun)
}
