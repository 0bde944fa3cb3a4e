package mcptraceconnector

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// traceAnalyzer is the seam where the incremental analysis engine (issue 9)
// plugs in. The connector owns the wall-clock side (grouping spans by trace,
// wait, max_open_traces, late spans, Shutdown); the analyzer owns the
// measures: for each finalized trace it returns what that trace adds to the
// counters and the rule violations found in it.
//
// Finalize is called once per finalized trace, never for the same trace
// twice, from any goroutine but never concurrently for one connector
// instance. spans holds every span the connector gathered for the trace,
// regrouped under their resources and scopes; the analyzer may read it but
// must not keep it. reason says why the trace was finalized: reasonCut and
// reasonShutdown traces may be incomplete, and the analyzer must not judge
// an incomplete trace as if it were whole (a verdict is never green on
// missing data).
//
// The engine will also want to finalize a trace it knows is complete at
// once instead of after wait; that takes a second method (e.g.
// Complete(spans ptrace.Traces) bool, asked after each batch) and is left
// to the engine's session.
type traceAnalyzer interface {
	Finalize(id pcommon.TraceID, spans ptrace.Traces, reason finalizeReason) traceOutcome
}

// traceOutcome is what one finalized trace adds to the connector's output.
// Every field is additive, so outcomes sum across traces and, because the
// loadbalancing exporter routes each trace to one collector, across
// collectors. The zero value adds nothing.
type traceOutcome struct {
	// Acquires are the trace's acquires by pool, hit and miss cause.
	Acquires []acquireCount
	// Handshakes are the trace's handshakes by pool.
	Handshakes []poolCount
	// Executions are the trace's executions by pool and whether they ran
	// on more than one session.
	Executions []executionCount
	// Violations are the rule violations found in the trace.
	Violations []ruleViolation
}

// acquireCount is a number of acquires sharing one attribute set of
// mcptrace.pool.acquires.
type acquireCount struct {
	PoolID   string
	CacheHit bool
	// MissCause is the analyzer's attribution (cold, concurrent, ttl,
	// redial, after_failure, health_check, unexplained); empty on hits.
	MissCause string
	N         int64
}

// poolCount is a number of events in one pool (mcptrace.pool.handshakes).
type poolCount struct {
	PoolID string
	N      int64
}

// executionCount is a number of executions sharing one attribute set of
// mcptrace.executions.
type executionCount struct {
	PoolID       string
	MultiSession bool
	N            int64
}

// ruleViolation is one finding of a per-trace rule: a log record and one
// increment of mcptrace.rule.violations.
type ruleViolation struct {
	RuleID   string
	Severity string
	// Finding is the finding text, as `mcptrace check` prints it.
	Finding string
	// TraceQL finds the offending spans in Tempo.
	TraceQL string
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
}

// pendingEngine is the analyzer until the incremental engine lands. It
// measures nothing: every outcome is zero, so the connector emits only its
// own counters (finalized, cut, late spans) and no acquires, handshakes,
// executions or violations. It exists so the buffering can run and be
// tested now; it must not be replaced by anything that guesses measures.
type pendingEngine struct{}

// Finalize returns the zero outcome.
func (pendingEngine) Finalize(pcommon.TraceID, ptrace.Traces, finalizeReason) traceOutcome {
	return traceOutcome{}
}

// newAnalyzer returns the analyzer for the resolved settings. This is the
// one place the engine is chosen: the engine's session replaces the body.
func newAnalyzer(settings) traceAnalyzer {
	return pendingEngine{}
}
