package ruleobs

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// negated is the operator that finds violations of op.
var negated = map[rulefmt.Op]string{rulefmt.OpEq: "!=", rulefmt.OpNe: "=", rulefmt.OpLt: ">=", rulefmt.OpLe: ">", rulefmt.OpGt: "<=", rulefmt.OpGe: "<"}

// ruleTraceQL is a query finding what a rule looks at, narrowed to its
// offenders where TraceQL can say so: a per-trace count becomes
// "| count() <violating op> N", a latency bound a duration condition.
func (e *Eval) ruleTraceQL(r *rulefmt.Rule) string {
	ex := r.Expect[0]
	if ex.IsMeasure() {
		return e.measureTraceQL(ex)
	}
	sel := ex.Select
	if sel == nil {
		sel = r.Select
	}
	q := e.callsTraceQL(sel)
	if ex.Of == rulefmt.QuantityLostSessions {
		// The offenders are the calls the server answered "session expired".
		q = strings.TrimSuffix(q, " }") + fmt.Sprintf(" && span.%s = %q }", spans.AttrErrorType, spans.ErrTypeSessionExpired)
	}
	if r.Scope.Kind == rulefmt.ScopeSubtree && sel.Under == nil && sel.NotUnder == nil {
		q = r.Scope.Root.TraceQL() + " >> " + q
	}
	if r.Scope.Kind == rulefmt.ScopeTrace && ex.Of == rulefmt.QuantityCount && ex.Than.Measure == "" && ex.Tolerance == 0 {
		q += " | count() " + negated[ex.Op] + " " + rulefmt.FormatNumber(ex.Than.Number)
	}
	if ex.Of == rulefmt.QuantityPoolSessions {
		// TraceQL cannot count distinct sessions (count() counts spans, so
		// "| count() > 1" matched every trace of two calls): grouped by
		// session, an offending execution shows as several spansets.
		q += " | by(span." + spans.AttrSessionID + ")"
	}
	return q
}

func (e *Eval) measureTraceQL(ex rulefmt.Expectation) string {
	acquire := fmt.Sprintf("name = %q", spans.SpanAcquire)
	miss := fmt.Sprintf("{ %s && span.%s = false }", acquire, spans.AttrCacheHit)
	calls := fmt.Sprintf("{ span.%s = %q && span.%s != nil }", spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID)
	switch ex.Of {
	case "unexplained_misses":
		return spans.TraceQLUnexplainedMiss
	case "excess_misses", "misses", "hit_rate", "handshakes", "cold_start_floor", "acquires", "hits":
		return miss
	case "multi_session_executions", "max_sessions_per_execution":
		return calls
	}
	if rest, ok := strings.CutPrefix(ex.Of, "measures."); ok {
		name := rest[:strings.LastIndexByte(rest, '.')]
		for _, m := range e.Cfg.Measures {
			if m.Name == name {
				return m.Root.TraceQL() + " >> " + m.Read.TraceQL()
			}
		}
		return "{ }"
	}
	series, _, _ := strings.Cut(ex.Of, ".")
	var base string
	switch series {
	case "acquire_hit":
		base = fmt.Sprintf("%s && span.%s = true", acquire, spans.AttrCacheHit)
	case "acquire_miss":
		base = fmt.Sprintf("%s && span.%s = false", acquire, spans.AttrCacheHit)
	case "handshake":
		base = fmt.Sprintf("name = %q", spans.SpanHandshake)
	default:
		base = fmt.Sprintf("span.%s = %q", spans.AttrMethodName, spans.MethodToolsCall)
	}
	if ex.Than.Measure == "" && (ex.Op == rulefmt.OpLt || ex.Op == rulefmt.OpLe) {
		base += " && duration > " + rulefmt.FormatNumber(ex.Than.Number+ex.Tolerance) + "ms"
	}
	return "{ " + base + " }"
}

// callsTraceQL renders sel, whose Calls (when set) stand for the
// vocabulary's first call selector: the query finds the spans the rule
// judged, in the words of the writer read.
func (e *Eval) callsTraceQL(sel *rulefmt.SpanSelector) string {
	if !sel.Calls {
		return sel.TraceQL()
	}
	s := *sel // TraceQL reads no Calls: the call selector's words stand in
	if calls := e.Cfg.ActiveVocabulary().Calls; len(calls) > 0 {
		c := calls[0]
		s.Name, s.NameRegex = cmp.Or(s.Name, c.Name), cmp.Or(s.NameRegex, c.NameRegex)
		s.Attributes = slices.Concat(c.Attributes, s.Attributes) // new slices: the vocabulary's stay as they are
		s.Resource = slices.Concat(c.Resource, s.Resource)
		s.Kind, s.Status = cmp.Or(s.Kind, c.Kind), cmp.Or(s.Status, c.Status)
	}
	return s.TraceQL()
}
