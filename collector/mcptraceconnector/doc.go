// Package mcptraceconnector is the mcptrace connector for the OpenTelemetry
// Collector: traces in, mcptrace's pool measures out as metrics (traces →
// metrics) and rule violations as log records (traces → logs), computed
// in-stream where the pools' spans already flow.
//
// # What works now
//
// The engine-independent half: spans are grouped by trace id; a trace is
// finalized wait after its last span arrived (wall clock, like the
// groupbytrace processor's wait_duration), early when max_open_traces would
// be exceeded (the trace whose last span is oldest is cut), and at Shutdown.
// Spans of a trace already finalized are counted as late. The metrics leg
// emits mcptrace.traces.finalized, mcptrace.traces.cut and
// mcptrace.traces.late_spans as cumulative counters.
//
// # What waits for the engine
//
// The measures (mcptrace.pool.acquires, mcptrace.pool.handshakes,
// mcptrace.executions), the miss causes and the per-trace rule verdicts
// (mcptrace.rule.violations and the log records) come from the incremental
// analysis engine, which plugs in behind traceAnalyzer (see newAnalyzer).
// Until it does, the analyzer is pendingEngine, which measures nothing: the
// connector emits no acquire, handshake, execution or violation series
// rather than guess them. The names and attributes of that output are fixed
// in names.go and rendered by emit.go already.
//
// The metric and attribute names are a contract (see names.go and
// docs/collector.md in the repository).
package mcptraceconnector
