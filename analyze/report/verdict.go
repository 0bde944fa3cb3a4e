package report

import "github.com/mcptrace/mcptrace/analyze/rulefmt"

// RuleStatus is a rule's verdict.
type RuleStatus string

// The verdicts.
const (
	// StatusPass: every complete scope satisfies every expectation.
	StatusPass RuleStatus = "pass"
	// StatusFail: at least one complete scope breaks an expectation.
	StatusFail RuleStatus = "fail"
	// StatusIncomplete: nothing failed, but every scope the rule needed was
	// incomplete (a trace still missing spans, no data for a measure): the
	// rule could not be judged, which is neither a pass nor a fail.
	StatusIncomplete RuleStatus = "incomplete"
	// StatusNotApplicable: the rule needs what the writer's spans cannot
	// show (a session id, a target identity, calls tied to executions,
	// pool spans), or compares a figure that is only a bound the
	// comparison cannot decide on. Neither a pass nor a fail, and no
	// reason to wait for more spans: Found says why.
	StatusNotApplicable RuleStatus = "not_applicable"
)

// RuleExample names one offending trace and, when known, span, with a
// TraceQL query that finds it in Grafana Tempo.
type RuleExample struct {
	TraceID string `json:"trace_id"`
	SpanID  string `json:"span_id,omitempty"`
	TraceQL string `json:"traceql"`
}

// RuleVerdict is the verdict of one rule over a dump (or, in a stream,
// over the traces finalized together): the one shape of a verdict. Only
// the gate builds it (analyze/gate's Evaluate); the check's outputs, the
// HTML report's rule table, the trace stream and the Collector connector
// read it as it is, so no two of them can word or decide a verdict apart.
type RuleVerdict struct {
	ID          string           `json:"id"`
	Description string           `json:"description,omitempty"`
	Severity    rulefmt.Severity `json:"severity"`
	Builtin     bool             `json:"builtin"`
	Status      RuleStatus       `json:"status"`
	// Expected says in words what the rule wants (its threshold), Found
	// what the dump holds (the observed value, or why the rule is not
	// applicable).
	Expected string `json:"expected"`
	Found    string `json:"found"`
	// Scopes counts the scopes considered (skipped empty ones left out);
	// Failed and Incomplete count those that failed or could not be judged.
	Scopes     int `json:"scopes"`
	Failed     int `json:"failed"`
	Incomplete int `json:"incomplete"`
	// NoPoolSpans says the rule had nothing to judge because it reads
	// the pool and the dump holds no pool spans: the check says that once
	// for every such rule. Not in the JSON: the check reads it while
	// judging.
	NoPoolSpans bool `json:"-"`
	// NotApplicable counts the scopes left out because every selected span
	// in them ran against a sessionless server (rulefmt.Rule.SkipSessionless).
	NotApplicable int `json:"not_applicable"`
	// Examples name offending traces and spans, at most RuleObservation.MaxExamples.
	Examples []RuleExample `json:"examples"`
	// TraceQL finds the spans the rule looks at (or its offenders) in Tempo.
	TraceQL string `json:"traceql"`
}
