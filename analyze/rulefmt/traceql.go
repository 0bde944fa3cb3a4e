package rulefmt

import (
	"regexp"
	"strconv"
	"strings"
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
