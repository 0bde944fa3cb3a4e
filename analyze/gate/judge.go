package gate

import (
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Status is a rule's verdict (report.RuleStatus, where the verdict's one
// type lives).
type Status = report.RuleStatus

// The verdicts.
const (
	StatusPass          = report.StatusPass
	StatusFail          = report.StatusFail
	StatusIncomplete    = report.StatusIncomplete
	StatusNotApplicable = report.StatusNotApplicable
)

// Example names one offending trace and span (report.RuleExample).
type Example = report.RuleExample

// RuleResult is the verdict of one rule over a dump: report.RuleVerdict,
// which only Evaluate builds.
type RuleResult = report.RuleVerdict

// Evaluate judges every rule from the analysis value a (see
// analyze.AnalyzeRules), whose observations are of the same rules in the
// same order. It reads no index: measures come from the report, scope
// values and offending spans from the observations.
func Evaluate(a *report.Analysis, rules []rulefmt.Rule) ([]RuleResult, error) {
	report, obs := a.Report, a.Rules
	if len(obs) != len(rules) {
		return nil, fmt.Errorf("evaluate: %d observations for %d rules", len(obs), len(rules))
	}
	out := make([]RuleResult, 0, len(rules))
	for i := range rules {
		for _, g := range obs[i].Groups {
			if g.Complete && (len(g.Values) != len(rules[i].Expect) || len(g.Offenders) != len(rules[i].Expect)) {
				return nil, fmt.Errorf("evaluate: rule %q: observation of %d expectations, the rule has %d", textfmt.ClipInput(rules[i].ID), len(g.Values), len(rules[i].Expect))
			}
		}
		j := judge{report: report, max: obs[i].MaxExamples}
		out = append(out, j.rule(&rules[i], &obs[i]))
	}
	return out, nil
}

// judge holds what judging one rule reads.
type judge struct {
	report *report.Report
	max    int
}

// rule judges one rule from its observation.
func (j *judge) rule(r *rulefmt.Rule, obs *report.RuleObservation) RuleResult {
	res := RuleResult{ID: r.ID, Description: r.Description, Severity: r.Severity, Builtin: r.Builtin,
		Expected: ExpectedText(r), Examples: []Example{}, NotApplicable: obs.NotApplicable, TraceQL: obs.TraceQL}
	if why := j.notApplicable(r, obs); why != "" {
		// The TraceQL would name spans the writer does not write.
		res.Status, res.Found, res.TraceQL = StatusNotApplicable, "not applicable: "+why, ""
		return res
	}
	t := &ruleTally{fails: map[string]int{}}
	for _, g := range obs.Groups {
		j.group(r, obs, g, &res, t)
	}
	if res.Failed == 0 && len(t.undecided) > 0 {
		res.Status, res.Found = StatusNotApplicable, "not applicable: "+strings.Join(slices.Compact(t.undecided), "; ")
		res.Examples, res.TraceQL = []Example{}, ""
		return res
	}
	// Nothing to judge: no scope at all, or a dump without pool spans. That
	// is incomplete (a gate is never green on missing data) unless the rule
	// allows it.
	empty := (res.Scopes == 0 && res.NotApplicable == 0) || (r.Scope.Kind == rulefmt.ScopeDump && j.report != nil && j.report.PoolSpans == 0 && readsPool(r))
	res.Status = ruleStatus(r, &res, empty)
	res.Found = j.ruleFound(r, obs, &res, t, empty)
	res.Examples = j.capExamples(t.examples)
	return res
}

// ruleTally is what judging a rule's groups gathers for its verdict's
// text and examples.
type ruleTally struct {
	fails        map[string]int // "expectation: found" -> scopes
	examples     []Example
	measureFound []string
	// undecided says, per measure expectation, why a bound could not
	// decide it (a lower bound that breaks an at-least).
	undecided []string
	// waiting counts the incomplete scopes that wait for spans, and
	// missingParent those of them that wait for a parent span; the others
	// wait for a span matching complete_when.
	waiting, missingParent int
}

// notApplicable says why rule r does not apply to the report's spans: it
// needs what the writer cannot show, compares a figure the spans cannot
// show, or reads sessions per execution the spans cannot tie; "" when it
// applies.
func (j *judge) notApplicable(r *rulefmt.Rule, obs *report.RuleObservation) string {
	if j.report == nil {
		return ""
	}
	var why []string
	if w := j.report.LacksWhy(r.AllNeeds()); w != "" {
		why = append(why, w) // says it for the measures too
	}
	for _, ex := range r.Expect {
		if len(why) > 0 || j.report.NothingRecognised() {
			break // nothing recognised: nothing to judge, the dump's own verdict
		}
		for _, name := range []string{ex.Of, ex.Than.Measure} {
			if f := j.report.FigureOf(name); name != "" && !f.Known() {
				why = append(why, name+" is not measurable: "+f.Why)
			}
		}
	}
	if obs.Unmeasurable != "" {
		why = append(why, obs.Unmeasurable)
	}
	return strings.Join(slices.Compact(why), "; ")
}

// boundDecides reports whether a measure that is only a bound (state,
// its value got) decides ex against bound, whose comparison on got holds
// or not. Every
// figure is at least 0. A lower bound L (the truth at least L) holds an
// at-least, breaks an at-most, and breaks an equality when above it; an
// upper bound U the other way round, and holds an equality with 0 when
// U is 0. Anything else the truth could settle either way.
func boundDecides(ex *rulefmt.Expectation, state report.Measurability, got, bound float64, holds bool) bool {
	switch state {
	case report.LowerBound:
		return lowerBoundDecides(ex.Op, got, bound, holds)
	case report.UpperBound:
		return upperBoundDecides(ex.Op, got, bound, holds)
	}
	return true
}

// lowerBoundDecides is boundDecides for a lower bound: the truth, at least
// got, can only be larger, so an at-least that holds holds, an at-most
// that breaks breaks, and so does an equality got is already past.
func lowerBoundDecides(op rulefmt.Op, got, bound float64, holds bool) bool {
	atLeast, atMost := opDirection(op)
	return (holds && atLeast) || (!holds && atMost) || (!holds && op == rulefmt.OpEq && got > bound)
}

// upperBoundDecides is boundDecides for an upper bound: the truth, at most
// got, can only be smaller, so an at-most that holds holds, an at-least
// that breaks breaks, and so does an equality got is already short of; an
// equality with 0 holds when got is 0, as no figure is below it.
func upperBoundDecides(op rulefmt.Op, got, bound float64, holds bool) bool {
	atLeast, atMost := opDirection(op)
	return (holds && atMost) || (!holds && atLeast) || (!holds && op == rulefmt.OpEq && got < bound) ||
		(holds && op == rulefmt.OpEq && got == 0)
}

// opDirection reports whether op asks for at least its bound (>=, >) or
// at most it (<=, <); an equality or inequality is neither.
func opDirection(op rulefmt.Op) (atLeast, atMost bool) {
	return op == rulefmt.OpGe || op == rulefmt.OpGt, op == rulefmt.OpLe || op == rulefmt.OpLt
}

// group judges one group of a rule's scopes (scopes holding the same
// values) against every expectation, counting them into res and t.
func (j *judge) group(r *rulefmt.Rule, obs *report.RuleObservation, g report.ScopeGroup, res *RuleResult, t *ruleTally) {
	res.Scopes += g.Scopes
	if !g.Complete {
		res.Incomplete += g.Scopes
		t.waiting += g.Scopes
		if g.MissingParent {
			t.missingParent += g.Scopes
		}
		return
	}
	scopeFailed, scopeIncomplete := false, false
	var failing []int
	for k := range r.Expect {
		ex := &r.Expect[k]
		bound, ok := j.operand(ex.Than)
		if !ok {
			scopeIncomplete = true
			continue
		}
		if ex.IsMeasure() {
			failed, incomplete := j.measure(ex, bound, g.Scopes, obs, t)
			scopeFailed = scopeFailed || failed
			scopeIncomplete = scopeIncomplete || incomplete
			continue
		}
		if v := g.Values[k]; !j.counted(ex, v, bound, t) {
			scopeFailed = true
			t.fails[failingText(ex, v)] += g.Scopes
			failing = append(failing, k)
		}
	}
	switch {
	case scopeFailed:
		res.Failed += g.Scopes
		t.examples = append(t.examples, scopeExamples(r.Scope.Kind, g, failing)...)
	case scopeIncomplete:
		res.Incomplete += g.Scopes
	}
}

// counted judges a counting expectation against one scope's count v:
// false when it fails. A count the report says is only a bound
// (SpanQuantityOf: values that may have merged) fails or holds only
// where the bound decides it; else the scope neither fails nor holds,
// and t says why.
func (j *judge) counted(ex *rulefmt.Expectation, v, bound float64, t *ruleTally) bool {
	holds := ex.Holds(v, bound)
	if j.report == nil {
		return holds
	}
	if f := j.report.SpanQuantityOf(ex.Of, ex.Attribute); !f.Exact() && !boundDecides(ex, f.State, v, bound, holds) {
		t.undecided = append(t.undecided, undecidedText(ex, quantityText(ex), v, f))
		return true
	}
	return holds
}

// undecidedText says why what (got) cannot decide ex: it is only the
// bound f.
func undecidedText(ex *rulefmt.Expectation, what string, got float64, f report.FigureState) string {
	kind := map[report.Measurability]string{report.LowerBound: "a lower bound", report.UpperBound: "an upper bound"}[f.State]
	return fmt.Sprintf("%s = %s is only %s, which cannot decide %s: %s", what, textfmt.Figure(got), kind, ex.String(), f.Why)
}

// measure judges a measure expectation against bound for a group of
// scopes: whether it failed, or had no data (incomplete).
func (j *judge) measure(ex *rulefmt.Expectation, bound float64, scopes int, obs *report.RuleObservation, t *ruleTally) (failed, incomplete bool) {
	got, ok := report.MeasureValue(j.report, ex.Of)
	if !ok {
		t.measureFound = append(t.measureFound, ex.Of+" has no data")
		return false, true
	}
	found := ex.Of + " = " + textfmt.Figure(got)
	if ex.Than.Measure != "" {
		found += " (" + ex.Than.Measure + " = " + textfmt.Figure(bound) + ")"
	}
	t.measureFound = append(t.measureFound, found)
	holds := ex.Holds(got, bound)
	if f := j.report.FigureOf(ex.Of); !f.Exact() && !boundDecides(ex, f.State, got, bound, holds) {
		t.undecided = append(t.undecided, undecidedText(ex, ex.Of, got, f))
		return false, false
	}
	if holds {
		return false, false
	}
	t.fails[ex.String()] += scopes
	t.examples = append(t.examples, j.measureExamples(ex.Of, obs)...)
	return true, false
}

// quantityText names what a counting expectation counts, for its finding.
func quantityText(ex *rulefmt.Expectation) string {
	switch ex.Of {
	case rulefmt.QuantityPoolSessions, rulefmt.QuantityLostSessions:
		return ex.Of
	case rulefmt.QuantityDistinct:
		return "distinct(" + ex.Attribute + ")"
	}
	return rulefmt.QuantityCount
}

// failingText names a failing figure of one expectation: its quantity,
// the expectation's own selection when it has one (so two expectations
// over different spans that fail with one value stay two lines, each
// counting its scopes once), and the value.
func failingText(ex *rulefmt.Expectation, v float64) string {
	q := quantityText(ex)
	if ex.Select != nil {
		q += " of [" + ex.Select.String() + "]"
	}
	return q + " = " + textfmt.Figure(v)
}

// ruleStatus is a rule's verdict from its counted scopes; empty says it
// had nothing to judge.
func ruleStatus(r *rulefmt.Rule, res *RuleResult, empty bool) Status {
	switch {
	case res.Failed > 0:
		return StatusFail
	case empty && !r.AllowEmpty:
		return StatusIncomplete
	case !empty && res.Scopes > 0 && res.Incomplete == res.Scopes:
		return StatusIncomplete
	}
	return StatusPass
}

// ruleFound is a rule's finding: what failed and what it found, the
// scopes not applicable, or why there was nothing to judge.
func (j *judge) ruleFound(r *rulefmt.Rule, obs *report.RuleObservation, res *RuleResult, t *ruleTally, empty bool) string {
	found := foundText(r, *res, t)
	if res.NotApplicable > 0 {
		na := fmt.Sprintf("%d %s against sessionless servers (MCP %s or later), not applicable", res.NotApplicable, scopeNoun(r.Scope), report.SessionlessProtocol)
		if res.Scopes == 0 {
			found = na
		} else {
			found += "; " + na
		}
	}
	if empty && res.Failed == 0 {
		res.NoPoolSpans = j.lacksPool(r)
		found = j.nothingToJudge(r, res.Scopes == 0)
		if r.AllowEmpty {
			found += " (allowed: allow_empty)"
		}
	}
	if obs.Unmeasurable != "" && res.Failed == 0 {
		found = obs.Unmeasurable // executions not measurable: incomplete, and why
	}
	return found
}

// readsPool reports whether a rule judges the pool: a built-in rule, or one
// comparing a pool or execution measure (not a reads-per-request measure,
// which has its own "no data"). Such a rule has nothing to judge in a dump
// without pool spans.
func readsPool(r *rulefmt.Rule) bool {
	if r.Builtin {
		return true
	}
	pool := func(m string) bool { return m != "" && !strings.HasPrefix(m, "measures.") }
	for _, ex := range r.Expect {
		if (ex.IsMeasure() && pool(ex.Of)) || pool(ex.Than.Measure) {
			return true
		}
	}
	return false
}

// lacksPool reports whether r reads the pool and the dump holds no pool
// spans: nothing to judge, for a reason the check gives once.
func (j *judge) lacksPool(r *rulefmt.Rule) bool {
	return j.report != nil && j.report.PoolSpans == 0 && readsPool(r)
}

// nothingToJudge says why a rule had nothing to judge, naming what the
// analysis looked for when the dump holds no pool spans.
func (j *judge) nothingToJudge(r *rulefmt.Rule, noScope bool) string {
	if j.lacksPool(r) {
		return "nothing to judge: no pool spans in the dump"
	}
	if !noScope {
		return "nothing to judge"
	}
	if r.SkipEmpty {
		return "nothing to judge: no " + scopeNoun(r.Scope) + " where the selection matches a span"
	}
	if r.Scope.Kind == rulefmt.ScopeSubtree && r.Scope.Root != nil {
		// The selector is named, so a rule written for another writer's
		// span names says which of its names the dump lacks.
		return "nothing to judge: no " + scopeNoun(r.Scope) + ": no span matches the scope's root [" + textfmt.ClipInput(r.Scope.Root.String()) + "]"
	}
	return "nothing to judge: no " + scopeNoun(r.Scope)
}

// operand returns the value of a bound: its number, or its measure's value.
func (j *judge) operand(o rulefmt.Operand) (float64, bool) {
	if o.Measure == "" {
		return o.Number, true
	}
	return report.MeasureValue(j.report, o.Measure)
}

// scopeExamples names the failing scopes of a group, whose expectations
// failing failed: the dump's offending spans of each, else each scope's
// first offending span of the first failing expectation that selected
// one, else the scopes themselves (a subtree's root, a trace's first root).
func scopeExamples(kind rulefmt.ScopeKind, g report.ScopeGroup, failing []int) []Example {
	var refs []report.SpanRef
	switch kind {
	case rulefmt.ScopeDump:
		for _, k := range failing {
			refs = append(refs, g.Offenders[k]...)
		}
	case rulefmt.ScopeTrace:
		for _, k := range failing {
			if len(g.Offenders[k]) > 0 {
				refs = g.Offenders[k]
				break
			}
		}
	}
	if refs == nil && kind != rulefmt.ScopeDump {
		refs = g.Examples
	}
	out := make([]Example, 0, len(refs))
	for _, ref := range refs {
		out = append(out, spanExample(ref))
	}
	return out
}

// spanExample names one span with the TraceQL query that finds it.
func spanExample(ref report.SpanRef) Example {
	tid, sid := ref.Trace.String(), hex.EncodeToString(ref.Span[:])
	return Example{TraceID: tid, SpanID: sid, TraceQL: fmt.Sprintf(`{ trace:id = "%s" && span:id = "%s" }`, tid, sid)}
}

func traceExample(tid string) Example {
	return Example{TraceID: tid, TraceQL: fmt.Sprintf(`{ trace:id = "%s" }`, tid)}
}

// measureExamples names what makes a measure what it is: the unexplained
// misses, the misses above the floor, the multi-session executions, the
// unexpected requests of a reads measure.
func (j *judge) measureExamples(name string, obs *report.RuleObservation) []Example {
	var refs []report.SpanRef
	switch name {
	case "unexplained_misses":
		refs = obs.UnexplainedMisses
	case "excess_misses", "misses", "hit_rate", "handshakes":
		refs = obs.AboveFloorMisses
	case "multi_session_executions", "max_sessions_per_execution":
		var out []Example
		for _, t := range j.report.Executions.Examples {
			out = append(out, traceExample(t))
		}
		return out
	}
	if refs != nil {
		out := make([]Example, 0, len(refs))
		for _, ref := range refs {
			out = append(out, spanExample(ref))
		}
		return out
	}
	if rest, ok := strings.CutPrefix(name, readsPrefix); ok {
		mname := rest[:strings.LastIndexByte(rest, '.')]
		for _, m := range j.report.Measures {
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

// capExamples sorts and de-duplicates examples and keeps the first max.
func (j *judge) capExamples(ex []Example) []Example {
	slices.SortFunc(ex, func(a, b Example) int {
		return cmp.Or(cmp.Compare(a.TraceID, b.TraceID), cmp.Compare(a.SpanID, b.SpanID))
	})
	ex = slices.CompactFunc(ex, func(a, b Example) bool { return a.TraceID == b.TraceID && a.SpanID == b.SpanID })
	if len(ex) > j.max {
		ex = ex[:j.max]
	}
	if ex == nil {
		ex = []Example{}
	}
	return ex
}

// scopeNoun names a rule's scopes in the plural for messages.
func scopeNoun(s rulefmt.Scope) string {
	switch s.Kind {
	case rulefmt.ScopeDump:
		return "dump"
	case rulefmt.ScopeTrace:
		return "traces"
	}
	return "subtrees"
}

// foundText says in words what a rule found: per scope, how many held and
// which figures failed in how many, or for the dump, its measures and
// failing counts.
func foundText(r *rulefmt.Rule, res RuleResult, t *ruleTally) string {
	var parts []string
	if r.Scope.Kind == rulefmt.ScopeDump && len(t.measureFound) > 0 {
		parts = append(parts, strings.Join(t.measureFound, ", "))
	}
	keys := make([]string, 0, len(t.fails))
	for k := range t.fails {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if r.Scope.Kind != rulefmt.ScopeDump {
		parts = scopesFoundText(parts, r.Scope, res, t.fails, keys)
		if t.waiting > 0 {
			parts[len(parts)-1] += ": " + waitingText(r, t.waiting, t.missingParent)
		}
	} else {
		parts = dumpFoundText(parts, r, res, keys, t.measureFound)
	}
	return strings.Join(parts, "; ")
}

// waitingText says what a rule's waiting scopes wait for: of waiting,
// missingParent wait for a parent span the dump lacks, the rest for a
// span matching the rule's complete_when.
func waitingText(r *rulefmt.Rule, waiting, missingParent int) string {
	parent := "a parent span the dump lacks"
	if r.CompleteWhen == nil || missingParent >= waiting {
		return "waiting for " + parent
	}
	when := "a span matching complete_when [" + r.CompleteWhen.String() + "]"
	if missingParent == 0 {
		return "waiting for " + when
	}
	return fmt.Sprintf("%d waiting for %s, %d for %s", missingParent, parent, waiting-missingParent, when)
}

// scopesFoundText appends to parts what a rule over traces or subtrees
// found: that it held in all judged, or each failing figure (keys, sorted)
// with how many of the judged scopes it failed in, and how many were
// incomplete.
func scopesFoundText(parts []string, scope rulefmt.Scope, res RuleResult, fails map[string]int, keys []string) []string {
	judged := res.Scopes - res.Incomplete
	switch {
	case res.Scopes == 0:
		parts = append(parts, "no "+scopeNoun(scope)+" to judge")
	case res.Failed == 0 && judged > 0:
		parts = append(parts, fmt.Sprintf("holds in all %d %s judged", judged, scopeNoun(scope)))
	}
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s in %d of %d %s", k, fails[k], judged, scopeNoun(scope)))
	}
	if res.Incomplete > 0 {
		parts = append(parts, fmt.Sprintf("%d incomplete, not judged", res.Incomplete))
	}
	return parts
}

// dumpFoundText appends to parts what a rule over the whole dump found:
// its failing counts (keys, sorted), and when nothing failed and no
// measure was found, that it holds or that the dump is incomplete.
func dumpFoundText(parts []string, r *rulefmt.Rule, res RuleResult, keys, measureFound []string) []string {
	for _, k := range keys {
		if strings.HasPrefix(k, rulefmt.QuantityCount) || strings.HasPrefix(k, rulefmt.QuantityDistinct) {
			parts = append(parts, k)
		}
	}
	if res.Failed == 0 && len(measureFound) == 0 {
		if res.Incomplete > 0 {
			parts = append(parts, "the dump is incomplete: no span matches complete_when ["+completeWhenText(r)+"]")
		} else {
			parts = append(parts, "holds")
		}
	}
	return parts
}

// ExpectedText says in words what a rule wants, for reports and
// `mcptrace rules --explain`.
func ExpectedText(r *rulefmt.Rule) string {
	var conds []string
	for _, ex := range r.Expect {
		s := ex.String()
		sel := ex.Select
		if sel == nil && !ex.IsMeasure() {
			sel = r.Select
		}
		if sel != nil && !ex.IsMeasure() {
			s += " of [" + sel.String() + "]"
		}
		conds = append(conds, s)
	}
	where := "in the dump"
	switch r.Scope.Kind {
	case rulefmt.ScopeTrace:
		where = "in every trace"
	case rulefmt.ScopeSubtree:
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
func ExplainRule(r *rulefmt.Rule) string {
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
	case rulefmt.ScopeDump:
		b.WriteString("  Judged once over the whole dump.\n")
	case rulefmt.ScopeTrace:
		b.WriteString("  Judged for each trace on its own.\n")
	case rulefmt.ScopeSubtree:
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
	} else if r.Scope.Kind != rulefmt.ScopeDump {
		b.WriteString("  A trace with a missing parent span is incomplete and not judged.\n")
	}
	if n := r.AllNeeds(); n != 0 {
		fmt.Fprintf(&b, "  Applies only where the writer's spans show %s; elsewhere it is not applicable, saying why.\n", strings.Join(n.Names(), ", "))
	}
	if r.Severity == rulefmt.SeverityError {
		b.WriteString("  A failure fails the check (exit 1).\n")
	} else {
		b.WriteString("  A failure is reported as a warning only.\n")
	}
	return b.String()
}

var opWords = map[rulefmt.Op]string{rulefmt.OpEq: "to equal", rulefmt.OpNe: "to differ from", rulefmt.OpLt: "to be below", rulefmt.OpLe: "to be at most", rulefmt.OpGt: "to be above", rulefmt.OpGe: "to be at least"}

func explainExpectation(ex rulefmt.Expectation) string {
	var subject string
	switch ex.Of {
	case rulefmt.QuantityCount:
		subject = "the number of such spans"
	case rulefmt.QuantityDistinct:
		subject = "the number of distinct values of " + ex.Attribute + " over them"
	case rulefmt.QuantityPoolSessions:
		subject = "the number of sessions the pool chose for them (distinct " + spans.AttrSessionID + ", a session the server forgot counted with the one the redial moved to)"
	case rulefmt.QuantityLostSessions:
		subject = "the number of their sessions the server forgot mid-way (a call failed " + spans.ErrTypeSessionExpired + " and later calls ran on another session)"
	default:
		subject = "the measure " + ex.Of
	}
	if ex.Select != nil {
		subject += " (spans matching [" + ex.Select.String() + "])"
	}
	s := subject + " " + opWords[ex.Op] + " " + ex.Than.String()
	if ex.Tolerance > 0 {
		s += ", within " + textfmt.Figure(ex.Tolerance)
	}
	return s
}

// completeWhenText is r's complete_when as reports show a selector.
func completeWhenText(r *rulefmt.Rule) string {
	if r.CompleteWhen == nil {
		return ""
	}
	return r.CompleteWhen.String()
}
