package ruleobs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// DefaultMaxExamples is how many offending spans an observation keeps per
// expectation, and a failing rule names, when ObserveOptions.MaxExamples
// is 0.
const DefaultMaxExamples = 5

// ObserveOptions tunes Observe. The zero value keeps up to
// DefaultMaxExamples offending spans per expectation.
type ObserveOptions struct {
	// MaxExamples caps the offending spans kept per expectation (and the
	// examples the gate names per rule); 0 means DefaultMaxExamples, a
	// negative value none.
	MaxExamples int
	// MemoryBudget is the run's memory budget in bytes (--max-memory):
	// the compiled selectors kept from one rule for a later one hold at
	// most a quarter of it (beyond, a later rule compiles its own again).
	// 0 bounds them by nothing.
	MemoryBudget int64
}

// Observe reads from idx what each rule needs to be judged: for each of
// its scopes whether it is complete and the value of each count, distinct,
// pool_sessions and lost_sessions expectation, with the spans to name if it
// fails. cfg gives the profile and the reads-per-request selectors. It is
// pure and stopped by ctx: every loop over scopes and spans looks at it.
// rep, when not nil, is the analysis of the same index and cfg, whose miss
// counts spare attributing the acquires again when there is no miss to
// name. It fails when idx was built without an attribute a rule reads.
func Observe(ctx context.Context, idx *index.Index, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions, rep *report.Report) ([]report.RuleObservation, error) {
	if opts.MaxExamples == 0 {
		opts.MaxExamples = DefaultMaxExamples
	}
	idx.Finish()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ev := &Eval{X: idx, Cfg: vocab.Resolve(cfg.WithDefaults(), idx), Max: max(opts.MaxExamples, 0), Matchers: map[*rulefmt.Selector]*selector.Matcher{}, ctx: ctx,
		cache: newMatcherCache(rules, keptMatchers(opts.MemoryBudget, int(idx.NumSpans))), budget: max(opts.MemoryBudget, 0)}
	var execs *report.ExecutionsReport // measured on first need by a session rule
	if rep != nil {
		execs = &rep.Executions
		// Only misses other than cold starts are ever named; without one
		// the lists are empty, and the acquires need no second attribution.
		ev.noMissToName = rep.Pool.Misses == rep.Pool.MissReasons[spans.MissCold]
	}
	out := make([]report.RuleObservation, 0, len(rules))
	for i := range rules {
		obs, err := ev.Observe(&rules[i])
		clear(ev.Matchers)
		ev.tables = 0
		ev.cache.done(&rules[i])
		if err == nil {
			err = ev.stageErr // a stage cancelled under the rule: its values read no event
		}
		if err == nil && readsSessions(&rules[i]) {
			if execs == nil {
				var r report.ExecutionsReport
				r, err = executionsOf(ev)
				execs = &r
			}
			// A dump with no execution and no pool span: the rule has
			// nothing to judge and the gate says so (allow_empty applies).
			if !execs.Measurable && !execs.OnlyEmpty {
				markUnmeasurable(&obs, execs.NotMeasurableText())
			}
		}
		if err != nil { // a cancellation wrapped stays one (errors.Is)
			return nil, fmt.Errorf("rule %q: %w", textfmt.ClipInput(rules[i].ID), err)
		}
		out = append(out, obs)
	}
	return out, nil
}

// Eval holds what every rule of one observation shares.
type Eval struct {
	X   *index.Index
	Cfg rulefmt.Config
	Max int
	// Matchers are the current rule's compiled selectors, by the rule's
	// own; cache shares them between rules (shared.go).
	Matchers map[*rulefmt.Selector]*selector.Matcher
	cache    *matcherCache
	events   []record.Acquire // attributed acquires, computed on first need
	haveEv   bool
	// stage is the vocabulary stage's events of the index, computed on
	// first need (nil when the vocabulary cannot be compiled).
	stage     *record.Table
	stageErr  error // the context's error when it stopped the stage
	haveStage bool
	// callSession is, per span index, the session of a call as the
	// vocabulary names it (an attribute or an enclosing span), -1 for no
	// call or none.
	callSession []int32
	// noMissToName says the Report shows no miss but cold starts, so
	// missExamples has nothing to return.
	noMissToName bool
	// The keys and the value sessionSplits reads, looked up on first need
	// (expired is -1 when the index holds no session_expired, an id no
	// value has).
	haveSess    bool
	kSess, kErr uint16
	okS, okE    bool
	expired     int32
	// ctx stops an observation between scopes (checkEvery).
	ctx   context.Context
	ticks int
	// tables counts the bytes of per-span tables the current rule's
	// selectors may hold (tableBytes), which budget bounds (0: unbounded).
	tables, budget int64
}

// checkEvery is how many steps (scopes, spans of a scope list) an
// observation takes between two looks at its context: often enough that a
// canceled run stops within milliseconds, rarely enough to cost nothing.
const checkEvery = 1024

// tick counts one step and returns the context's error every checkEvery
// steps, so every long loop of an observation can be stopped.
func (e *Eval) tick() error {
	e.ticks++
	if e.ticks%checkEvery != 0 || e.ctx == nil {
		return nil
	}
	return e.ctx.Err()
}

func (e *Eval) compile(s *rulefmt.Selector) (*selector.Matcher, error) {
	if s == nil {
		return nil, nil
	}
	if m, ok := e.Matchers[s]; ok {
		return m, nil
	}
	key := selectorKey(s)
	if m, ok := e.cache.get(key); ok {
		e.Matchers[s] = m
		return m, nil
	}
	ctx := e.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	plain := *s
	plain.Calls = false
	m, err := selector.CompileContext(ctx, e.X, plain)
	if err != nil {
		return nil, s.Locate(err)
	}
	if s.Calls {
		// The vocabulary stage's calls (none when it cannot compile:
		// Analyze reports that error).
		m.Only = make([]bool, e.X.NumSpans)
		if ev := e.stageEvents(); ev != nil {
			for _, c := range ev.Calls {
				m.Only[c.Span] = true
			}
		}
	}
	e.Matchers[s] = m
	e.cache.put(key, m)
	return m, nil
}

// CompiledSel is a SpanSelector bound to the index.
type CompiledSel struct {
	Self, Under, NotUnder *selector.Matcher
}

func (e *Eval) compileSel(s *rulefmt.SpanSelector) (*CompiledSel, error) {
	var c CompiledSel
	var err error
	if err := e.charge(s); err != nil {
		return nil, err
	}
	if c.Self, err = e.compile(&s.Selector); err != nil {
		return nil, err
	}
	if c.Under, err = e.compile(s.Under); err != nil {
		return nil, err
	}
	if c.NotUnder, err = e.compile(s.NotUnder); err != nil {
		return nil, err
	}
	return &c, nil
}

// charge counts the per-span tables s's selectors may hold once asked
// (tableBytes) against a quarter of the memory budget, and refuses the
// rule past it: one rule of thousands of expectations, each under its own
// ancestor, would otherwise hold a table of the whole index per
// expectation (gigabytes at a budget of megabytes). A selector the rule
// already compiled is not charged again.
func (e *Eval) charge(s *rulefmt.SpanSelector) error {
	n := int64(0)
	for _, sel := range []*rulefmt.Selector{&s.Selector, s.Under, s.NotUnder} {
		if _, seen := e.Matchers[sel]; sel != nil && !seen {
			n += tableBytes(sel, sel != &s.Selector, int64(e.X.NumSpans))
		}
	}
	e.tables += n
	if e.budget > 0 && e.tables > e.budget/4 {
		return fmt.Errorf("%w: the rule's selectors would hold %d MiB of per-span tables over %d spans (under and not_under keep one int32 a span each), past a quarter of the memory budget of %d MiB: split the rule's expectations into rules, or give a larger --max-memory",
			ErrRuleMemory, e.tables>>20, e.X.NumSpans, e.budget>>20)
	}
	return nil
}

// ErrRuleMemory is the cause of a rule refused because its selectors'
// tables would not fit a quarter of the memory budget (Eval.charge).
var ErrRuleMemory = errors.New("rule too large for the memory budget")

// tableBytes is what a compiled selector holds per span of an index of
// spans spans: the nearest-ancestor table of one asked ancestor
// questions (under, not_under), and a Calls selector's table.
func tableBytes(sel *rulefmt.Selector, ancestor bool, spans int64) int64 {
	n := int64(0)
	if ancestor {
		n += 4 * spans
	}
	if sel.Calls {
		n += spans
	}
	return n
}

// Selects reports whether span i is selected within a scope rooted at root
// (-1 for a trace or the dump): ancestors at or above root are not looked at.
func (c *CompiledSel) Selects(x *index.Index, i, root int32) bool {
	if !c.Self.Match(i) {
		return false
	}
	if c.Under == nil && c.NotUnder == nil {
		return true
	}
	if i == root {
		return c.Under == nil
	}
	// The nearest matching ancestors come from one pass over the tree
	// (matcher.nearest), so no span walks its ancestors: a chain of 100k
	// spans would make that quadratic. An ancestor counts when it lies
	// strictly below root.
	t := x.Tree()
	if c.NotUnder != nil {
		if a := c.NotUnder.Nearest(i); a >= 0 && t.StrictlyBelow(a, root) {
			return false
		}
	}
	if c.Under != nil {
		a := c.Under.Nearest(i)
		return a >= 0 && t.StrictlyBelow(a, root)
	}
	return true
}

// RuleScope is one scope of a rule: its spans, root (-1 for dump and trace),
// trace (-1 for the dump) and whether it may be judged.
type RuleScope struct {
	trace, Root int32
	Spans       []int32
	complete    bool
	// missingParent says an incomplete scope's trace lacks a parent span
	// (else it lacks a span matching complete_when).
	missingParent bool
}

// scopes lists a rule's scopes in a stable order.
func (e *Eval) scopes(r *rulefmt.Rule) ([]RuleScope, error) {
	x := e.X
	complete, err := e.compile(r.CompleteWhen)
	if err != nil {
		return nil, fmt.Errorf("complete_when: %w", err)
	}
	switch r.Scope.Kind {
	case rulefmt.ScopeDump:
		return []RuleScope{{trace: -1, Root: -1, Spans: x.Order, complete: anyMatch(complete, x.Order)}}, nil
	case rulefmt.ScopeTrace:
		return e.traceScopes(complete), nil
	}
	root, err := e.compile(r.Scope.Root)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	return e.subtreeScopes(root, complete)
}

// anyMatch reports whether a scope of spans group may be judged by its
// complete_when: some span matches complete, or there is no complete_when
// (nil).
func anyMatch(complete *selector.Matcher, group []int32) bool {
	if complete == nil {
		return true
	}
	for _, i := range group {
		if complete.Match(i) {
			return true
		}
	}
	return false
}

// traceScopes lists the scopes of a per-trace rule, one per trace,
// complete when the trace is and complete (anyMatch) holds, in trace id
// order.
func (e *Eval) traceScopes(complete *selector.Matcher) []RuleScope {
	x := e.X
	out := make([]RuleScope, 0, len(x.TraceRecs))
	for t := range x.TraceRecs {
		tr := &x.TraceRecs[t]
		group := x.Order[tr.First : tr.First+tr.N]
		out = append(out, RuleScope{trace: int32(t), Root: -1, Spans: group, complete: !tr.Incomplete && anyMatch(complete, group), missingParent: tr.Incomplete})
	}
	// Raw ids sort as their hex does, without formatting two strings
	// per comparison.
	slices.SortFunc(out, func(a, b RuleScope) int {
		return bytes.Compare(x.TraceRecs[a.trace].ID[:], x.TraceRecs[b.trace].ID[:])
	})
	return out
}

// subtreeScopes lists the scopes of a per-subtree rule, one per span
// matching root, each complete when its trace is and complete (anyMatch)
// holds over the whole trace, in span order. A cancelled run stops it
// between traces.
func (e *Eval) subtreeScopes(root, complete *selector.Matcher) ([]RuleScope, error) {
	x := e.X
	// A subtree's spans are its range of the depth-first layout: nested
	// subtrees share one array instead of each copying its span list.
	tree := x.Tree()
	var out []RuleScope
	for t := range x.TraceRecs {
		tr := &x.TraceRecs[t]
		group := x.Order[tr.First : tr.First+tr.N]
		first := len(out)
		if err := e.tick(); err != nil {
			return nil, err
		}
		for _, i := range group {
			if root.Match(i) {
				out = append(out, RuleScope{trace: int32(t), Root: i, Spans: tree.Subtree(i)})
			}
		}
		if len(out) == first {
			continue
		}
		ok := !tr.Incomplete && anyMatch(complete, group)
		for k := first; k < len(out); k++ {
			out[k].complete, out[k].missingParent = ok, tr.Incomplete
		}
	}
	slices.SortFunc(out, func(a, b RuleScope) int { return x.CompareSpans(a.Root, b.Root) })
	return out, nil
}

// Observe reads one rule's scopes.
func (e *Eval) Observe(r *rulefmt.Rule) (report.RuleObservation, error) {
	obs := report.RuleObservation{MaxExamples: e.Max, TraceQL: e.ruleTraceQL(r)}
	run, err := e.newRuleRun(r)
	if err != nil {
		return obs, err
	}
	for _, ex := range r.Expect {
		switch ex.Of {
		case "unexplained_misses", "excess_misses", "misses", "hit_rate", "handshakes":
			obs.UnexplainedMisses, obs.AboveFloorMisses = e.missExamples()
		}
	}
	groups := scopeGroups{e: e, index: map[string]int{}}
	values := make([]float64, len(r.Expect))
	selections := make([][]int32, len(r.Expect))
	for si, sc := range run.scopes {
		if err := e.tick(); err != nil {
			return obs, err
		}
		switch run.skip(si) {
		case skipNotApplicable:
			obs.NotApplicable++
			continue
		case skipEmpty:
			continue
		}
		if !sc.complete {
			groups.add(&obs, RuleScope{missingParent: sc.missingParent}, false, nil, nil)
			continue
		}
		clear(values)
		clear(selections)
		for k := range r.Expect {
			ex := &r.Expect[k]
			if ex.IsMeasure() {
				continue
			}
			got, selected, err := run.value(ex, si)
			if err != nil {
				return obs, err
			}
			values[k] = got
			if sc.Root < 0 {
				selections[k] = e.kept(selected, sc.trace)
			}
		}
		groups.add(&obs, sc, true, values, selections)
	}
	return obs, nil
}

// ruleRun is one rule's observation under way: its scopes, its selectors
// compiled once each, and how a scope's selected spans are found.
type ruleRun struct {
	e      *Eval
	r      *rulefmt.Rule
	scopes []RuleScope
	// sub counts subtree scopes, which nest: their counts come from
	// subtreeAgg, never from looking at each scope's spans (depth² on a
	// chain of roots). nil for other scopes.
	sub     *subtreeAgg
	sl      func(int32) bool // whether a span is sessionless
	sels    map[*rulefmt.SpanSelector]*CompiledSel
	ruleSel *CompiledSel // the rule's own selector, nil without one
}

// newRuleRun finds r's scopes and compiles its selector.
func (e *Eval) newRuleRun(r *rulefmt.Rule) (*ruleRun, error) {
	scopes, err := e.scopes(r)
	if err != nil {
		return nil, err
	}
	run := &ruleRun{e: e, r: r, scopes: scopes, sels: map[*rulefmt.SpanSelector]*CompiledSel{}}
	if r.Select != nil {
		if run.ruleSel, err = e.compileSel(r.Select); err != nil {
			return nil, fmt.Errorf("select: %w", err)
		}
		run.sels[r.Select] = run.ruleSel
	}
	if r.Scope.Kind == rulefmt.ScopeSubtree {
		run.sub = NewSubtreeAgg(e.X, scopes)
	}
	run.sl = e.sessionlessTest()
	return run, nil
}

// selOf returns ex's selector (the rule's when ex has none), compiled once.
func (run *ruleRun) selOf(ex *rulefmt.Expectation) (*CompiledSel, error) {
	s := ex.Select
	if s == nil {
		s = run.r.Select
	}
	if c, ok := run.sels[s]; ok {
		return c, nil
	}
	c, err := run.e.compileSel(s)
	if err != nil {
		return nil, fmt.Errorf("select: %w", err)
	}
	run.sels[s] = c
	return c, nil
}

// selectedIn lists the spans c selects in scope si, sessionless ones left
// out when the rule skips them.
func (run *ruleRun) selectedIn(c *CompiledSel, si int) []int32 {
	var out []int32
	if run.sub != nil {
		out = run.sub.selected(c, si)
	} else {
		sc := run.scopes[si]
		for _, i := range sc.Spans {
			if c.Selects(run.e.X, i, sc.Root) {
				out = append(out, i)
			}
		}
	}
	if !run.r.SkipSessionless {
		return out
	}
	kept := out[:0:0]
	for _, i := range out {
		if !run.sl(i) {
			kept = append(kept, i)
		}
	}
	return kept
}

// anyIn reports whether c selects a span in scope si, sessionless ones
// included.
func (run *ruleRun) anyIn(c *CompiledSel, si int) bool {
	if run.sub != nil {
		return run.sub.Count(c, si) > 0
	}
	sc := run.scopes[si]
	for _, i := range sc.Spans {
		if c.Selects(run.e.X, i, sc.Root) {
			return true
		}
	}
	return false
}

// scopeSkip is why a rule leaves a scope out, if it does.
type scopeSkip uint8

const (
	skipNone scopeSkip = iota
	// skipNotApplicable: the rule's selector matches only sessionless
	// spans there, and the rule skips those (counted as not applicable).
	skipNotApplicable
	// skipEmpty: the rule's selector matches nothing there, and the rule
	// skips empty scopes.
	skipEmpty
)

// skip says whether the rule leaves scope si out, and why. A scope that
// selects nothing is empty, never not applicable; one whose selected spans
// are all sessionless is not applicable. Emptiness is asked first, so a
// scope is looked at in full at most once (anyIn stops at its first
// selected span).
func (run *ruleRun) skip(si int) scopeSkip {
	r, c := run.r, run.ruleSel
	if c == nil {
		return skipNone
	}
	if r.SkipEmpty {
		if !run.anyIn(c, si) {
			return skipEmpty
		}
	}
	if r.SkipSessionless {
		if len(run.selectedIn(c, si)) == 0 && run.anyIn(c, si) {
			return skipNotApplicable
		}
	}
	return skipNone
}

// value is what expectation ex counts in complete scope si, and the spans
// it selected there (the offenders; nil where a subtree scope's plain count
// needs no list).
func (run *ruleRun) value(ex *rulefmt.Expectation, si int) (float64, []int32, error) {
	c, err := run.selOf(ex)
	if err != nil {
		return 0, nil, err
	}
	var selected []int32
	var got float64
	needList := run.r.SkipSessionless || ex.Of == rulefmt.QuantityPoolSessions || ex.Of == rulefmt.QuantityLostSessions || run.sub == nil
	if needList {
		selected = run.selectedIn(c, si)
		got = float64(len(selected))
	} else {
		got = float64(run.sub.Count(c, si))
	}
	switch ex.Of {
	case rulefmt.QuantityPoolSessions, rulefmt.QuantityLostSessions:
		pooled, lost := run.e.sessionSplits(selected)
		got = float64(pooled)
		if ex.Of == rulefmt.QuantityLostSessions {
			got = float64(lost)
		}
	case rulefmt.QuantityDistinct:
		key, err := run.e.attrKey(ex.Attribute)
		if err != nil {
			return 0, nil, err
		}
		if !needList {
			got = float64(run.sub.Distinct(c, key, si))
		} else {
			got = float64(run.e.distinctIn(selected, key))
		}
	}
	return got, selected, nil
}

// attrKey is the index's key of attribute, which a distinct expectation
// reads: an error when the index did not keep it.
func (e *Eval) attrKey(attribute string) (uint16, error) {
	id, ok := e.X.LookupKey(attribute)
	if !ok || !e.X.SpanKeyOK[id] {
		return 0, fmt.Errorf("distinct reads attribute %q, which the index did not keep: build it with RulesIndexOptions", attribute)
	}
	return id, nil
}

// distinctIn counts the distinct values of key over spans.
func (e *Eval) distinctIn(spans []int32, key uint16) int {
	vals := map[int32]bool{}
	for _, i := range spans {
		if v, ok := e.X.AttrVal(i, key); ok {
			vals[v] = true
		}
	}
	return len(vals)
}

// scopeGroups files a rule's scopes into groups as they are observed.
type scopeGroups struct {
	e     *Eval
	index map[string]int
	key   []byte
}

// add files one scope: complete, with values and, per expectation, its
// selected spans (nil for a subtree scope, which names its root).
func (g *scopeGroups) add(obs *report.RuleObservation, sc RuleScope, complete bool, values []float64, selections [][]int32) {
	e := g.e
	g.key = append(g.key[:0], 'i')
	if sc.missingParent {
		g.key[0] = 'p'
	}
	if complete {
		g.key[0] = 'c'
		for k, v := range values {
			g.key = strconv.AppendFloat(g.key, v, 'g', -1, 64)
			g.key = append(g.key, '/')
			if len(selections[k]) > 0 {
				g.key = append(g.key, '+')
			}
			g.key = append(g.key, ';')
		}
	}
	at, ok := g.index[string(g.key)]
	if !ok {
		at = len(obs.Groups)
		g.index[string(g.key)] = at
		grp := report.ScopeGroup{Complete: complete, MissingParent: !complete && sc.missingParent}
		if complete {
			grp.Values = slices.Clone(values)
			grp.Offenders = make([][]report.SpanRef, len(values))
		}
		obs.Groups = append(obs.Groups, grp)
	}
	grp := &obs.Groups[at]
	grp.Scopes++
	if !complete || e.Max <= 0 {
		return
	}
	for k, sel := range selections {
		switch {
		case len(sel) == 0:
		case sc.trace < 0:
			grp.Offenders[k] = e.smallest(sel)
		default:
			grp.Offenders[k] = insertRef(grp.Offenders[k], e.ref(sel[0]), e.Max)
		}
	}
	if sc.trace >= 0 {
		grp.Examples = insertRef(grp.Examples, e.scopeExample(sc), e.Max)
	}
}

// insertRef adds ref to list, which holds the first max refs by trace and
// span id, keeping it so.
func insertRef(list []report.SpanRef, ref report.SpanRef, max int) []report.SpanRef {
	at, found := slices.BinarySearchFunc(list, ref, CmpRefs)
	if found || at >= max {
		return list
	}
	if len(list) == max {
		list = list[:max-1] // the last makes room: ref sorts before it
	}
	return slices.Insert(list, at, ref)
}

// CmpRefs orders refs by trace id, then span id.
func CmpRefs(a, b report.SpanRef) int {
	if c := bytes.Compare(a.Trace[:], b.Trace[:]); c != 0 {
		return c
	}
	return bytes.Compare(a.Span[:], b.Span[:])
}

// smallest returns the refs of the first e.Max spans of list by trace and
// span id, without sorting the whole list. e.Max is positive: its callers
// name no example when it is not.
func (e *Eval) smallest(list []int32) []report.SpanRef {
	top := e.smallestSpans(list)
	out := make([]report.SpanRef, len(top))
	for k, i := range top {
		out[k] = e.ref(i)
	}
	return out
}

// kept is what scopeGroups.add reads of a scope's selected spans: in the
// dump's one scope the Max smallest (the offenders it names), in a trace
// the first, and with no offender to name whether there is one. Only
// those are held while the rule's other expectations are observed, never
// every selected span of the dump per expectation.
func (e *Eval) kept(selected []int32, trace int32) []int32 {
	switch {
	case len(selected) == 0:
		return nil
	case e.Max > 0 && trace < 0:
		return e.smallestSpans(selected)
	}
	return selected[:1:1]
}

// smallestSpans returns the first Max spans of list by trace and span id.
func (e *Eval) smallestSpans(list []int32) []int32 {
	var top []int32
	for _, i := range list {
		if len(top) == e.Max && e.X.CompareSpans(i, top[len(top)-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, i, e.X.CompareSpans)
		if at < len(top) && top[at] == i {
			continue
		}
		top = slices.Insert(top, at, i)
		top = top[:min(len(top), e.Max)]
	}
	return top
}

// ref names span i.
func (e *Eval) ref(i int32) report.SpanRef {
	s := e.X.Span(i)
	var ref report.SpanRef
	ref.Trace = e.X.TraceRecs[s.Trace].ID
	binary.BigEndian.PutUint64(ref.Span[:], s.ID)
	return ref
}

// scopeExample names a scope that fails without an offender to show: a
// trace's first root span (else its first span), a subtree's root; zero
// for the dump. A subtree's spans are in preorder, its root first, and
// none below the root lacks a parent, so the first span is the root.
func (e *Eval) scopeExample(sc RuleScope) report.SpanRef {
	if sc.trace < 0 {
		return report.SpanRef{}
	}
	for _, i := range sc.Spans {
		if e.X.Span(i).Parent < 0 {
			return e.ref(i)
		}
	}
	return e.ref(sc.Spans[0]) // a trace or a subtree holds a span at least
}

// missExamples returns the first e.max attributed misses that are
// unexplained (no cause of spans.ExplainedMissReasons), and that are not cold starts (unexplained ones included),
// by trace and span id.
func (e *Eval) missExamples() (unexplained, aboveFloor []report.SpanRef) {
	if e.noMissToName || e.Max <= 0 {
		return nil, nil
	}
	var un, above []int32
	for _, ev := range e.poolEvents() {
		if ev.Hit {
			continue
		}
		switch cause := spans.MissReasons[ev.Reason]; {
		case !spans.IsExplainedMiss(cause):
			un = append(un, ev.At)
			above = append(above, ev.At)
		case cause == spans.MissCold:
		default:
			above = append(above, ev.At)
		}
	}
	return e.smallest(un), e.smallest(above)
}

// poolEvents returns the attributed acquires of the pool measure, computed
// once per observation.
func (e *Eval) poolEvents() []record.Acquire {
	if !e.haveEv {
		e.haveEv = true
		if ev := e.stageEvents(); ev != nil {
			e.events = measure.Attributed(ev, e.Cfg)
		}
	}
	return e.events
}

// stageEvents returns the vocabulary stage's events of the index, run once
// per observation; nil when the vocabulary does not compile against it
// (Analyze reports that error) or when the observation's context stopped
// the stage (stageErr holds its error, which Observe returns).
func (e *Eval) stageEvents() *record.Table {
	if !e.haveStage {
		e.haveStage = true
		ctx := e.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		ev, err := vocab.Stage(ctx, e.X, e.Cfg)
		switch {
		case err == nil:
			e.stage = ev
		case ctx.Err() != nil:
			e.stageErr = ctx.Err()
		}
	}
	return e.stage
}

// sessionSplits returns, over the selected spans of one scope, the sessions
// the pool chose (distinct mcp.session.id, a session the server forgot
// counted with its successor) and the sessions the server forgot: a span on
// the session failed with error.type session_expired and a later selected
// span ran on another session (the transparent redial moved on).
func (e *Eval) sessionSplits(selected []int32) (pooled, lost int) {
	if !e.haveSess {
		e.lookupSessions()
	}
	if !e.okS && e.callSession == nil {
		return 0, 0
	}
	return splitSessions(e.sessionCalls(selected))
}

// lookupSessions finds, once per observation rather than once per scope
// (a value lookup is a scan of the value table), what sessionSplits
// reads: the session of a call is the
// vocabulary's (an attribute, or an enclosing span); a selected span that
// is no call is read by the vocabulary's session attribute.
func (e *Eval) lookupSessions() {
	x := e.X
	e.haveSess = true
	voc := e.Cfg.ActiveVocabulary() // resolved when the evaluation began
	if k := voc.Session.Attribute; k != "" {
		e.kSess, e.okS = x.LookupKey(k)
	}
	if k := voc.Attributes.ErrorType; k != "" {
		e.kErr, e.okE = x.LookupKey(k)
	}
	e.expired = x.LookupValue(spans.ErrTypeSessionExpired)
	if ev := e.stageEvents(); ev != nil {
		e.callSession = make([]int32, x.NumSpans)
		for i := range e.callSession {
			e.callSession[i] = -1
		}
		for _, c := range ev.Calls {
			e.callSession[c.Span] = c.Session
		}
	}
}

// sessionCall is one selected span with a session, for sessionSplits.
type sessionCall struct {
	start   int64
	session int32
	expired bool // it failed as session expired
}

// sessionCalls returns the selected spans that have a session, in time
// order (stable: ties keep the selection's order).
func (e *Eval) sessionCalls(selected []int32) []sessionCall {
	x := e.X
	calls := make([]sessionCall, 0, len(selected))
	for _, i := range selected {
		sess, ok := int32(-1), false
		if e.callSession != nil && e.callSession[i] != -1 { // -1: no call, or a call without a session
			sess, ok = e.callSession[i], true
		} else if e.okS {
			sess, ok = x.AttrVal(i, e.kSess)
		}
		if !ok {
			continue
		}
		c := sessionCall{start: x.Span(i).Start, session: sess}
		if e.okE {
			if v, ok := x.AttrVal(i, e.kErr); ok && v == e.expired {
				c.expired = true
			}
		}
		calls = append(calls, c)
	}
	slices.SortStableFunc(calls, func(a, b sessionCall) int { return cmp.Compare(a.start, b.start) })
	return calls
}

// splitSessions counts the distinct sessions of calls (in time order) that
// were pooled, and those lost: expired on a call with a later call on
// another session.
func splitSessions(calls []sessionCall) (pooled, lost int) {
	// later is the one session of the calls after j, -1 when there are
	// none and -2 when they hold several: a later call on another session
	// exists iff later is neither -1 nor the call's own session. One pass
	// from the end keeps this linear.
	later := int32(-1)
	distinct := map[int32]bool{}
	forgotten := map[int32]bool{}
	for j := len(calls) - 1; j >= 0; j-- {
		c := calls[j]
		distinct[c.session] = true
		other := later != -1 && later != c.session
		if c.expired && other {
			forgotten[c.session] = true
		}
		if other {
			later = -2
		} else {
			later = c.session
		}
	}
	return len(distinct) - len(forgotten), len(forgotten)
}

// sessionlessTest returns a test of whether span i ran against a sessionless
// server: its mcp.protocol.version is SessionlessProtocol or later, or it
// carries a protocol version but no mcp.session.id (a server of any revision
// that minted no session).
func (e *Eval) sessionlessTest() func(i int32) bool {
	x := e.X
	kVer, okV := x.LookupKey(spans.AttrProtocolVersion)
	if !okV || !x.SpanKeyOK[kVer] {
		return func(int32) bool { return false }
	}
	kSess, okS := x.LookupKey(spans.AttrSessionID)
	memo := map[int32]bool{}
	return func(i int32) bool {
		v, ok := x.AttrVal(i, kVer)
		if !ok {
			return false
		}
		if okS {
			if _, has := x.AttrVal(i, kSess); !has {
				return true
			}
		}
		sl, seen := memo[v]
		if !seen {
			sl = report.IsSessionlessProtocol(x.Vals[v])
			memo[v] = sl
		}
		return sl
	}
}

// readsSessions reports whether rule r judges sessions per execution: an
// expectation on pool_sessions or lost_sessions, on the distinct values of
// mcp.session.id, or on an executions measure. Such a rule is incomplete
// when executions are not measurable.
func readsSessions(r *rulefmt.Rule) bool {
	for _, ex := range r.Expect {
		switch {
		case ex.Of == rulefmt.QuantityPoolSessions || ex.Of == rulefmt.QuantityLostSessions:
			return true
		case ex.Of == rulefmt.QuantityDistinct && ex.Attribute == spans.AttrSessionID:
			return true
		}
		for _, name := range []string{ex.Of, ex.Than.Measure} {
			if m, _, ok := report.LookupMeasure(name); ok && name != "" && strings.HasPrefix(m.JSON, "executions.") {
				return true
			}
		}
	}
	return false
}

// markUnmeasurable marks every scope of a session rule's observation as not
// judgeable, saying why: the gate then finds the rule not applicable,
// never a pass on zero, even where the rule allows an empty dump. A rule whose
// every scope ran against sessionless servers keeps its observation: it
// has nothing to say about sessions anyway.
func markUnmeasurable(obs *report.RuleObservation, why string) {
	n := 0
	for _, g := range obs.Groups {
		n += g.Scopes
	}
	if n == 0 && obs.NotApplicable > 0 {
		return
	}
	obs.Groups = []report.ScopeGroup{{Scopes: max(n, 1), Complete: false}}
	obs.Unmeasurable = why
}

// executionsOf measures the executions of the rules' index, from the
// vocabulary stage's events (run once per observation, ruleEval), when no
// report of the same index was given.
func executionsOf(e *Eval) (report.ExecutionsReport, error) {
	ev := e.stageEvents()
	if ev == nil {
		_, err := vocab.Stage(context.Background(), e.X, e.Cfg)
		return report.ExecutionsReport{}, err
	}
	r := measure.Executions(ev, nil)
	r.ExecutionsWithoutCalls = measure.ExecutionsWithoutCalls(ev.ExecNames)
	if root := e.Cfg.EffectiveExecutionRoot(); root != nil {
		r.Root = root.String()
	}
	measure.JudgeMeasurability(&r, ev.PoolSpans, measure.Shows(e.Cfg.ActiveVocabulary(), measure.EvidenceOf(ev)))
	return r, nil
}
