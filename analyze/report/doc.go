// Package report is the analysis value, a small leaf hub like the
// Collector's pdata: the [Report] an analysis of a dump computes (schema
// mcptrace.analysis/v1: the pool, executions, reads-per-request, protocol,
// recognition and stream figures), the [Analysis] that adds what each rule's
// scopes hold ([RuleObservation]) and the table of measures (name, unit,
// direction of "better", how to draw it, how to read it from a Report).
// It holds data only, so a reader of it sees what a report says and no
// drawing code: the renderers (table, Markdown, JSON) are
// analyze/report/render, which imports this package, never the reverse.
//
// The engine (analyze) produces these values and the gate (analyze/gate)
// judges them; neither needs the other's internals, and nothing here reads
// spans: it imports rulefmt (rule names, tolerances) and spans only. Report
// slices are sorted, so the same dump always renders the same bytes.
package report
