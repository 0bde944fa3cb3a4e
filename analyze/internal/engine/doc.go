// Package engine is the analyzer behind package analyze: it reads
// exported traces of an MCP connection pool and computes the measures that say whether pooling works: the hit rate against
// the cold-start floor with every miss attributed to a cause, the number of
// downstream sessions per execution, reads per request, and latency
// percentiles.
//
// It works on traces from any implementation of the vocabulary in package
// spans (the production gateway's TypeScript as well as package pool), so it
// never imports pool or the MCP SDK.
//
// # Pipeline
//
// Package ingest (analyze/ingest) expands paths and decodes each dump (OTLP
// JSON or protobuf, gzip or zstd, Jaeger, Tempo) into batches it pushes into
// a sink. The span index (analyze/internal/index) is that sink: it keeps
// only what the measures need, in a compact form (about 80 bytes per span:
// names and attribute values are interned, trace ids stored once per
// trace), from pdata batches or the projection decoders' compact ones. A
// caller holds it as a [Dump]: [Load] reads files into one, [NewDump] and
// [Dump.Add] build one from ptrace batches, and no exported name of this
// package hands out the index itself. [Analyze] computes a
// [report.Report] from a dump and a [rulefmt.Config], which package
// analyze/report/render draws as a table, JSON (the documented
// mcptrace.analysis/v2 contract, see docs/analysis-schema.md) or Markdown. [NewReportEvents] gives the HTML
// report the dump's acquires, handshakes and calls as plain values
// (package analyze/events), so the report is drawn from the analysis and
// those values, never from the index ([AnalyzeDumps] builds them too, with
// RunOptions.Events). Package analyze is the face of all this: callers
// outside the analyzer reach the engine only through it.
//
// # The engine
//
// [Engine] is the same analysis, incremental: spans arrive in any order in
// any number of batches ([Engine.Add], or [Feed] from the readers with the
// fast JSON path), are spread by trace id over shards (goroutines, each
// owning an index of its open traces), and each finalized trace is
// observed into mergeable figures and freed; shards merge only those.
// Counts, examples, executions, reads per request and protocol figures are
// per trace; latency percentiles are a sketch, exact in a batch run and,
// in a stream, exact up to 65 536 samples per series and within 0.4 % past
// it; miss attribution walks each (scope,
// key) pair's acquires in time order across traces in a stage that buffers
// them until no shard can still bring an earlier one. [Analyze] is the
// same observe-then-report over one index, so a batch run of the engine
// ([AnalyzeFiles], [AnalyzeStream] with zero [EngineOptions]) reports
// exactly what Analyze does. Over files such a run is speculative: it
// measures each trace once its root has arrived and frees it, and should a
// span come for a trace already measured it reads the files again holding
// every trace ([LoadOptions].Reread), so the answer is the same and a dump
// in time order is read once, in a fraction of the memory. With
// [EngineOptions.Window] or MaxOpenTraces a
// trace is finalized once the watermark (latest span end read) passes it
// by the window, or when the bound cuts it, and the report's stream
// section counts late spans and cut traces. [ChooseEngine] is the one
// choice between one index, a speculative or held batch run and a stream,
// for the CLI ([AnalyzeDumps]), the engine's own batch runs and the
// Collector connector.
//
// # Stages
//
// The engine runs the analyzer's stages in order and computes no figure
// itself. The vocabulary stage (analyze/internal/vocab) recognises the
// writer and turns an index's spans into MCP events (analyze/internal/record);
// the measures (analyze/internal/measure) compute every figure from those
// events, pure: no I/O and no clock, every time comes from the spans. An
// acquire belongs to a pool scope (plugin.mcp.pool.id, else resource
// service.instance.id, else service.name) and a key (plugin.mcp.cache_key);
// the first acquire of each (scope, key) pair must dial, which is the
// cold-start floor. Every other miss is attributed by replaying the scope
// through the pool's own idle core (pool/idle) under the settings it
// recorded, and to unexplained when nothing fits: the regression to chase.
// The rule observation (analyze/internal/ruleobs) reads what each rule's
// scopes hold, asking the same stages for a rule's measure.
//
// # Configuration
//
// Reads-per-request measures come from a YAML file ([rulefmt.LoadConfigFile]) whose
// span [rulefmt.Selector] type is shared with the CI gate's rules. Unknown keys, bad
// values and bad regular expressions are a [*rulefmt.ConfigError] with file, line and
// column.
//
// # Measures by name and the gate
//
// One table ([report.Measures], [report.ReadsFields]) names every figure of a Report:
// its unit, which way is better, how the report draws it and how to read
// it ([report.MeasureValue]). The report's headline, the rules' measure names and
// the gate's regressions are read from it.
//
// The CI gate lives in package analyze/gate and never reads the index:
// [ObserveRules] reads, for each rule, what its scopes hold (counts,
// distinct values, sessions, the spans to name) as plain values;
// [AnalyzeRules] returns them with the Report as one [report.Analysis], which the
// gate judges.
package engine
