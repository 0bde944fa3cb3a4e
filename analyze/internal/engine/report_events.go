package engine

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	evdata "github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// eventTable is what the engine reads of a dump for the HTML report's
// events ([ReportEvents]): the handshakes and calls as values and the
// acquires compactly, handed out through [evdata.AcquireTable]. It holds
// no index and no span, so the report's renderer never reads the index nor
// runs a measure again.
type eventTable struct {
	// Handshakes are sorted by scope, then start (see [HandshakeEvents]).
	Handshakes []HandshakeEvent
	// Calls are the tool calls, in the vocabulary stage's order: what the
	// report's call-latency distribution is drawn from.
	Calls []CallEvent

	// attributed are the acquires as the pair stage attributed them (where
	// it filed them, in the order it attributed them), their
	// strings ids into strs, and settings the pool's recorded settings by
	// scope (events.settingsByScope) and services each scope's service.name
	// (events.serviceByScope): what EachAcquire hands out.
	attributed []*record.Acquire
	// prewarms are the pre-warm dials the attribution replayed, which
	// EachAcquire hands out as ReadAcquires does (Acquire.Prewarm).
	prewarms []*record.Acquire
	strs     []string
	settings map[int32]int32
	services map[int32]int32
	// ends and sessions are each acquire's span end and the session its
	// lease used (a string id, -1 none), by its position in the stage (an
	// attributed acquire's at), and order the attributed acquires in the
	// order At hands them out: a dozen bytes an acquire, where an
	// [AcquireEvent] with its ids in hex is ten times that, so the report holds a million of them in
	// the memory a hundred thousand took (its pictures draw a sample).
	ends     []int64
	sessions []int32
	order    []int32
}

// Len is the number of acquires At hands out.
func (r *eventTable) Len() int { return len(r.order) }

// At returns the i-th acquire (0 <= i < Len) with the cause
// the one miss attribution gave it and the session its lease used, sorted
// by scope, then start, then trace and span id (as [AcquireEvents] sorts
// them). It is made on each call, so a reader holds only the acquires it
// keeps.
func (r *eventTable) At(i int) AcquireEvent {
	k := r.order[i]
	a := r.attributed[k]
	e := AcquireEvent{
		Start:   a.Start,
		End:     r.ends[a.At],
		Scope:   strOf(r.strs, a.Scope),
		Session: strings.TrimPrefix(strOf(r.strs, r.sessions[a.At]), "\x00"),
		Hit:     a.Hit,
		Implied: !a.Explicit,
		TraceID: a.Trace.String(),
		SpanID:  fmt.Sprintf("%016x", a.Span),
	}
	if !a.Hit {
		e.Cause = spans.MissReasons[a.Reason]
	}
	return e
}

// strOf is the text of string id id of strs, "" for -1.
func strOf(strs []string, id int32) string {
	if id < 0 {
		return ""
	}
	return strs[id]
}

// Each hands every acquire to fn as a replay of the pool
// (analyze/whatif) reads it, exactly as [ReadAcquires] does for the same
// dump: pair by pair, each pair's in time order, causes attributed as the
// report's, with the settings its scope recorded, and the pre-warm dials
// (Acquire.Prewarm). fn must not keep the pointer.
func (r *eventTable) Each(fn func(*Acquire)) {
	strs := func(id int32) (string, bool) {
		if id < 0 {
			return "", false
		}
		return r.strs[id], true
	}
	settings := scopeSettings(r.settings, r.strs)
	var a Acquire
	for _, evs := range [][]*record.Acquire{r.prewarms, r.attributed} {
		for _, ev := range evs {
			a = acquireOf(ev, strs, settings, r.services)
			fn(&a)
		}
	}
}

// NewReportEvents builds the HTML report's events of d under cfg (its
// defaults applied and profile auto resolved, as [Analyze] does): one pass
// of the vocabulary stage feeds the acquires, the handshakes and the calls.
// It is pure like Analyze. [AnalyzeDumps] builds them too, when
// RunOptions.Events asks.
func NewReportEvents(d *Dump, cfg rulefmt.Config) (*ReportEvents, error) {
	return newReportEvents(d.x, cfg)
}

// newReportEvents is NewReportEvents over the index itself.
func newReportEvents(idx *index.Index, cfg rulefmt.Config) (*ReportEvents, error) {
	_, r, err := analyzeIndexEvents(context.Background(), &idx, cfg, false, 0)
	return r, err
}

// analyzeIndexEvents is analyzeIndex with the HTML report's events: one
// vocabulary stage and one attribution give both, so the events' causes
// are the report's. With release, it lets the index go (*xp = nil) once
// the events hold what they read of it (each acquire's span end and lease
// session, the handshakes, the calls) and before the attribution: the run
// never holds the index, the pair stage and the attributed acquires at once.
func analyzeIndexEvents(ctx context.Context, xp **index.Index, cfg rulefmt.Config, release bool, limit int64) (*report.Report, *ReportEvents, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("analyze: %w", err)
	}
	cfg = cfg.WithDefaults()
	o, ev, err := observeStage(ctx, *xp, cfg, nil)
	if err != nil {
		return nil, nil, err
	}
	stageCfg := cfg
	stageCfg.Profile = o.profile
	r, err := leaseFacts(*xp, stageCfg, ev)
	if err != nil {
		return nil, nil, err
	}
	inputs := (*xp).Inputs()
	if release {
		held := (*xp).MemBytes()
		*xp = nil
		if held >= hugeHeapMin {
			// The index is garbage now: collecting it lets the pair stage
			// and the attributed acquires reuse its pages rather than
			// fault in new ones (1M keys: 557 MB peak RSS against 610),
			// as the engine's Report does with its shards' indexes.
			runtime.GC()
		}
	}
	agg := newAggregate(cfg)
	agg.pairs = measure.NewBatchPairStage(cfg)
	agg.useProfile(o.profile)
	if !agg.adopt(o) {
		for i, s := range r.sessions {
			if s >= 0 {
				r.sessions[i] = agg.intern(o.strs[s])
			}
		}
	}
	agg.keepAt = true
	// The events stay where the pair stage filed them (keepsEvents): the
	// report events point at them rather than copy them.
	agg.pairs.KeepsEvents = true
	r.attributed = make([]*record.Acquire, 0, len(o.events)) // every event is handed out once
	agg.pairs.Each = func(ev *record.Acquire) { r.attributed = append(r.attributed, ev) }
	agg.pairs.EachPrewarm = func(ev *record.Acquire) { r.prewarms = append(r.prewarms, ev) }
	agg.settings, agg.services = map[int32]int32{}, map[int32]int32{} // kept by scope, in the aggregate's ids
	agg.merge(o)
	if err := agg.checkBudget(limit); err != nil {
		return nil, nil, err
	}
	rep := agg.report(inputs)
	r.strs, r.settings, r.services = agg.strs, agg.settings, agg.services
	r.sortAcquires()
	return rep, evdata.NewReportEvents(r.Handshakes, r.Calls, r), nil
}

// AcquireEvents returns every acquire of d under cfg's vocabulary,
// attributed by the one miss attribution [Analyze] uses, sorted by scope,
// then time. It is pure like Analyze, and costs one more pass of the
// vocabulary stage over the dump.
func AcquireEvents(d *Dump, cfg rulefmt.Config) ([]AcquireEvent, error) {
	return acquireEvents(d.x, cfg)
}

// acquireEvents is AcquireEvents over the index itself.
func acquireEvents(idx *index.Index, cfg rulefmt.Config) ([]AcquireEvent, error) {
	r, err := newReportEvents(idx, cfg)
	if err != nil {
		return nil, fmt.Errorf("acquire events: %w", err)
	}
	out := make([]AcquireEvent, r.NumAcquires())
	for i := range out {
		out[i] = r.Acquire(i)
	}
	return out, nil
}

// htmlStage validates and resolves cfg (defaults, and auto to the profile
// the spans show, detected once) and runs the vocabulary stage once: the
// HTML report's acquires, handshakes and call latencies all read these
// events, rather than each running the stage (and detection) again.
func htmlStage(idx *index.Index, cfg rulefmt.Config) (rulefmt.Config, *record.Table, error) {
	if err := cfg.Validate(); err != nil {
		return cfg, nil, err
	}
	cfg = vocab.Resolve(cfg.WithDefaults(), idx)
	ev, err := vocab.Stage(context.Background(), idx, cfg)
	return cfg, ev, err
}

// leaseFacts reads what the report events need of the index beside the
// stage's events ev (of idx under cfg, resolved): each acquire's span end
// and the session its lease used, by the acquire's position in ev, the
// handshakes and the calls. The acquires are attributed later.
func leaseFacts(idx *index.Index, cfg rulefmt.Config, ev *record.Table) (*eventTable, error) {
	v, err := vocab.Compile(idx, cfg)
	if err != nil {
		return nil, fmt.Errorf("acquire events: %w", err)
	}
	r := &eventTable{ends: make([]int64, len(ev.Acquires)), sessions: make([]int32, len(ev.Acquires))}
	hsSession, calls := leaseSessions(idx, v, ev)
	for i := range ev.Acquires {
		a := &ev.Acquires[i]
		r.ends[i] = idx.Span(a.At).End
		r.sessions[i] = leaseSession(idx, v, a, hsSession, calls)
	}
	r.Handshakes = handshakeEventsOf(idx, ev)
	r.Calls = make([]CallEvent, 0, len(ev.Calls))
	for _, c := range ev.Calls {
		r.Calls = append(r.Calls, CallEvent{Start: c.Start, End: c.End})
	}
	return r, nil
}

// sortAcquires orders the attributed acquires as Acquire hands them out:
// by scope, then start, then trace and span id.
func (r *eventTable) sortAcquires() {
	r.order = make([]int32, len(r.attributed))
	for i := range r.order {
		r.order[i] = int32(i)
	}
	slices.SortFunc(r.order, func(i, j int32) int {
		a, b := r.attributed[i], r.attributed[j]
		return cmp.Or(cmp.Compare(strOf(r.strs, a.Scope), strOf(r.strs, b.Scope)), cmp.Compare(a.Start, b.Start),
			bytes.Compare(a.Trace[:], b.Trace[:]), cmp.Compare(a.Span, b.Span))
	})
}

// leaseSession is the session (a string id, -1 none) acquire a's lease
// used: named on the acquire, on its handshake, by the inference that made
// it, or on the first call of its invocation within the lease.
func leaseSession(x *index.Index, v *vocab.Compiled, a *record.Acquire, hsSession map[int32]int32, calls map[int32][]leaseCall) int32 {
	if val, ok := x.AttrVal(a.At, v.KSession); ok {
		return val
	}
	if val, ok := hsSession[a.At]; ok {
		return val
	}
	if a.Inferred() {
		return a.Session
	}
	parent := a.At // an implied hit's invocation
	if a.Explicit {
		parent = x.Span(a.At).Parent
	}
	session := int32(-1)
	if parent >= 0 {
		best := int64(-1)
		for _, c := range calls[parent] {
			if c.start >= a.Start && c.start <= a.LeaseEnd && (best < 0 || c.start < best) {
				best, session = c.start, c.session
			}
		}
	}
	return session
}

// leaseCall is one call of an invocation: when it started and its session.
type leaseCall struct {
	start   int64
	session int32
}

// leaseSessions returns the sessions the dump names away from the acquire
// span: the handshake child of a miss (by acquire span), and the calls of
// each invocation (start, session), for the timeline to tell which session
// a lease used.
func leaseSessions(x *index.Index, v *vocab.Compiled, ev *record.Table) (map[int32]int32, map[int32][]leaseCall) {
	hsSession := map[int32]int32{}
	for _, h := range ev.Handshakes {
		if h.Parent >= 0 && h.Session >= 0 {
			hsSession[h.Parent] = h.Session
		}
	}
	calls := map[int32][]leaseCall{}
	for _, c := range ev.Calls {
		if c.Session < 0 {
			continue
		}
		// The call's invocation: its nearest invocation ancestor, within a
		// few levels (the pool nests call_tool directly under invoke).
		inv := x.Span(c.Span).Parent
		for depth := 0; inv >= 0 && !v.Invocations.Match(inv) && depth < 4; depth++ {
			inv = x.Span(inv).Parent
		}
		if inv >= 0 {
			calls[inv] = append(calls[inv], leaseCall{c.Start, c.Session})
		}
	}

	return hsSession, calls
}

// HandshakeEvents returns every handshake span of d, sorted by scope, then
// time.
func HandshakeEvents(d *Dump, cfg rulefmt.Config) ([]HandshakeEvent, error) {
	return handshakeEvents(d.x, cfg)
}

// handshakeEvents is HandshakeEvents over the index itself.
func handshakeEvents(idx *index.Index, cfg rulefmt.Config) ([]HandshakeEvent, error) {
	_, ev, err := htmlStage(idx, cfg)
	if err != nil {
		return nil, fmt.Errorf("handshake events: %w", err)
	}
	return handshakeEventsOf(idx, ev), nil
}

// handshakeEventsOf is HandshakeEvents over the stage's events ev of idx.
func handshakeEventsOf(idx *index.Index, ev *record.Table) []HandshakeEvent {
	var out []HandshakeEvent
	for _, h := range ev.Handshakes {
		s := idx.Span(h.Span)
		out = append(out, HandshakeEvent{
			Start:   h.Start,
			End:     h.End,
			Scope:   ev.Str(h.Scope),
			Session: ev.Str(h.Session),
			Failed:  h.Failed,
			TraceID: idx.TraceID(s.Trace),
			SpanID:  fmt.Sprintf("%016x", s.ID),
		})
	}
	sortHandshakes(out)
	return out
}

// sortHandshakes orders handshakes by scope, then start, then span id.
func sortHandshakes(evs []HandshakeEvent) {
	slices.SortFunc(evs, func(a, b HandshakeEvent) int {
		return cmp.Or(cmp.Compare(a.Scope, b.Scope), cmp.Compare(a.Start, b.Start), cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.SpanID, b.SpanID))
	})
}

// The events' types are package events' (data only, so the HTML report
// and the replay link no engine); the engine builds them.
type (
	ReportEvents   = evdata.ReportEvents
	AcquireEvent   = evdata.AcquireEvent
	HandshakeEvent = evdata.HandshakeEvent
	CallEvent      = evdata.CallEvent
)
