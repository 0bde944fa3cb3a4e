package report

import "go.opentelemetry.io/collector/pdata/pcommon"

// SpanRef names one span of a dump by its trace and span ids.
type SpanRef struct {
	Trace pcommon.TraceID
	Span  pcommon.SpanID
}

// RuleObservation is what a dump holds for one rule: its scopes with the
// value of each count-like expectation, and the spans to name if the rule
// fails. Comparing the values with the bounds, and reading measure
// expectations from the Report, is left to the gate.
type RuleObservation struct {
	// Groups are the rule's scopes grouped by what they hold: scopes with
	// the same completeness, values and kind of offenders share one group,
	// so an observation stays small however many traces the dump holds.
	// Groups come in the order of their first scope (traces by id,
	// subtrees by root); scopes SkipEmpty or SkipSessionless left out are
	// in none. A ScopeDump rule has one group of one scope.
	Groups []ScopeGroup
	// NotApplicable counts the scopes left out because every selected span
	// in them ran against a sessionless server (Rule.SkipSessionless).
	NotApplicable int
	// UnexplainedMisses and AboveFloorMisses name the acquires the pool
	// measure attributed as unexplained misses, and as misses other than
	// cold starts; sorted by trace and span id, at most MaxExamples each.
	// Filled only when the rule compares a pool measure they explain.
	UnexplainedMisses, AboveFloorMisses []SpanRef
	// TraceQL finds the spans the rule looks at (or its offenders) in
	// Grafana Tempo.
	TraceQL string
	// MaxExamples is the cap the offending spans were kept under (0: none
	// kept); the gate names at most this many examples per rule.
	MaxExamples int
	// Unmeasurable, when set, says why the rule could not be judged at
	// all: it reads sessions per execution and the executions are not
	// measurable (measurable.go). The gate judges it not applicable.
	Unmeasurable string
}

// ScopeGroup is a set of a rule's scopes that hold the same values.
type ScopeGroup struct {
	// Scopes counts the scopes of the group.
	Scopes int
	// Complete is false when the scopes may not be judged: their trace has
	// a missing parent, or no span matching Rule.CompleteWhen.
	Complete bool
	// MissingParent, for an incomplete group, says its scopes wait for a
	// parent span their trace names but the dump lacks; false, that they
	// wait for a span matching Rule.CompleteWhen. The gate names what an
	// incomplete rule waited for by it.
	MissingParent bool
	// Values holds one entry per Rule.Expect, in order: the quantity a
	// count, distinct, pool_sessions or lost_sessions expectation compares.
	// A measure expectation's entry is zero: the gate reads the measure
	// from the Report. Nil for incomplete scopes.
	Values []float64
	// Offenders holds, per Rule.Expect, the selected spans to name if the
	// expectation fails: for the dump its first MaxExamples by trace and
	// span id; for traces each one's first selected span, the first
	// MaxExamples of those. Empty when the expectation selected no span in
	// these scopes, for a measure expectation and for subtree scopes.
	Offenders [][]SpanRef
	// Examples name the scopes themselves, for a failure without an
	// offending span to show: subtree roots, or traces' first root spans;
	// the first MaxExamples by trace and span id. Empty for the dump.
	Examples []SpanRef
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
