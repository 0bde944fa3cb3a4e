package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// Status is a rule's verdict.
type Status string

// The verdicts.
const (
	// StatusPass: every complete scope satisfies every expectation.
	StatusPass Status = "pass"
	// StatusFail: at least one complete scope breaks an expectation.
	StatusFail Status = "fail"
	// StatusIncomplete: nothing failed, but every scope the rule needed was
	// incomplete (a trace still missing spans, no data for a measure): the
	// rule could not be judged, which is neither a pass nor a fail.
	StatusIncomplete Status = "incomplete"
)

// Example names one offending trace and, when known, span, with a TraceQL
// query that finds it in Grafana Tempo.
type Example struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id,omitempty"`
	TraceQL string `json:"traceql"`
}

// RuleResult is the verdict of one rule over a dump.
type RuleResult struct {
	ID          string   `json:"id"`
	Description string   `json:"description,omitempty"`
	Severity    Severity `json:"severity"`
	Builtin     bool     `json:"builtin"`
	Status      Status   `json:"status"`
	// Expected says in words what the rule wants, Found what the dump holds.
	Expected string `json:"expected"`
	Found    string `json:"found"`
	// Scopes counts the scopes considered (skipped empty ones left out);
	// Failed and Incomplete count those that failed or could not be judged.
	Scopes     int `json:"scopes"`
	Failed     int `json:"failed"`
	Incomplete int `json:"incomplete"`
	// NotApplicable counts the scopes left out because every selected span
	// in them ran against a sessionless server (Rule.SkipSessionless).
	NotApplicable int `json:"not_applicable"`
	// Examples name offending traces and spans, at most EvalOptions.MaxExamples.
	Examples []Example `json:"examples"`
	// TraceQL finds the spans the rule looks at (or its offenders) in Tempo.
	TraceQL string `json:"traceql"`
}

// DefaultMaxExamples is how many offending spans a failing rule names when
// EvalOptions.MaxExamples is 0.
const DefaultMaxExamples = 5

// EvalOptions tunes EvaluateRules. The zero value names up to
// DefaultMaxExamples examples per rule.
type EvalOptions struct {
	// MaxExamples caps the examples of each rule; 0 means
	// DefaultMaxExamples, a negative value none.
	MaxExamples int
}

// EvaluateRules judges every rule against idx. report is the analysis of
// the same index with cfg (measures are read from it); cfg also gives the
// profile and the reads-per-request selectors. Like Analyze it is pure. It
// fails only when idx was built without an attribute a rule reads (build it
// with MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(rules))).
func EvaluateRules(idx *Index, cfg Config, report *Report, rules []Rule, opts EvalOptions) ([]RuleResult, error) {
	if opts.MaxExamples == 0 {
		opts.MaxExamples = DefaultMaxExamples
	}
	idx.finish()
	ev := &ruleEval{x: idx, cfg: cfg.withDefaults(), report: report, max: max(opts.MaxExamples, 0), matchers: map[*Selector]*matcher{}}
	out := make([]RuleResult, 0, len(rules))
	for i := range rules {
		res, err := ev.rule(&rules[i])
		if err != nil {
			return nil, fmt.Errorf("rule %q: %w", clipInput(rules[i].ID), err)
		}
		out = append(out, res)
	}
	return out, nil
}

// ruleEval holds what every rule of one evaluation shares.
type ruleEval struct {
	x        *Index
	cfg      Config
	report   *Report
	max      int
	matchers map[*Selector]*matcher
	events   []acqEvent // attributed acquires, computed on first need
	haveEv   bool
}

func (e *ruleEval) compile(s *Selector) (*matcher, error) {
	if s == nil {
		return nil, nil
	}
	if m, ok := e.matchers[s]; ok {
		return m, nil
	}
	m, err := e.x.compile(*s)
	if err != nil {
		return nil, err
	}
	e.matchers[s] = m
	return m, nil
}

// compiledSel is a SpanSelector bound to the index.
type compiledSel struct {
	self, under, notUnder *matcher
}

func (e *ruleEval) compileSel(s *SpanSelector) (*compiledSel, error) {
	var c compiledSel
	var err error
	if c.self, err = e.compile(&s.Selector); err != nil {
		return nil, err
	}
	if c.under, err = e.compile(s.Under); err != nil {
		return nil, err
	}
	if c.notUnder, err = e.compile(s.NotUnder); err != nil {
		return nil, err
	}
	return &c, nil
}

// selects reports whether span i is selected within a scope rooted at root
// (-1 for a trace or the dump): ancestors at or above root are not looked at.
func (c *compiledSel) selects(x *Index, i, root int32) bool {
	if !c.self.match(i) {
		return false
	}
	if c.under == nil && c.notUnder == nil {
		return true
	}
	if i == root {
		return c.under == nil
	}
	// The nearest matching ancestors come from one pass over the tree
	// (matcher.nearest), so no span walks its ancestors: a chain of 100k
	// spans would make that quadratic. An ancestor counts when it lies
	// strictly below root.
	t := x.tree()
	if c.notUnder != nil {
		if a := c.notUnder.nearest(i); a >= 0 && t.strictlyBelow(a, root) {
			return false
		}
	}
	if c.under != nil {
		a := c.under.nearest(i)
		return a >= 0 && t.strictlyBelow(a, root)
	}
	return true
}

// ruleScope is one scope of a rule: its spans, root (-1 for dump and trace),
// trace (-1 for the dump) and whether it may be judged.
type ruleScope struct {
	trace, root int32
	spans       []int32
	complete    bool
}

// scopes lists a rule's scopes in a stable order.
func (e *ruleEval) scopes(r *Rule) ([]ruleScope, error) {
	x := e.x
	complete, err := e.compile(r.CompleteWhen)
	if err != nil {
		return nil, fmt.Errorf("complete_when: %w", err)
	}
	has := func(group []int32) bool {
		if complete == nil {
			return true
		}
		for _, i := range group {
			if complete.match(i) {
				return true
			}
		}
		return false
	}
	switch r.Scope.Kind {
	case ScopeDump:
		return []ruleScope{{trace: -1, root: -1, spans: x.order, complete: has(x.order)}}, nil
	case ScopeTrace:
		out := make([]ruleScope, 0, len(x.traces))
		for t := range x.traces {
			tr := &x.traces[t]
			group := x.order[tr.first : tr.first+tr.n]
			out = append(out, ruleScope{trace: int32(t), root: -1, spans: group, complete: !tr.incomplete && has(group)})
		}
		slices.SortFunc(out, func(a, b ruleScope) int { return strings.Compare(x.traceID(a.trace), x.traceID(b.trace)) })
		return out, nil
	}
	root, err := e.compile(r.Scope.Root)
	if err != nil {
		return nil, fmt.Errorf("scope: %w", err)
	}
	// A subtree's spans are its range of the depth-first layout: nested
	// subtrees share one array instead of each copying its span list.
	tree := x.tree()
	var out []ruleScope
	for t := range x.traces {
		tr := &x.traces[t]
		group := x.order[tr.first : tr.first+tr.n]
		first := len(out)
		for _, i := range group {
			if root.match(i) {
				out = append(out, ruleScope{trace: int32(t), root: i, spans: tree.subtree(i)})
			}
		}
		if len(out) == first {
			continue
		}
		ok := !tr.incomplete && has(group)
		for k := first; k < len(out); k++ {
			out[k].complete = ok
		}
	}
	slices.SortFunc(out, func(a, b ruleScope) int { return x.cmpSpans(a.root, b.root) })
	return out, nil
}

// rule judges one rule.
func (e *ruleEval) rule(r *Rule) (RuleResult, error) {
	res := RuleResult{ID: r.ID, Description: r.Description, Severity: r.Severity, Builtin: r.Builtin,
		Expected: ExpectedText(r), Examples: []Example{}}
	scopes, err := e.scopes(r)
	if err != nil {
		return res, err
	}
	sels := map[*SpanSelector]*compiledSel{}
	selOf := func(ex *Expectation) (*compiledSel, *SpanSelector, error) {
		s := ex.Select
		if s == nil {
			s = r.Select
		}
		if c, ok := sels[s]; ok {
			return c, s, nil
		}
		c, err := e.compileSel(s)
		if err != nil {
			return nil, nil, fmt.Errorf("select: %w", err)
		}
		sels[s] = c
		return c, s, nil
	}
	var ruleSel *compiledSel
	if r.Select != nil {
		if ruleSel, err = e.compileSel(r.Select); err != nil {
			return res, fmt.Errorf("select: %w", err)
		}
		sels[r.Select] = ruleSel
	}
	attrKey := func(ex *Expectation) (uint16, error) {
		id, ok := e.x.lookupKey(ex.Attribute)
		if !ok || !e.x.spanKeyOK[id] {
			return 0, fmt.Errorf("distinct reads attribute %q, which the index did not keep: build it with RulesIndexOptions", ex.Attribute)
		}
		return id, nil
	}

	fails := map[string]int{} // "expectation: found" -> scopes
	var examples []Example
	var measureFound []string
	// Subtree scopes nest: their counts come from subtreeAgg, never from
	// looking at each scope's spans (depth² on a chain of roots).
	var sub *subtreeAgg
	if r.Scope.Kind == ScopeSubtree {
		sub = newSubtreeAgg(e.x, scopes)
	}
	sl := e.sessionlessTest()
	// selectedIn lists the spans c selects in scope si, sessionless ones
	// left out when the rule skips them.
	selectedIn := func(c *compiledSel, si int) []int32 {
		var out []int32
		if sub != nil {
			out = sub.selected(c, si)
		} else {
			sc := scopes[si]
			for _, i := range sc.spans {
				if c.selects(e.x, i, sc.root) {
					out = append(out, i)
				}
			}
		}
		if !r.SkipSessionless {
			return out
		}
		kept := out[:0:0]
		for _, i := range out {
			if !sl(i) {
				kept = append(kept, i)
			}
		}
		return kept
	}
	for si, sc := range scopes {
		if r.SkipSessionless && ruleSel != nil {
			all := len(selectedIn(ruleSel, si))
			var any int
			if sub != nil {
				any = sub.count(ruleSel, si)
			} else {
				for _, i := range sc.spans {
					if ruleSel.selects(e.x, i, sc.root) {
						any++
					}
				}
			}
			if any > 0 && all == 0 {
				res.NotApplicable++
				continue
			}
		}
		if r.SkipEmpty && ruleSel != nil {
			var any bool
			switch {
			case r.SkipSessionless:
				any = len(selectedIn(ruleSel, si)) > 0
			case sub != nil:
				any = sub.count(ruleSel, si) > 0
			default:
				for _, i := range sc.spans {
					if ruleSel.selects(e.x, i, sc.root) {
						any = true
						break
					}
				}
			}
			if !any {
				continue
			}
		}
		res.Scopes++
		if !sc.complete {
			res.Incomplete++
			continue
		}
		scopeFailed, scopeIncomplete := false, false
		var offenders []int32
		for k := range r.Expect {
			ex := &r.Expect[k]
			bound, ok := e.operand(ex.Than)
			if !ok {
				scopeIncomplete = true
				continue
			}
			if ex.isMeasure() {
				got, ok := MeasureValue(e.report, ex.Of)
				if !ok {
					measureFound = append(measureFound, ex.Of+" has no data")
					scopeIncomplete = true
					continue
				}
				found := ex.Of + " = " + formatFigure(got)
				if ex.Than.Measure != "" {
					found += " (" + ex.Than.Measure + " = " + formatFigure(bound) + ")"
				}
				measureFound = append(measureFound, found)
				if !ex.Holds(got, bound) {
					scopeFailed = true
					fails[ex.String()]++
					examples = append(examples, e.measureExamples(ex.Of)...)
				}
				continue
			}
			c, _, err := selOf(ex)
			if err != nil {
				return res, err
			}
			// selected lists the offenders if it fails (a subtree scope names
			// its root instead); plain counts of a subtree scope come from
			// subtreeAgg without listing spans.
			var selected []int32
			var got float64
			needList := r.SkipSessionless || ex.Of == QuantityPoolSessions || ex.Of == QuantityLostSessions || sub == nil
			if needList {
				selected = selectedIn(c, si)
				got = float64(len(selected))
			} else {
				got = float64(sub.count(c, si))
			}
			what := QuantityCount
			switch ex.Of {
			case QuantityPoolSessions, QuantityLostSessions:
				pooled, lost := e.sessionSplits(selected)
				got, what = float64(pooled), ex.Of
				if ex.Of == QuantityLostSessions {
					got = float64(lost)
				}
			case QuantityDistinct:
				key, err := attrKey(ex)
				if err != nil {
					return res, err
				}
				if !needList {
					got = float64(sub.distinct(c, key, si))
				} else {
					vals := map[int32]bool{}
					for _, i := range selected {
						if v, ok := e.x.attrVal(i, key); ok {
							vals[v] = true
						}
					}
					got = float64(len(vals))
				}
				what = "distinct(" + ex.Attribute + ")"
			}
			if !ex.Holds(got, bound) {
				scopeFailed = true
				fails[what+" = "+formatFigure(got)]++
				offenders = append(offenders, selected...)
			}
		}
		switch {
		case scopeFailed:
			res.Failed++
			examples = append(examples, e.scopeExamples(sc, offenders)...)
		case scopeIncomplete:
			res.Incomplete++
		}
	}

	// Nothing to judge: no scope at all, or a dump without pool spans. That
	// is incomplete (a gate is never green on missing data) unless the rule
	// allows it.
	empty := (res.Scopes == 0 && res.NotApplicable == 0) || (r.Scope.Kind == ScopeDump && e.report != nil && e.report.PoolSpans == 0 && readsPool(r))
	switch {
	case res.Failed > 0:
		res.Status = StatusFail
	case empty && !r.AllowEmpty:
		res.Status = StatusIncomplete
	case !empty && res.Scopes > 0 && res.Incomplete == res.Scopes:
		res.Status = StatusIncomplete
	default:
		res.Status = StatusPass
	}
	res.Found = foundText(r, res, fails, measureFound)
	if res.NotApplicable > 0 {
		na := fmt.Sprintf("%d %s against sessionless servers (MCP %s or later), not applicable", res.NotApplicable, scopeNoun(r.Scope), SessionlessProtocol)
		if res.Scopes == 0 {
			res.Found = na
		} else {
			res.Found += "; " + na
		}
	}
	if empty && res.Failed == 0 {
		res.Found = e.nothingToJudge(r, res.Scopes == 0)
		if r.AllowEmpty {
			res.Found += " (allowed: allow_empty)"
		}
	}
	res.Examples = e.capExamples(examples)
	res.TraceQL = e.ruleTraceQL(r)
	return res, nil
}

// sessionSplits returns, over the selected spans of one scope, the sessions
// the pool chose (distinct mcp.session.id, a session the server forgot
// counted with its successor) and the sessions the server forgot: a span on
// the session failed with error.type session_expired and a later selected
// span ran on another session (the transparent redial moved on).
func (e *ruleEval) sessionSplits(selected []int32) (pooled, lost int) {
	x := e.x
	kSess, okS := x.lookupKey(spans.AttrSessionID)
	kErr, okE := x.lookupKey(spans.AttrErrorType)
	if !okS {
		return 0, 0
	}
	expired := x.valueID(spans.ErrTypeSessionExpired)
	type call struct {
		start   int64
		session int32
		expired bool
	}
	calls := make([]call, 0, len(selected))
	for _, i := range selected {
		sess, ok := x.attrVal(i, kSess)
		if !ok {
			continue
		}
		c := call{start: x.sp(i).start, session: sess}
		if okE && expired >= 0 {
			if v, ok := x.attrVal(i, kErr); ok && v == expired {
				c.expired = true
			}
		}
		calls = append(calls, c)
	}
	slices.SortStableFunc(calls, func(a, b call) int { return cmp.Compare(a.start, b.start) })
	// only[j] is the one session of calls[j:], or -2 when they hold several:
	// a later call on another session exists iff only[j+1] is not the
	// call's own session. One pass each way keeps this linear.
	only := make([]int32, len(calls)+1)
	only[len(calls)] = -1
	for j := len(calls) - 1; j >= 0; j-- {
		switch next := only[j+1]; {
		case next == -1 || next == calls[j].session:
			only[j] = calls[j].session
		default:
			only[j] = -2
		}
	}
	distinct := map[int32]bool{}
	forgotten := map[int32]bool{}
	for j, c := range calls {
		distinct[c.session] = true
		if c.expired && only[j+1] != -1 && only[j+1] != c.session {
			forgotten[c.session] = true
		}
	}
	return len(distinct) - len(forgotten), len(forgotten)
}

// SessionlessProtocol is the first MCP revision without protocol sessions
// (no initialize, no Mcp-Session-Id): a call span carrying it or a later
// mcp.protocol.version ran against a sessionless server.
const SessionlessProtocol = "2026-07-28"

// IsSessionlessProtocol reports whether an MCP protocol version (YYYY-MM-DD)
// has no protocol sessions.
func IsSessionlessProtocol(version string) bool {
	return version != "" && version >= SessionlessProtocol
}

// sessionlessTest returns a test of whether span i ran against a sessionless
// server: its mcp.protocol.version is SessionlessProtocol or later, or it
// carries a protocol version but no mcp.session.id (a server of any revision
// that minted no session).
func (e *ruleEval) sessionlessTest() func(i int32) bool {
	x := e.x
	kVer, okV := x.lookupKey(spans.AttrProtocolVersion)
	if !okV || !x.spanKeyOK[kVer] {
		return func(int32) bool { return false }
	}
	kSess, okS := x.lookupKey(spans.AttrSessionID)
	memo := map[int32]bool{}
	return func(i int32) bool {
		v, ok := x.attrVal(i, kVer)
		if !ok {
			return false
		}
		if okS {
			if _, has := x.attrVal(i, kSess); !has {
				return true
			}
		}
		sl, seen := memo[v]
		if !seen {
			sl = IsSessionlessProtocol(x.vals[v])
			memo[v] = sl
		}
		return sl
	}
}

// readsPool reports whether a rule judges the pool: a built-in rule, or one
// comparing a pool or execution measure (not a reads-per-request measure,
// which has its own "no data"). Such a rule has nothing to judge in a dump
// without pool spans.
func readsPool(r *Rule) bool {
	if r.Builtin {
		return true
	}
	pool := func(m string) bool { return m != "" && !strings.HasPrefix(m, "measures.") }
	for _, ex := range r.Expect {
		if (ex.isMeasure() && pool(ex.Of)) || pool(ex.Than.Measure) {
			return true
		}
	}
	return false
}

// nothingToJudge says why a rule had nothing to judge, naming what the
// analysis looked for when the dump holds no pool spans.
func (e *ruleEval) nothingToJudge(r *Rule, noScope bool) string {
	if e.report != nil && e.report.PoolSpans == 0 && readsPool(r) {
		return "nothing to judge: no pool spans in the dump"
	}
	if !noScope {
		return "nothing to judge"
	}
	if r.SkipEmpty {
		return "nothing to judge: no " + scopeNoun(r.Scope) + " where the selection matches a span"
	}
	return "nothing to judge: no " + scopeNoun(r.Scope)
}

// operand returns the value of a bound: its number, or its measure's value.
func (e *ruleEval) operand(o Operand) (float64, bool) {
	if o.Measure == "" {
		return o.Number, true
	}
	return MeasureValue(e.report, o.Measure)
}

// scopeExamples names a failing scope: the offending spans for the dump,
// else the scope's root span (the subtree's root, or the first selected
// span, else the first root, of a trace).
func (e *ruleEval) scopeExamples(sc ruleScope, offenders []int32) []Example {
	x := e.x
	switch {
	case sc.trace < 0:
		out := make([]Example, 0, min(len(offenders), e.max))
		for _, i := range offenders {
			out = append(out, e.spanExample(i))
		}
		return out
	case sc.root >= 0:
		return []Example{e.spanExample(sc.root)}
	case len(offenders) > 0:
		return []Example{e.spanExample(offenders[0])}
	}
	for _, i := range sc.spans {
		if x.sp(i).parent < 0 {
			return []Example{e.spanExample(i)}
		}
	}
	if len(sc.spans) > 0 {
		return []Example{e.spanExample(sc.spans[0])}
	}
	return nil
}

func (e *ruleEval) spanExample(i int32) Example {
	s := e.x.sp(i)
	tid := e.x.traceID(s.trace)
	sid := fmt.Sprintf("%016x", s.id)
	return Example{TraceID: tid, SpanID: sid, TraceQL: fmt.Sprintf(`{ trace:id = "%s" && span:id = "%s" }`, tid, sid)}
}

func traceExample(tid string) Example {
	return Example{TraceID: tid, TraceQL: fmt.Sprintf(`{ trace:id = "%s" }`, tid)}
}

// measureExamples names what makes a measure what it is: the unexplained
// misses, the misses above the floor, the multi-session executions, the
// unexpected requests of a reads measure.
func (e *ruleEval) measureExamples(name string) []Example {
	switch name {
	case "unexplained_misses", "excess_misses", "misses", "hit_rate", "handshakes":
		var out []Example
		for _, ev := range e.poolEvents() {
			if ev.hit {
				continue
			}
			reason := spans.MissReasons[ev.reason]
			if reason == spans.MissUnexplained || (name != "unexplained_misses" && reason != spans.MissCold) {
				out = append(out, e.spanExample(ev.span))
			}
		}
		return out
	case "multi_session_executions", "max_sessions_per_execution":
		var out []Example
		for _, t := range e.report.Executions.Examples {
			out = append(out, traceExample(t))
		}
		return out
	}
	if rest, ok := strings.CutPrefix(name, "measures."); ok {
		mname := rest[:strings.LastIndexByte(rest, '.')]
		for _, m := range e.report.Measures {
			if m.Name == mname {
				var out []Example
				for _, t := range m.Examples {
					out = append(out, traceExample(t))
				}
				return out
			}
		}
	}
	return nil
}

// poolEvents returns the attributed acquires of the pool measure, computed
// once per evaluation.
func (e *ruleEval) poolEvents() []acqEvent {
	if !e.haveEv {
		e.haveEv = true
		p := newPoolAcc(newVocab(e.x, e.cfg), e.cfg, &latencyAcc{})
		p.collect()
		p.attribute()
		e.events = p.events
	}
	return e.events
}

// capExamples sorts and de-duplicates examples and keeps the first max.
func (e *ruleEval) capExamples(ex []Example) []Example {
	slices.SortFunc(ex, func(a, b Example) int {
		return cmp.Or(cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.SpanID, b.SpanID))
	})
	ex = slices.CompactFunc(ex, func(a, b Example) bool { return a.TraceID == b.TraceID && a.SpanID == b.SpanID })
	if len(ex) > e.max {
		ex = ex[:e.max]
	}
	if ex == nil {
		ex = []Example{}
	}
	return ex
}

// scopeNoun names a rule's scopes in the plural for messages.
func scopeNoun(s Scope) string {
	switch s.Kind {
	case ScopeDump:
		return "dump"
	case ScopeTrace:
		return "traces"
	}
	return "subtrees"
}

func foundText(r *Rule, res RuleResult, fails map[string]int, measureFound []string) string {
	var parts []string
	if r.Scope.Kind == ScopeDump && len(measureFound) > 0 {
		parts = append(parts, strings.Join(measureFound, ", "))
	}
	keys := make([]string, 0, len(fails))
	for k := range fails {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if r.Scope.Kind != ScopeDump {
		judged := res.Scopes - res.Incomplete
		switch {
		case res.Scopes == 0:
			parts = append(parts, "no "+scopeNoun(r.Scope)+" to judge")
		case res.Failed == 0 && judged > 0:
			parts = append(parts, fmt.Sprintf("holds in all %d %s judged", judged, scopeNoun(r.Scope)))
		}
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s in %d of %d %s", k, fails[k], judged, scopeNoun(r.Scope)))
		}
		if res.Incomplete > 0 {
			parts = append(parts, fmt.Sprintf("%d incomplete, not judged", res.Incomplete))
		}
	} else {
		for _, k := range keys {
			if strings.HasPrefix(k, QuantityCount) || strings.HasPrefix(k, QuantityDistinct) {
				parts = append(parts, k)
			}
		}
		if res.Failed == 0 && len(measureFound) == 0 {
			if res.Incomplete > 0 {
				parts = append(parts, "the dump is incomplete (complete_when matched nothing)")
			} else {
				parts = append(parts, "holds")
			}
		}
	}
	return strings.Join(parts, "; ")
}

// ExpectedText says in words what a rule wants, for reports and
// `mcptrace rules --explain`.
func ExpectedText(r *Rule) string {
	var conds []string
	for _, ex := range r.Expect {
		s := ex.String()
		sel := ex.Select
		if sel == nil && !ex.isMeasure() {
			sel = r.Select
		}
		if sel != nil && !ex.isMeasure() {
			s += " of [" + sel.String() + "]"
		}
		conds = append(conds, s)
	}
	where := "in the dump"
	switch r.Scope.Kind {
	case ScopeTrace:
		where = "in every trace"
	case ScopeSubtree:
		where = "in every subtree of [" + r.Scope.Root.String() + "]"
	}
	out := strings.Join(conds, " and ") + " " + where
	if r.SkipEmpty {
		out += " that has one"
	}
	if r.CompleteWhen != nil {
		out += ", once [" + r.CompleteWhen.String() + "] has landed"
	}
	return out
}

// ExplainRule describes a rule in full sentences.
func ExplainRule(r *Rule) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s", r.ID, r.Severity)
	if r.Builtin {
		b.WriteString(", built-in")
	} else if r.Line > 0 {
		fmt.Fprintf(&b, ", line %d", r.Line)
	}
	b.WriteString(")\n")
	if r.Description != "" {
		fmt.Fprintf(&b, "  %s\n", r.Description)
	}
	switch r.Scope.Kind {
	case ScopeDump:
		b.WriteString("  Judged once over the whole dump.\n")
	case ScopeTrace:
		b.WriteString("  Judged for each trace on its own.\n")
	case ScopeSubtree:
		fmt.Fprintf(&b, "  Judged for each span matching [%s], with everything beneath it.\n", r.Scope.Root)
	}
	if r.Select != nil {
		fmt.Fprintf(&b, "  Looks at spans matching [%s].\n", r.Select)
	}
	for _, ex := range r.Expect {
		fmt.Fprintf(&b, "  Expects %s.\n", explainExpectation(ex))
	}
	if r.SkipEmpty {
		b.WriteString("  Scopes where no span is selected are left out.\n")
	}
	if r.CompleteWhen != nil {
		fmt.Fprintf(&b, "  A scope is judged only once its trace is whole and holds a span matching [%s]; otherwise it is incomplete.\n", r.CompleteWhen)
	} else if r.Scope.Kind != ScopeDump {
		b.WriteString("  A trace with a missing parent span is incomplete and not judged.\n")
	}
	if r.Severity == SeverityError {
		b.WriteString("  A failure fails the check (exit 1).\n")
	} else {
		b.WriteString("  A failure is reported as a warning only.\n")
	}
	return b.String()
}

var opWords = map[Op]string{OpEq: "to equal", OpNe: "to differ from", OpLt: "to be below", OpLe: "to be at most", OpGt: "to be above", OpGe: "to be at least"}

func explainExpectation(ex Expectation) string {
	var subject string
	switch ex.Of {
	case QuantityCount:
		subject = "the number of such spans"
	case QuantityDistinct:
		subject = "the number of distinct values of " + ex.Attribute + " over them"
	case QuantityPoolSessions:
		subject = "the number of sessions the pool chose for them (distinct " + spans.AttrSessionID + ", a session the server forgot counted with the one the redial moved to)"
	case QuantityLostSessions:
		subject = "the number of their sessions the server forgot mid-way (a call failed " + spans.ErrTypeSessionExpired + " and later calls ran on another session)"
	default:
		subject = "the measure " + ex.Of
	}
	if ex.Select != nil {
		subject += " (spans matching [" + ex.Select.String() + "])"
	}
	s := subject + " " + opWords[ex.Op] + " " + ex.Than.String()
	if ex.Tolerance > 0 {
		s += ", within " + formatNumber(ex.Tolerance)
	}
	return s
}

// formatFigure renders a measured value: integers as such, ratios with four
// decimals at most.
func formatFigure(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}
