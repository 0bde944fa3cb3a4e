// Package mcptraceconnector is the mcptrace connector for the OpenTelemetry
// Collector: traces in, mcptrace's pool measures out as metrics (traces →
// metrics) and rule violations as log records (traces → logs), computed
// in-stream where the pools' spans already flow; and, for a fleet, a pair
// tier (logs → metrics) that attributes the misses of forwarded acquires.
//
// # How it works
//
// Spans are grouped by trace id. A trace whose root span arrives is
// complete (analyze.CompleteAtRoot, the engine's rule) and is finalized at
// the end of the ConsumeTraces call that brought it, unless hold_complete
// is set or the rules wait on more; any other trace is finalized wait after
// its last span arrived (wall clock, like the groupbytrace processor's
// wait_duration), early when max_open_traces would be exceeded (the trace
// whose last span is oldest is cut), and at Shutdown. Spans of a trace
// already finalized are counted as late. The metrics leg emits
// mcptrace.traces.finalized, mcptrace.traces.cut and
// mcptrace.traces.late_spans as cumulative counters.
//
// Each finalized trace goes to the analyzer (traceAnalyzer, backed by
// analyze.TraceStream: the analyze package's own observation, pair
// attribution and rule evaluation), which gives mcptrace.pool.acquires by
// pool, hit and miss cause, mcptrace.pool.handshakes,
// mcptrace.executions and the per-trace and per-subtree rule violations
// (mcptrace.rule.violations and one log record each). A miss whose cause
// the spans cannot show, as mcptrace analyze marks its figure not
// measurable or only an upper bound, counts under MissCauseUnknown
// (unknownCauses). Miss causes depend
// on each (pool, key) pair's earlier acquires in other traces. With
// attribution: local the analyzer keeps that history per connector
// instance, so one instance's causes are mcptrace analyze's. With
// attribution: forward the traces → logs leg sends each acquire as a
// record (pairLogs) instead, a routing exporter sends every record of a
// pair to one instance, and that instance's logs → metrics leg (pairsLeg)
// attributes them in start order, holding each for pair_wait: a fleet
// routed by trace id then sums to mcptrace analyze's causes exactly (see
// docs/collector.md in the repository). Dump-scoped rules are not
// evaluated in-stream; Start warns about them.
//
// The metric and attribute names are a contract (see names.go and
// docs/collector.md in the repository).
package mcptraceconnector
