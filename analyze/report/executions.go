package report

import (
	"encoding/json"
	"strings"
)

// ExecutionsReport is the session-continuity measure: how many downstream
// sessions each execution's tool calls landed on. A stateful server keeps
// state per session, so an execution spread over several sessions loses it.
type ExecutionsReport struct {
	// Root is how executions are found: "trace" (each trace is one), or the
	// --execution-root selector.
	Root string `json:"root"`
	// Count is the number of executions holding at least one tool call.
	Count int `json:"count"`
	// MultiSession counts executions whose calls carry more than one
	// distinct mcp.session.id.
	MultiSession int `json:"multi_session"`
	// MaxSessions is the largest number of distinct sessions in one
	// execution.
	MaxSessions int `json:"max_sessions"`
	// Examples are trace ids of multi-session executions, sorted, at most
	// MaxExamples.
	Examples []string `json:"examples"`
	// Measurable is false when calls cannot be tied to their execution
	// (measurable.go): the figures above then measure nothing, and WhyNot
	// says why ("" when measurable): a writer whose request spans are
	// parented to nothing, or calls the spans cannot tie to their
	// execution. CallsOutsideRoot counts calls under
	// no execution root, CallsOutlivingRoot calls ending after their
	// execution's root span ended.
	Measurable         bool   `json:"measurable"`
	WhyNot             string `json:"why_not"`
	CallsOutsideRoot   int    `json:"calls_outside_root"`
	CallsOutlivingRoot int    `json:"calls_outliving_root"`
	// ExecutionsWithoutCalls counts, for a writer parenting calls to a
	// session span, executions holding no call where executions of the
	// same root name hold some: their calls sit in another's trace.
	ExecutionsWithoutCalls int `json:"executions_without_calls"`
	// OnlyEmpty marks a judgement of not measurable whose one reason is a
	// dump holding no execution and no pool span: the rules then have
	// nothing to judge, and say so themselves. Set by the analysis, never
	// serialized (a report read back from JSON has it false).
	OnlyEmpty bool `json:"-"`
}

// UnmarshalJSON reads an executions section; one written before
// executions.measurable existed (an old baseline) reads as measurable,
// which it was taken to be.
func (r *ExecutionsReport) UnmarshalJSON(b []byte) error {
	type plain ExecutionsReport
	aux := struct {
		*plain
		Measurable *bool `json:"measurable"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	r.Measurable = aux.Measurable == nil || *aux.Measurable
	return nil
}

// NotMeasurableText says in words, for people, that executions could not
// be measured and why; "" when they could.
func (r *ExecutionsReport) NotMeasurableText() string {
	if r.Measurable {
		return ""
	}
	return "executions not measurable: " + r.WhyNot
}

// UnmeasuredExecutions reports whether measure m reads the executions
// section of a report whose executions are not measurable: it then has no
// data, and a rule comparing it is incomplete.
func UnmeasuredExecutions(r *Report, m Measure) bool {
	return r != nil && !r.Executions.Measurable && strings.HasPrefix(m.JSON, "executions.")
}
