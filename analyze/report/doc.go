// Package report is the analysis value, a small leaf hub like the
// Collector's pdata: the [Report] an analysis of a dump computes (schema
// mcptrace.analysis/v1: the pool, executions, reads-per-request, protocol,
// recognition and stream figures), the [Analysis] that adds what each rule's
// scopes hold ([RuleObservation]), the table of measures (name, unit,
// direction of "better", how to draw it, how to read it from a Report) and
// the table, Markdown and JSON renderers.
//
// The engine (analyze) produces these values and the gate (analyze/gate)
// judges them; neither needs the other's internals, and nothing here reads
// spans: it imports rulefmt (rule names, tolerances) and spans only. Report
// slices are sorted, so the same dump always renders the same bytes.
package report
