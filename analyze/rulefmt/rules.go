package rulefmt

import (
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/mcptrace/mcptrace/spans"
)

// Severity says what a failing rule does to the CI gate: an error fails the
// build (exit 1), a warning is reported and annotated but never fails it.
type Severity string

// The rule severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// ScopeKind is the unit a rule is judged on: each one gets its own verdict,
// and the rule fails when any complete one fails.
type ScopeKind string

// The rule scopes.
const (
	// ScopeDump judges the whole dump at once; measure expectations need it.
	ScopeDump ScopeKind = "dump"
	// ScopeTrace judges each trace on its own.
	ScopeTrace ScopeKind = "trace"
	// ScopeSubtree judges each span matching Scope.Root with everything
	// beneath it (a request, an invocation, an execution).
	ScopeSubtree ScopeKind = "subtree"
)

// Scope is where a rule counts. Root is set for ScopeSubtree only.
type Scope struct {
	Kind ScopeKind
	Root *Selector
}

// String renders the scope in words for reports: "dump", "trace" or
// "subtree of name=plugin.mcp.invoke".
func (s Scope) String() string {
	if s.Kind == ScopeSubtree && s.Root != nil {
		return "subtree of " + s.Root.String()
	}
	return string(s.Kind)
}

// SpanSelector is a rule's selection: a [Selector] on the span itself plus
// conditions on its ancestors. Under holds when an ancestor matches, NotUnder
// when none does; within a subtree scope only ancestors below the subtree's
// root are considered, as a reads-per-request measure's not_under does.
type SpanSelector struct {
	Selector
	Under    *Selector
	NotUnder *Selector
}

// String renders the selection compactly, for instance
// name=plugin.mcp.connection.handshake under(name=plugin.mcp.connection.acquire).
func (s SpanSelector) String() string {
	out := s.Selector.String()
	if s.Under != nil {
		out += " under(" + s.Under.String() + ")"
	}
	if s.NotUnder != nil {
		out += " not_under(" + s.NotUnder.String() + ")"
	}
	return out
}

// Op is a comparison operator of an expectation.
type Op string

// The comparison operators.
const (
	OpEq Op = "=="
	OpNe Op = "!="
	OpLt Op = "<"
	OpLe Op = "<="
	OpGt Op = ">"
	OpGe Op = ">="
)

// Ops lists the operators in documentation order.
var Ops = []Op{OpEq, OpNe, OpLt, OpLe, OpGt, OpGe}

// Quantities an expectation can compare, besides the dump-level measures of
// [MeasureNames].
const (
	// QuantityCount is the number of selected spans in a scope.
	QuantityCount = "count"
	// QuantityDistinct is the number of distinct values of Attribute over
	// the selected spans of a scope (spans without it do not count).
	QuantityDistinct = "distinct"
	// QuantityPoolSessions is the number of distinct mcp.session.id values
	// over the selected spans, where a session the server forgot mid-scope
	// (a selected span on it failed with error.type session_expired and a
	// later one ran on another session: the pool's transparent redial)
	// counts together with its successor. It is what the pool chose: more
	// than one is a split the pool caused.
	QuantityPoolSessions = "pool_sessions"
	// QuantityLostSessions is the number of sessions the server forgot
	// mid-scope (as above): each is execution state the server lost, which
	// no pool can prevent.
	QuantityLostSessions = "lost_sessions"
)

// spanQuantities are the quantities counted over a scope's selected spans
// rather than read from the dump's measures.
var spanQuantities = []string{QuantityCount, QuantityDistinct, QuantityPoolSessions, QuantityLostSessions}

// SpanQuantities lists what a rule counts over its selected spans (count,
// distinct, pool_sessions, lost_sessions), beside the measures a rule may
// name instead (MeasureNames). The caller owns the slice.
func SpanQuantities() []string { return slices.Clone(spanQuantities) }

// Operand is the right-hand side of an expectation: a number, or the name of
// a dump-level measure (see [MeasureNames]).
type Operand struct {
	Number  float64
	Measure string // set instead of Number
}

// String renders the operand as written in a rule file.
func (o Operand) String() string {
	if o.Measure != "" {
		return o.Measure
	}
	return FormatNumber(o.Number)
}

// Expectation is one comparison a rule's scopes must satisfy:
// Of Op Than, loosened by Tolerance (see [Expectation.Holds]).
type Expectation struct {
	// Of is count, distinct, or a measure name ([MeasureNames]).
	Of string
	// Attribute is the attribute whose values distinct counts.
	Attribute string
	// Select, when set, replaces the rule's selection for this expectation.
	Select *SpanSelector
	// Op compares Of with Than.
	Op Op
	// Than is the bound: a number or a measure.
	Than Operand
	// Tolerance loosens the comparison by this absolute amount (0: exact).
	Tolerance float64
	// Line and Column locate the expectation in its file.
	Line, Column int
}

// String renders the expectation in the rule language, for instance
// "distinct(mcp.session.id) == 1" or "hit_rate >= 0.8 ±0.05".
func (e Expectation) String() string {
	s := e.Of
	switch e.Of {
	case QuantityDistinct:
		s = "distinct(" + e.Attribute + ")"
	case QuantityPoolSessions, QuantityLostSessions:
		s = e.Of + "(" + spans.AttrSessionID + ")"
	}
	s += " " + string(e.Op) + " " + e.Than.String()
	if e.Tolerance > 0 {
		s += " ±" + FormatNumber(e.Tolerance)
	}
	return s
}

// Holds reports whether got Op bound holds once loosened by the tolerance:
// == holds within ±tolerance, != beyond it, and <, <=, >, >= move the bound
// by the tolerance in the lenient direction.
func (e Expectation) Holds(got, bound float64) bool {
	t := e.Tolerance
	const eps = 1e-9 // float noise of ratios such as 5/6
	switch e.Op {
	case OpEq:
		return math.Abs(got-bound) <= t+eps
	case OpNe:
		return math.Abs(got-bound) > t+eps
	case OpLt:
		return got < bound+t-eps
	case OpLe:
		return got <= bound+t+eps
	case OpGt:
		return got > bound-t+eps
	case OpGe:
		return got >= bound-t-eps
	}
	return false
}

// IsMeasure reports whether the expectation compares a dump-level measure
// of the Report rather than a quantity counted over a scope's spans.
func (e Expectation) IsMeasure() bool { return !slices.Contains(spanQuantities, e.Of) }

// Rule is one invariant of the CI gate, from the rules: list of a
// configuration file or from [BuiltinRules].
type Rule struct {
	// ID names the rule in every report; unique within a file.
	ID string
	// Description says in words what the rule protects, and why.
	Description string
	// Severity is error (fails the gate) or warning.
	Severity Severity
	// Scope is where the rule counts.
	Scope Scope
	// Select picks the spans count and distinct expectations look at; nil
	// when every expectation compares a measure.
	Select *SpanSelector
	// Expect are the comparisons; every one must hold in every complete
	// scope.
	Expect []Expectation
	// CompleteWhen, when set, must match a span of a scope's trace (of the
	// dump for ScopeDump) before the scope is judged; a trace with a missing
	// parent is never judged either. An unjudged scope is incomplete.
	CompleteWhen *Selector
	// SkipEmpty leaves out scopes where the selection matches no span: a
	// trace without tool calls is not an execution to judge.
	SkipEmpty bool
	// AllowEmpty lets the rule pass when it has nothing to judge: no scope
	// at all (no trace, no subtree root, every scope skipped by SkipEmpty),
	// or, for ScopeDump, a dump without a single span of the profile's pool
	// vocabulary. Without it such a rule is incomplete, never a pass: a gate
	// must not go green on a dump that measured nothing.
	AllowEmpty bool
	// SkipSessionless leaves out selected spans against a sessionless server
	// (see [SessionlessProtocol]), and scopes holding only such spans: a
	// session rule does not apply where the protocol has no sessions.
	SkipSessionless bool
	// Builtin is true for the rules of [BuiltinRules].
	Builtin bool
	// Line and Column locate the rule in its file (0 for built-ins).
	Line, Column int
}

// --- measures a rule can name ---

// --- parsing ---

var ruleID = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// GateConfig is the CI gate's part of a configuration file: its rules and
// the regression tolerances. The reads-per-request measures of the same file
// are in Measures, since rules may name them.
type GateConfig struct {
	// Path is the file the configuration came from.
	Path string
	// Measures are the file's measures: entries.
	Measures []ReadMeasure
	// Rules are the file's rules: entries, in file order.
	Rules []Rule
	// Tolerances are the file's regressions: settings over the defaults.
	Tolerances Tolerances
	// Builtin holds the file's builtin: settings, a severity per built-in
	// rule id (error, warning or off); nil without the key. A file with
	// builtin: applies the built-in rules besides its own.
	Builtin map[string]Severity
	// Vocabulary is the file's vocabulary: block, the writer its dumps
	// come from; nil without the key.
	Vocabulary *Vocabulary
}

// SeverityOff, in a builtin: setting, leaves a built-in rule out.
const SeverityOff Severity = "off"

// ApplyBuiltin returns rules with the file's builtin: severities applied to
// the built-in ones, leaving out those set to off.
func (gc *GateConfig) ApplyBuiltin(rules []Rule) []Rule {
	if gc == nil || gc.Builtin == nil {
		return rules
	}
	out := rules[:0:0]
	for _, r := range rules {
		if sev, ok := gc.Builtin[r.ID]; ok && r.Builtin {
			if sev == SeverityOff {
				continue
			}
			r.Severity = sev
		}
		out = append(out, r)
	}
	return out
}

// LoadGateConfig reads the configuration file at path: measures, rules and
// regression tolerances.
func LoadGateConfig(path string) (*GateConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return ParseGateConfig(path, data)
}

// ParseGateConfig parses configuration file data (path names it in errors):
// the measures: list as [ParseConfig] does, the rules: list and the
// regressions: tolerances. Unknown keys, measures and operators, bad
// selectors and repeated ids are a *ConfigError with file, line and column.
func ParseGateConfig(path string, data []byte) (*GateConfig, error) {
	gc := &GateConfig{Path: path, Tolerances: DefaultTolerances()}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(path, data, err)
	}
	if err := checkConfigDepth(path, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return gc, nil
	}
	root := doc.Content[0]
	var rulesNode, tolNode *yaml.Node
	// Every mistake of the file is reported at once, each with its place:
	// a section's error does not stop the others from being checked.
	var errs ConfigErrors
	note := func(err error) {
		var ces ConfigErrors
		var ce *ConfigError
		switch {
		case err == nil:
		case errors.As(err, &ces):
			errs = append(errs, ces...)
		case errors.As(err, &ce):
			errs = append(errs, ce)
		default:
			errs = append(errs, &ConfigError{Msg: err.Error()})
		}
	}
	note(eachKey(root, []string{"measures", "rules", "regressions", "builtin", "vocabulary"}, func(key string, _, v *yaml.Node) error {
		switch key {
		case "measures":
			ms, err := parseMeasures(v)
			gc.Measures = ms
			note(err)
		case "rules":
			rulesNode = v
		case "regressions":
			tolNode = v
		case "builtin":
			b, err := parseBuiltin(v)
			gc.Builtin = b
			note(err)
		case "vocabulary":
			voc, err := parseVocabulary(v)
			gc.Vocabulary = voc
			note(err)
		}
		return nil
	}))
	if rulesNode != nil {
		var err error
		gc.Rules, err = parseRules(rulesNode, gc.Measures)
		note(err)
	}
	if tolNode != nil {
		note(parseTolerances(tolNode, &gc.Tolerances))
	}
	if len(errs) > 0 {
		for _, ce := range errs {
			ce.File = path
		}
		if len(errs) == 1 {
			return nil, errs[0]
		}
		return nil, errs
	}
	return gc, nil
}

// ConfigErrors are every mistake found in one configuration file, in file
// order, each with its file:line:column.
type ConfigErrors []*ConfigError

// Error renders one mistake per line.
func (es ConfigErrors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap returns the mistakes, so errors.As finds the first *ConfigError.
func (es ConfigErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// parseBuiltin reads builtin: {RULE-ID: error|warning|off, ...}.
func parseBuiltin(n *yaml.Node) (map[string]Severity, error) {
	ids := make([]string, 0, 8)
	for _, r := range BuiltinRules(Config{}) {
		ids = append(ids, r.ID)
	}
	out := map[string]Severity{}
	err := eachKey(n, ids, func(key string, _, v *yaml.Node) error {
		s, err := scalarString(v, key)
		if err != nil {
			return err
		}
		switch Severity(s) {
		case SeverityError, SeverityWarning, SeverityOff:
			out[key] = Severity(s)
			return nil
		}
		return nodeErrorf(v, "builtin %s: severity %q: want error, warning or off", key, s)
	})
	return out, err
}

func parseRules(n *yaml.Node, measures []ReadMeasure) ([]Rule, error) {
	if n.Kind != yaml.SequenceNode {
		return nil, nodeErrorf(n, "rules must be a list of {id, description, severity, scope, select, expect, complete_when, skip_empty, allow_empty, skip_sessionless}")
	}
	known := MeasureNames(measures)
	var out []Rule
	var errs ConfigErrors
	where := map[string]int{}
	for _, item := range n.Content {
		r, err := parseRule(item, known)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				return nil, err
			}
			errs = append(errs, ce)
			continue
		}
		if line, dup := where[r.ID]; dup {
			errs = append(errs, &ConfigError{Line: r.Line, Column: r.Column, Msg: fmt.Sprintf("rule %q already defined at line %d", clipInput(r.ID), line)})
			continue
		}
		where[r.ID] = r.Line
		out = append(out, r)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

func parseRule(item *yaml.Node, known []string) (Rule, error) {
	r := Rule{Severity: SeverityError, Scope: Scope{Kind: ScopeTrace}, Line: item.Line, Column: item.Column}
	var expectNode *yaml.Node
	err := eachKey(item, []string{"id", "description", "severity", "scope", "select", "expect", "complete_when", "skip_empty", "allow_empty", "skip_sessionless"}, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "id":
			if r.ID, err = scalarString(v, "id"); err != nil {
				return err
			}
			if !ruleID.MatchString(r.ID) {
				return nodeErrorf(v, "rule id %q: use letters, digits, '_', '.' or '-'", r.ID)
			}
		case "description":
			r.Description, err = scalarString(v, "description")
		case "severity":
			var s string
			if s, err = scalarString(v, "severity"); err != nil {
				return err
			}
			if s != string(SeverityError) && s != string(SeverityWarning) {
				return nodeErrorf(v, "severity %q: want error or warning", s)
			}
			r.Severity = Severity(s)
		case "scope":
			r.Scope, err = parseScope(v)
		case "select":
			var s SpanSelector
			if s, err = parseSpanSelector(v); err == nil {
				r.Select = &s
			}
		case "expect":
			expectNode = v
		case "complete_when":
			var s Selector
			if s, err = ParseSelector(v); err == nil {
				r.CompleteWhen = &s
			}
		case "skip_empty":
			if v.Kind != yaml.ScalarNode || v.Decode(&r.SkipEmpty) != nil {
				return nodeErrorf(v, "skip_empty must be true or false")
			}
		case "allow_empty":
			if v.Kind != yaml.ScalarNode || v.Decode(&r.AllowEmpty) != nil {
				return nodeErrorf(v, "allow_empty must be true or false")
			}
		case "skip_sessionless":
			if v.Kind != yaml.ScalarNode || v.Decode(&r.SkipSessionless) != nil {
				return nodeErrorf(v, "skip_sessionless must be true or false")
			}
		}
		return err
	})
	if err != nil {
		return Rule{}, err
	}
	if r.ID == "" {
		return Rule{}, nodeErrorf(item, "rule needs an id")
	}
	if expectNode == nil {
		return Rule{}, nodeErrorf(item, "rule %q needs expect: a comparison such as {of: count, op: \"==\", than: 1}", r.ID)
	}
	if r.Expect, err = parseExpectations(expectNode, known); err != nil {
		return Rule{}, err
	}
	for _, e := range r.Expect {
		switch {
		case e.IsMeasure() && r.Scope.Kind != ScopeDump:
			return Rule{}, &ConfigError{Line: e.Line, Column: e.Column, Msg: fmt.Sprintf("rule %q: measure %s is a dump-wide figure: use scope: dump", clipInput(r.ID), e.Of)}
		case !e.IsMeasure() && e.Select == nil && r.Select == nil:
			return Rule{}, &ConfigError{Line: e.Line, Column: e.Column, Msg: fmt.Sprintf("rule %q: %s needs a selection: give select: on the rule or the expectation", clipInput(r.ID), e.Of)}
		}
	}
	return r, nil
}

// parseScope reads dump, trace, or {subtree: SELECTOR}.
func parseScope(v *yaml.Node) (Scope, error) {
	if v.Kind == yaml.ScalarNode {
		switch v.Value {
		case string(ScopeDump), string(ScopeTrace):
			return Scope{Kind: ScopeKind(v.Value)}, nil
		}
		return Scope{}, nodeErrorf(v, "scope %q: want dump, trace or {subtree: SELECTOR}", v.Value)
	}
	var sc Scope
	err := eachKey(v, []string{"subtree"}, func(_ string, _, sv *yaml.Node) error {
		sel, err := ParseSelector(sv)
		if err == nil {
			sc = Scope{Kind: ScopeSubtree, Root: &sel}
		}
		return err
	})
	if err == nil && sc.Root == nil {
		err = nodeErrorf(v, "scope: want dump, trace or {subtree: SELECTOR}")
	}
	return sc, err
}

// parseSpanSelector reads a selector mapping that may also hold under and
// not_under (each a selector), or a plain span name.
func parseSpanSelector(v *yaml.Node) (SpanSelector, error) {
	var out SpanSelector
	if v.Kind != yaml.MappingNode {
		sel, err := ParseSelector(v)
		out.Selector = sel
		return out, err
	}
	own := &yaml.Node{Kind: yaml.MappingNode, Tag: v.Tag, Line: v.Line, Column: v.Column, Style: v.Style}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i], v.Content[i+1]
		if k.Kind == yaml.ScalarNode && (k.Value == "under" || k.Value == "not_under") {
			if (k.Value == "under" && out.Under != nil) || (k.Value == "not_under" && out.NotUnder != nil) {
				return out, nodeErrorf(k, "key %q given twice", k.Value)
			}
			sel, err := ParseSelector(val)
			if err != nil {
				return out, err
			}
			if k.Value == "under" {
				out.Under = &sel
			} else {
				out.NotUnder = &sel
			}
			continue
		}
		own.Content = append(own.Content, k, val)
	}
	if len(own.Content) == 0 {
		return out, nodeErrorf(v, "select needs a condition on the span itself (name, name_regex, attributes, resource, kind or status) besides under/not_under")
	}
	sel, err := ParseSelector(own)
	if err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) && strings.HasPrefix(ce.Msg, "unknown key") {
			ce.Msg = strings.TrimSuffix(ce.Msg, "status") + "status, under, not_under"
		}
		return out, err
	}
	out.Selector = sel
	return out, nil
}

// parseExpectations reads one expectation mapping or a list of them.
func parseExpectations(v *yaml.Node, known []string) ([]Expectation, error) {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
		if len(items) == 0 {
			return nil, nodeErrorf(v, "expect: give at least one comparison")
		}
	}
	var out []Expectation
	for _, it := range items {
		e, err := parseExpectation(it, known)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

func parseExpectation(n *yaml.Node, known []string) (Expectation, error) {
	e := Expectation{Line: n.Line, Column: n.Column}
	var thanSet bool
	err := eachKey(n, []string{"of", "attribute", "select", "op", "than", "tolerance"}, func(key string, _, v *yaml.Node) error {
		var err error
		switch key {
		case "of":
			if e.Of, err = scalarString(v, "of"); err != nil {
				return err
			}
			if !slices.Contains(spanQuantities, e.Of) && !slices.Contains(known, e.Of) {
				return nodeErrorf(v, "unknown measure %q: want count, distinct, pool_sessions, lost_sessions or one of %s", e.Of, strings.Join(known, ", "))
			}
		case "attribute":
			e.Attribute, err = scalarString(v, "attribute")
		case "select":
			var s SpanSelector
			if s, err = parseSpanSelector(v); err == nil {
				e.Select = &s
			}
		case "op":
			var s string
			if s, err = scalarString(v, "op"); err != nil {
				return err
			}
			if !slices.Contains(Ops, Op(s)) {
				return nodeErrorf(v, "unknown operator %q: want one of == != < <= > >= (quote it in YAML)", s)
			}
			e.Op = Op(s)
		case "than":
			thanSet = true
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				return nodeErrorf(v, "than must be a number or a measure name")
			}
			if f, perr := strconv.ParseFloat(v.Value, 64); perr == nil && v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0 {
				if math.IsNaN(f) || math.IsInf(f, 0) {
					return nodeErrorf(v, "than must be a finite number")
				}
				e.Than = Operand{Number: f}
				return nil
			}
			if !slices.Contains(known, v.Value) {
				return nodeErrorf(v, "unknown measure %q in than: want a number or one of %s", v.Value, strings.Join(known, ", "))
			}
			e.Than = Operand{Measure: v.Value}
		case "tolerance":
			if v.Kind != yaml.ScalarNode || v.Decode(&e.Tolerance) != nil || e.Tolerance < 0 || math.IsInf(e.Tolerance, 0) || math.IsNaN(e.Tolerance) {
				return nodeErrorf(v, "tolerance must be a number, 0 or more")
			}
		}
		return err
	})
	if err != nil {
		return e, err
	}
	switch {
	case e.Of == "":
		return e, nodeErrorf(n, "expectation needs of: count, distinct or a measure")
	case e.Op == "":
		return e, nodeErrorf(n, "expectation needs op: one of == != < <= > >=")
	case !thanSet:
		return e, nodeErrorf(n, "expectation needs than: a number or a measure")
	case (e.Of == QuantityPoolSessions || e.Of == QuantityLostSessions) && e.Attribute != "":
		return e, nodeErrorf(n, "%s counts %s; attribute goes with of: distinct only", e.Of, spans.AttrSessionID)
	case e.Of == QuantityDistinct && e.Attribute == "":
		return e, nodeErrorf(n, "distinct needs attribute: the attribute whose values are counted")
	case e.Of != QuantityDistinct && e.Attribute != "":
		return e, nodeErrorf(n, "attribute goes with of: distinct only")
	case e.IsMeasure() && e.Select != nil:
		return e, nodeErrorf(n, "select goes with count and distinct, not with measure %s", e.Of)
	}
	return e, nil
}

// FormatNumber renders a number without trailing zeros (1, 0.05, 2.5), as
// rules, their texts and their TraceQL spell bounds.
func FormatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
