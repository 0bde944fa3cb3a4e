package rulefmt

import (
	"math"
	"regexp"
	"slices"
	"strconv"

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
	// (see report.SessionlessProtocol), and scopes holding only such spans: a
	// session rule does not apply where the protocol has no sessions.
	SkipSessionless bool
	// Builtin is true for the rules of [BuiltinRules].
	Builtin bool
	// Needs are what the writer's spans must show for the rule to apply
	// (capabilities.go): a rule needing what they cannot show is not
	// applicable, never a pass on nothing nor incomplete forever. The
	// built-in rules state theirs; the gate adds what the measures and
	// quantities a rule compares need.
	Needs Capability
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
	// Warnings are what the file says that runs but likely does not mean
	// what it reads (LintRules), for the commands loading it to print.
	Warnings []Warning
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

// FormatNumber renders a number without trailing zeros (1, 0.05, 2.5), as
// rules, their texts and their TraceQL spell bounds.
func FormatNumber(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}
