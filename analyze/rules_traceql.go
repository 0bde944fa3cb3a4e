package analyze

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// TraceQL renders a selector as the conditions of a Grafana Tempo TraceQL
// spanset, for instance
// { name = "plugin.mcp.connection.acquire" && span.plugin.mcp.cache_hit = false }.
// Attribute values true, false and integers are written unquoted, since the
// vocabulary's booleans and integers are typed attributes; other values are
// quoted strings.
func (s Selector) TraceQL() string {
	var conds []string
	if s.Name != "" {
		conds = append(conds, "name = "+strconv.Quote(s.Name))
	}
	if s.NameRegex != nil {
		conds = append(conds, "name =~ "+strconv.Quote(s.NameRegex.String()))
	}
	for _, m := range s.Attributes {
		conds = append(conds, attrTraceQL("span."+m.Key, m))
	}
	for _, m := range s.Resource {
		conds = append(conds, attrTraceQL("resource."+m.Key, m))
	}
	if s.Kind != "" {
		conds = append(conds, "kind = "+s.Kind)
	}
	if s.Status != "" {
		conds = append(conds, "status = "+s.Status)
	}
	if len(conds) == 0 {
		return "{ }"
	}
	return "{ " + strings.Join(conds, " && ") + " }"
}

var traceQLBare = regexp.MustCompile(`^(true|false|-?[0-9]+)$`)

func traceQLValue(v string) string {
	if traceQLBare.MatchString(v) {
		return v
	}
	return strconv.Quote(v)
}

func attrTraceQL(key string, m AttrMatch) string {
	switch m.Op {
	case OpEquals:
		return key + " = " + traceQLValue(m.Value)
	case OpNotEquals:
		return key + " != " + traceQLValue(m.Value)
	case OpRegex:
		return key + " =~ " + strconv.Quote(m.Regex.String())
	case OpExists:
		return key + " != nil"
	case OpAbsent:
		return key + " = nil"
	}
	return "true"
}

// TraceQL renders the selection with its ancestor conditions as structural
// operators: { under } >> { span } and { not_under } !>> { span } (the
// negated operator needs a Tempo with experimental structural negation).
func (s SpanSelector) TraceQL() string {
	self := s.Selector.TraceQL()
	var parts []string
	if s.Under != nil {
		parts = append(parts, s.Under.TraceQL()+" >> "+self)
	}
	if s.NotUnder != nil {
		parts = append(parts, s.NotUnder.TraceQL()+" !>> "+self)
	}
	if len(parts) == 0 {
		return self
	}
	return strings.Join(parts, " && ")
}

// negated is the operator that finds violations of op.
var negated = map[Op]string{OpEq: "!=", OpNe: "=", OpLt: ">=", OpLe: ">", OpGt: "<=", OpGe: "<"}

// ruleTraceQL is a query finding what a rule looks at, narrowed to its
// offenders where TraceQL can say so: a per-trace count becomes
// "| count() <violating op> N", a latency bound a duration condition.
func (e *ruleEval) ruleTraceQL(r *Rule) string {
	ex := r.Expect[0]
	if ex.IsMeasure() {
		return e.measureTraceQL(ex)
	}
	sel := ex.Select
	if sel == nil {
		sel = r.Select
	}
	q := e.callsTraceQL(sel)
	if ex.Of == QuantityLostSessions {
		// The offenders are the calls the server answered "session expired".
		q = strings.TrimSuffix(q, " }") + fmt.Sprintf(" && span.%s = %q }", spans.AttrErrorType, spans.ErrTypeSessionExpired)
	}
	if r.Scope.Kind == ScopeSubtree && sel.Under == nil && sel.NotUnder == nil {
		q = r.Scope.Root.TraceQL() + " >> " + q
	}
	if r.Scope.Kind == ScopeTrace && ex.Of == QuantityCount && ex.Than.Measure == "" && ex.Tolerance == 0 {
		q += " | count() " + negated[ex.Op] + " " + formatNumber(ex.Than.Number)
	}
	return q
}

func (e *ruleEval) measureTraceQL(ex Expectation) string {
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
		for _, m := range e.cfg.Measures {
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
	if ex.Than.Measure == "" && (ex.Op == OpLt || ex.Op == OpLe) {
		base += " && duration > " + formatNumber(ex.Than.Number+ex.Tolerance) + "ms"
	}
	return "{ " + base + " }"
}

// callsTraceQL renders sel, whose Calls (when set) stand for the
// vocabulary's first call selector: the query finds the spans the rule
// judged, in the words of the writer read.
func (e *ruleEval) callsTraceQL(sel *SpanSelector) string {
	if !sel.Calls {
		return sel.TraceQL()
	}
	s := *sel
	s.Calls = false
	if calls := e.cfg.vocabulary().Calls; len(calls) > 0 {
		c := calls[0]
		s.Name, s.NameRegex = cmp.Or(s.Name, c.Name), cmp.Or(s.NameRegex, c.NameRegex)
		s.Attributes = append(slices.Clone(c.Attributes), s.Attributes...)
		s.Resource = append(slices.Clone(c.Resource), s.Resource...)
		s.Kind, s.Status = cmp.Or(s.Kind, c.Kind), cmp.Or(s.Status, c.Status)
	}
	return s.TraceQL()
}
