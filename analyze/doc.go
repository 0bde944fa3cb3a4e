// Package analyze reads exported traces of an MCP connection pool and
// computes the measures that say whether pooling works: the hit rate against
// the cold-start floor with every miss attributed to a cause, the number of
// downstream sessions per execution, reads per request, and latency
// percentiles.
//
// It works on traces from any instrumentation a vocabulary describes (the
// spans of package pool, the production gateway's, OpenLLMetry, Sentry,
// Mastra and others, or the user's own mapping), so it never imports pool
// or the MCP SDK.
//
// This package is the analyzer's face; the work happens in internal
// packages it alone may import. Its entry points:
//
//   - A dump: [Load] reads files (any format package analyze/ingest reads)
//     into a [Dump], [NewDump] builds one from batches; [Analyze] computes
//     its [report.Report] and [AnalyzeRules] the [report.Analysis] the gate
//     (package analyze/gate) judges.
//   - Files, the way the CLI runs them: [AnalyzeDumps] chooses the engine
//     ([ChooseEngine]: one index, a speculative batch run or a bounded
//     stream) and reports the same figures whichever it picks.
//   - A stream, for the Collector connector: [TraceStream] measures traces
//     as they complete and [PairStream] attributes the misses of pairs whose
//     acquires come from many traces.
//   - Events as plain values: [NewReportEvents] for the HTML report
//     (package analyze/htmlreport) and [ReadAcquires] for a replay of the
//     pool (package analyze/whatif).
//
// Every function is pure apart from reading its inputs: no clock, every
// time comes from the spans. Package analyze/report/render draws the report
// as a table, JSON (docs/analysis-schema.md) or Markdown (render.Write).
package analyze
