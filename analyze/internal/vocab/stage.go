package vocab

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/poll"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The vocabulary stage: one finished index's spans, read through a compiled
// Vocabulary (compile.go), become MCP events (package record). It is the only code
// that asks which span plays which role; everything downstream reads events.

// stage runs the vocabulary stage over v's index. root, when set, selects
// the execution roots (Config.ExecutionRoot, else the vocabulary's). A
// cancelled poll stops it early; the caller checks v.poll.err.
func (v *Compiled) stage(root *selector.Matcher) *record.Table {
	x := v.x
	e, acquires := v.newEvents()
	hasHandshake := make([]bool, x.NumSpans)
	// One pass, every span's roles read in line: this loop runs per span.
	for _, i := range x.Order {
		if v.poll.Stop() {
			return e
		}
		s := x.Span(i)
		attrs := x.AttrsOf(s)
		kinds := v.nameKinds[s.Name]
		recognised := kinds&kindPool != 0
		switch {
		case v.handshakes.plays(i, kinds):
			recognised = true
			if s.Parent >= 0 {
				hasHandshake[s.Parent] = true
			}
			h := record.Handshake{Span: i, Parent: s.Parent, Start: s.Start, End: s.End, Scope: v.scopeOf(i), Session: valIn(attrs, v.KSession),
				Revision: valIn(attrs, v.kRevision), Failed: s.Status == index.StatusError, Prewarm: valIn(attrs, v.kPrewarm) == v.valTrue,
				NoDuration: s.EndsBeforeStart()}
			if s.Parent >= 0 && v.acquires.Match(s.Parent) {
				h.Revision = v.attr(s.Parent, v.kRevision) // counted with the acquire that paid it
			}
			e.Handshakes = append(e.Handshakes, h)
			if !v.inferred {
				e.HandshakesByScope[h.Scope]++
			}
		case v.acquires.plays(i, kinds):
			recognised = true
			acquires = append(acquires, i)
		case v.Invocations.plays(i, kinds):
			recognised = true
		}
		if v.calls.plays(i, kinds) {
			recognised = true
			e.Calls = append(e.Calls, v.call(e, i, s, attrs, root))
			if v.serverSide(s, attrs) {
				e.ServerCalls++
			}
			if valIn(attrs, v.kAddr) >= 0 {
				e.TargetCalls++
			}
		}
		if recognised {
			e.PoolSpans++
		}
	}
	v.deriveEvents(e, root, acquires, hasHandshake)
	return e
}

// newEvents returns the stage's empty events, their slices sized for the
// spans the roles can match (role.bound, from a count of the spans per
// name) so the pass over the spans does not grow them, and the slice for
// the explicit acquire spans, sized the same way.
func (v *Compiled) newEvents() (*record.Table, []int32) {
	x := v.x
	e := &record.Table{Strs: slices.Clip(x.Vals), HandshakesByScope: map[int32]int{}, TraceIDs: x.TraceID}
	perName := make([]int32, len(x.Names))
	for _, i := range x.Order {
		perName[x.Span(i).Name]++
	}
	n := len(x.Order)
	e.Calls = make([]record.Call, 0, v.calls.bound(perName, n))
	e.Handshakes = make([]record.Handshake, 0, v.handshakes.bound(perName, n))
	acquires := make([]int32, 0, v.acquires.bound(perName, n)) // explicit acquire spans, in x.order
	return e, acquires
}

// deriveEvents completes e once every span is read: the acquires, inferred
// from the calls or made of the explicit acquire spans (acquires, in span
// order; hasHandshake marks the spans with a handshake child), then each
// scope's service and the executions' names.
func (v *Compiled) deriveEvents(e *record.Table, root *selector.Matcher, acquires []int32, hasHandshake []bool) {
	if v.inferred {
		v.inferFromCalls(e)
	} else {
		v.explicitAcquires(e, acquires, hasHandshake)
		v.prewarmSessions(e)
	}
	v.scopeServices(e)
	e.ExecNames = v.execNames(e, root)
}

// scopeServices notes the service.name of each scope's acquires (the
// first one's, read once per run of acquires of one scope), for the
// replay's recent:N, which ranks the keys a service called.
func (v *Compiled) scopeServices(e *record.Table) {
	last := int32(-2)
	for i := range e.Acquires {
		ev := &e.Acquires[i]
		if ev.Scope == last || ev.Scope < 0 || ev.At < 0 {
			continue
		}
		last = ev.Scope
		if _, ok := e.ServiceByScope[ev.Scope]; ok {
			continue
		}
		if svc, ok := v.x.ResAttrVal(ev.At, v.rService); ok {
			if e.ServiceByScope == nil {
				e.ServiceByScope = map[int32]int32{}
			}
			e.ServiceByScope[ev.Scope] = svc
		}
	}
}

// prewarmSessions appends, for every pre-warm handshake that opened a
// session with no acquire above it (pool.Options.Prewarm), an event marked
// prewarm: its pair's first session (acquireEvent.prewarm). A failed one
// opened nothing: the pool forgets its key, and the first acquire is cold.
func (v *Compiled) prewarmSessions(e *record.Table) {
	for _, h := range e.Handshakes {
		if !h.Prewarm || h.Failed || (h.Parent >= 0 && v.acquires.Match(h.Parent)) {
			continue
		}
		key := v.attr(h.Span, v.kKey)
		if key < 0 {
			continue // a session of no pair
		}
		s := v.x.Span(h.Span)
		e.Acquires = append(e.Acquires, record.Acquire{Start: h.Start, LeaseEnd: max(h.End, h.Start), Trace: v.x.TraceRecs[s.Trace].ID, Span: s.ID,
			At: h.Span, Scope: h.Scope, Key: key, Session: -1, Prewarm: true})
	}
}

// serverSide reports whether call span s (attrs, its attributes) was
// written by the server: its kind is server, or it carries the caller's
// address.
func (v *Compiled) serverSide(s *index.Span, attrs []index.Attr) bool {
	return s.Kind == uint8(ptrace.SpanKindServer) || valIn(attrs, v.kClient) >= 0
}

// attr returns the value id of span attribute key on span i, -1 when absent.
func (v *Compiled) attr(i int32, key uint16) int32 {
	return valIn(v.x.AttrsOf(v.x.Span(i)), key)
}

// valIn is attr for a span whose attributes the caller has taken
// (index.AttrIn).
func valIn(attrs []index.Attr, key uint16) int32 {
	if val, ok := index.AttrIn(attrs, key); ok {
		return val
	}
	return -1
}

// call makes the call event of span i (s, with attributes attrs); an
// enclosing session span's identity is interned into e.
func (v *Compiled) call(e *record.Table, i int32, s *index.Span, attrs []index.Attr, root *selector.Matcher) record.Call {
	x := v.x
	c := record.Call{Span: i, Trace: s.Trace, Start: s.Start, End: s.End, Exec: s.Trace,
		Session: valIn(attrs, v.KSession), Scope: v.scopeOf(i), Revision: valIn(attrs, v.kRevision), Failed: v.failedSpan(s, attrs), NoDuration: s.EndsBeforeStart()}
	if root != nil {
		// The nearest root at or above the call, from one pass over the
		// tree: no walk up a deep chain per call.
		c.Exec = root.NearestOrSelf(i)
	}
	c.Tie = v.clock.tie(i, c.Exec, root != nil)
	if c.Session < 0 && v.session != nil {
		if enc := v.session.Nearest(i); enc >= 0 {
			es := x.Span(enc)
			c.Session = e.Intern(record.SpanSession(x.TraceRecs[es.Trace].ID, es.ID))
		}
	}
	return c
}

// inferFromCalls makes an acquire of every call with a session identity: a
// writer without pool spans shows a session's first call (the miss that
// opened it) and the later ones (hits) only through the calls. Whether each
// is a hit is decided in the attribution, across traces.
func (v *Compiled) inferFromCalls(e *record.Table) {
	x := v.x
	for k := range e.Calls {
		c := &e.Calls[k]
		if c.Session < 0 {
			continue // a stateless call: nothing to pool
		}
		s := x.Span(c.Span)
		e.Acquires = append(e.Acquires, record.Acquire{
			Start: s.Start, LeaseEnd: s.End, Trace: x.TraceRecs[s.Trace].ID, Span: s.ID, At: c.Span,
			Scope: c.Scope, Key: e.ServerKey(v.attr(c.Span, v.kAddr), v.attr(c.Span, v.kPort)),
			Session: c.Session, Hit: true, Failed: c.Failed,
		})
	}
}

// explicitAcquires makes the acquire events of a writer with acquire spans:
// one per acquire span, an invocation's contiguous and in start order so
// each lease ends where the next attempt of its invocation begins; under
// AcquireOnMiss an implied hit per invocation without a first-attempt
// acquire; then the failures of calls and invocations mark their leases.
func (v *Compiled) explicitAcquires(e *record.Table, acquires []int32, hasHandshake []bool) {
	x := v.x
	n := x.NumSpans // arrays below are indexed by span index
	byInv, orphans := v.byInvocation(e, acquires)
	capEvents := len(acquires)
	if v.voc.AcquireOnMiss {
		capEvents += len(x.Order) / 4 // implied hits: a guess, an invocation is one span of a few
	}
	e.Acquires = make([]record.Acquire, 0, capEvents)
	e.Spans = make([]record.AcquireSpan, 0, len(acquires))
	leaseFirst := make([]int32, n) // per invocation: its first event, -1 none
	for i := range leaseFirst {
		leaseFirst[i] = -1
	}
	for _, inv := range x.Order {
		g := byInv.of(inv)
		if len(g) == 0 {
			continue
		}
		leaseFirst[inv] = int32(len(e.Acquires))
		for k, a := range g {
			next := int32(-1)
			if k+1 < len(g) {
				next = g[k+1]
			}
			v.emitAcquire(e, a, next, hasHandshake)
		}
	}
	for _, a := range orphans {
		v.emitAcquire(e, a, -1, hasHandshake)
	}
	acquireEvents := len(e.Acquires)

	var implied []int32 // per invocation: its implied hit event, -1 none
	if v.voc.AcquireOnMiss {
		implied = v.impliedHits(e, leaseFirst)
	}
	v.markFailures(e, leaseFirst, implied, acquireEvents)
}

// byInvocation groups the acquire spans by invocation (their parent; a
// counting sort) and sorts each invocation's in start order: O(n log n)
// whatever the fan-out (nearly always one; a redial makes two, a hostile
// dump a hundred thousand). It returns each invocation's acquires and the
// acquires without a parent. Only the invocations with more than one
// acquire are sorted, and they are listed as they are counted: asking
// every span of the index for its acquires cost 0.5% of a run's
// instructions, for the few redials.
func (v *Compiled) byInvocation(e *record.Table, acquires []int32) (byInv invAcquires, orphans []int32) {
	x := v.x
	n := x.NumSpans
	acqFirst := make([]int32, n+1) // invAcquires.first: counts, then their running sums
	withParent := 0
	var several []int32 // the invocations with more than one acquire
	for _, a := range acquires {
		if p := x.Span(a).Parent; p >= 0 {
			if acqFirst[p+1]++; acqFirst[p+1] == 2 {
				several = append(several, p)
			}
			withParent++
		} else {
			orphans = append(orphans, a)
		}
	}
	for inv := int32(0); inv < n; inv++ {
		acqFirst[inv+1] += acqFirst[inv]
	}
	byInv = invAcquires{first: acqFirst, spans: make([]int32, withParent)}
	{
		next := slices.Clone(acqFirst[:n])
		for _, a := range acquires {
			if inv := x.Span(a).Parent; inv >= 0 {
				byInv.spans[next[inv]] = a
				next[inv]++
			}
		}
	}
	for _, inv := range several {
		slices.SortFunc(byInv.of(inv), func(a, b int32) int {
			if v.acquiredBefore(e, a, b) {
				return -1
			}
			return 1 // never equal: acquires of one invocation differ in span id
		})
	}

	return byInv, orphans
}

// invAcquires holds acquire spans grouped by invocation: inv's are
// spans[first[inv]:first[inv+1]].
type invAcquires struct {
	first, spans []int32
}

// of returns invocation inv's acquire spans. It is asked of every span in
// order, most of which have none: those answer before any slicing, inline
// (through a closure that cost 0.2% of a run's instructions).
func (g invAcquires) of(inv int32) []int32 {
	lo, hi := g.first[inv], g.first[inv+1]
	if lo == hi {
		return nil
	}
	return g.spans[lo:hi]
}

// markFailures marks the leases that failed: a failed call fails the lease
// it ran on (the last lease of its invocation that began before it), and an
// invocation that failed (the dial itself, a cancellation) fails its last
// lease, call span or not. leaseFirst and implied give each invocation's
// first explicit event and its implied hit (-1 none); the explicit events
// are e.acquires[:explicitEvents].
func (v *Compiled) markFailures(e *record.Table, leaseFirst, implied []int32, explicitEvents int) {
	l := &invocationLeases{e: e, x: v.x, first: leaseFirst, implied: implied, explicit: explicitEvents}
	buf, ok := v.failCallLeases(e, l)
	if !ok {
		return
	}
	for inv, n := int32(0), v.x.NumSpans; inv < n; inv++ {
		if l.leased(inv) && v.failed(inv) {
			buf = l.of(inv, buf)
			e.Acquires[buf[len(buf)-1]].Failed = true
		}
	}
}

// invocationLeases finds each invocation's leases among e.acquires: first
// is each invocation's first explicit event and implied its implied hit
// (-1 none; implied nil when no invocation has one); the explicit events
// are e.acquires[:explicit], an invocation's in a run from its first.
type invocationLeases struct {
	e              *record.Table
	x              *index.Index
	first, implied []int32
	explicit       int
}

// leased reports whether invocation inv holds a lease.
func (l *invocationLeases) leased(inv int32) bool {
	return l.first[inv] >= 0 || (l.implied != nil && l.implied[inv] >= 0)
}

// of returns the events of invocation inv in start order, in buf's memory.
func (l *invocationLeases) of(inv int32, buf []int32) []int32 {
	buf = buf[:0]
	if l.implied != nil && l.implied[inv] >= 0 {
		buf = append(buf, l.implied[inv])
	}
	if k := l.first[inv]; k >= 0 {
		for ; int(k) < l.explicit && l.e.Acquires[k].At >= 0 && l.x.Span(l.e.Acquires[k].At).Parent == inv; k++ {
			buf = append(buf, k)
		}
	}
	return buf
}

// failCallLeases fails the lease each failed call ran on: the last lease
// of its invocation that began before it. The invocation of a call is its
// nearest ancestor holding a lease, found for every span in one pass over
// the tree rather than a walk per call, and only once a call failed. It
// returns its buffer for reuse, and false when a cancelled poll stopped
// it.
func (v *Compiled) failCallLeases(e *record.Table, l *invocationLeases) ([]int32, bool) {
	var buf []int32
	var near []int32
	for k := range e.Calls {
		if v.poll.Stop() {
			return buf, false
		}
		c := &e.Calls[k]
		if !c.Failed {
			continue
		}
		if near == nil {
			near = v.x.NearestAncestors(l.leased)
		}
		inv := near[c.Span]
		if inv < 0 {
			continue
		}
		buf = l.of(inv, buf)
		best := buf[0]
		for _, j := range buf {
			if e.Acquires[j].Start <= c.Start {
				best = j
			}
		}
		e.Acquires[best].Failed = true
	}
	return buf, true
}

// maxHitValueText bounds each non-boolean hit value a warning quotes.
const maxHitValueText = 40

// emitAcquire appends the event of acquire span a; next is the following
// attempt of its invocation, -1 none.
func (v *Compiled) emitAcquire(e *record.Table, a, next int32, hasHandshake []bool) {
	x := v.x
	s := x.Span(a)
	attrs := x.AttrsOf(s)
	ev := record.Acquire{Start: s.Start, LeaseEnd: s.End, Trace: x.TraceRecs[s.Trace].ID, Span: s.ID, At: a,
		Scope: v.scopeOf(a), Key: -1, Session: -1, Explicit: true}
	if key, ok := v.inherited(a, v.kKey); ok {
		ev.Key = key
	}
	if r := valIn(attrs, v.kReason); r >= 0 {
		ev.Health = r == v.valHealthCheck // an interned value is never -1, the id of a value absent
	}
	ev.Redial = v.redialAttempt(valIn(attrs, v.kAttempt))
	h := valIn(attrs, v.kHit)
	if h > v.valTrue {
		// Present but no boolean (1, "TRUE", an empty value): it says
		// nothing the spec gives a meaning, so it is read as absent.
		e.NoteHitNotBool(v.voc.Attributes.Hit, textfmt.ClipTo(x.Vals[h], maxHitValueText))
		h = -1
	}
	if h >= 0 {
		ev.Hit = h == v.valTrue
	} else {
		ev.Hit = !hasHandshake[a]
	}
	if s.Parent >= 0 {
		ev.LeaseEnd = x.Span(s.Parent).End
		if next >= 0 {
			// Before a redial, its session expired: the pool dropped it,
			// as after any failed lease.
			ev.LeaseEnd, ev.Failed = x.Span(next).Start, v.isRedial(next)
		}
	}
	ev.LeaseEnd = max(ev.LeaseEnd, ev.Start)
	if v.settingOf != nil {
		v.recordSettings(e, attrs, ev.Scope)
	}
	e.Acquires = append(e.Acquires, ev)
	e.Spans = append(e.Spans, record.AcquireSpan{Revision: valIn(attrs, v.kRevision), Hit: ev.Hit, Dur: spanDur(s)})
}

// spanDur is a span's duration for the latency series: -1, no sample,
// for a span written ending before it started.
func spanDur(s *index.Span) int64 {
	if s.EndsBeforeStart() {
		return -1
	}
	return s.End - s.Start
}

// isRedial reports whether acquire span a is a second attempt, the
// transparent redial after an expired session.
func (v *Compiled) isRedial(a int32) bool {
	return v.redialAttempt(v.attr(a, v.kAttempt))
}

// redialAttempt reports whether an acquire span's attempt attribute
// (its value id, -1 when absent) names a second attempt or a later one: a
// whole number of 2 or more. Any other value (-1, "x", true, 1.5) names
// no redial: filed as one, a miss would pass for explained.
func (v *Compiled) redialAttempt(at int32) bool {
	if at < 0 || v.x.Vals[at] == "1" {
		return false
	}
	n, err := strconv.ParseInt(v.x.Vals[at], 10, 64)
	return err == nil && n >= 2
}

// impliedHits appends, under acquire-on-miss, a hit for every invocation
// without a first-attempt acquire child: it reused an idle session, which
// the dump shows only by absence. It returns, per invocation, its implied
// hit's event (-1 none).
func (v *Compiled) impliedHits(e *record.Table, leaseFirst []int32) []int32 {
	x := v.x
	implied := make([]int32, x.NumSpans)
	for i := range implied {
		implied[i] = -1
	}
	for _, i := range x.Order {
		if v.poll.Stop() {
			return implied
		}
		if !v.Invocations.Match(i) || v.handshakes.Match(i) || v.acquires.Match(i) {
			continue
		}
		s := x.Span(i)
		leaseEnd := s.End
		if k := leaseFirst[i]; k >= 0 {
			if !e.Acquires[k].Redial {
				continue // its first attempt is an acquire span: a miss
			}
			leaseEnd = e.Acquires[k].Start // reused, expired, then redialed
		}
		ev := record.Acquire{Start: s.Start, LeaseEnd: max(leaseEnd, s.Start), Trace: x.TraceRecs[s.Trace].ID, Span: s.ID, At: i,
			Scope: v.scopeOf(i), Key: v.attr(i, v.kKey), Session: -1, Hit: true, Failed: leaseFirst[i] >= 0}
		implied[i] = int32(len(e.Acquires))
		e.Acquires = append(e.Acquires, ev)
	}
	return implied
}

// acquiredBefore reports whether acquire a orders before acquire b of the
// same invocation: by start, ties by span id.
func (v *Compiled) acquiredBefore(e *record.Table, a, b int32) bool {
	e.Compares++
	sa, sb := v.x.Span(a), v.x.Span(b)
	if sa.Start != sb.Start {
		return sa.Start < sb.Start
	}
	return sa.ID < sb.ID
}

// recordSettings notes the settings an acquire span (attrs, its
// attributes) recorded as those of its scope: an acquire costs the
// attributes' lookups and one map probe on their value ids, the text is
// built once per distinct set. A span that records none leaves its scope
// as it was ("any one acquire span of a pool scope tells its settings",
// spans.AttrPoolIdleTTL's comment).
func (v *Compiled) recordSettings(e *record.Table, attrs []index.Attr, scope int32) {
	var vals [len(spans.PoolSettingsAttrs)]int32
	for i := range vals {
		vals[i] = -1 // attr's id of an absent value
	}
	recorded := false
	for _, a := range attrs {
		if i := v.settingOf[a.Key]; i >= 0 { // each key once (index.AttrsOf)
			vals[i], recorded = a.Val, true
		}
	}
	if !recorded {
		return
	}
	id, ok := e.SettingsIDs[vals]
	if !ok {
		id = e.Intern(record.SettingsText(vals, e.Strs))
		if e.SettingsIDs == nil {
			e.SettingsIDs = map[[len(spans.PoolSettingsAttrs)]int32]int32{}
		}
		e.SettingsIDs[vals] = id
	}
	if e.SettingsByScope == nil {
		e.SettingsByScope = map[int32]int32{}
	}
	record.NoteSettings(e.SettingsByScope, scope, id)
}

// Stage runs the vocabulary stage of cfg (valid and defaulted) over
// idx, with the execution roots cfg names, stopped by ctx.
func Stage(ctx context.Context, idx *index.Index, cfg rulefmt.Config) (*record.Table, error) {
	cfg = Resolve(cfg, idx) // detect.go: auto reads what the spans show
	v, err := Compile(idx, cfg)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	v.poll = poll.New(ctx)
	root, err := executionRoot(idx, cfg)
	if err != nil {
		return nil, err
	}
	ev := v.stage(root)
	if err := v.poll.Err(); err != nil {
		return nil, fmt.Errorf("analyze: measures: %w", err)
	}
	return ev, nil
}

// executionRoot compiles the execution root: Config.ExecutionRoot, else
// the vocabulary's Executions; nil when every trace is one execution.
func executionRoot(idx *index.Index, cfg rulefmt.Config) (*selector.Matcher, error) {
	sel := cfg.EffectiveExecutionRoot()
	if sel == nil {
		return nil, nil
	}
	m, err := selector.Compile(idx, *sel)
	if err != nil {
		return nil, fmt.Errorf("analyze: execution root: %w", err)
	}
	return m, nil
}
