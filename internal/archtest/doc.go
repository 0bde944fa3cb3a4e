// Package archtest holds the module's architecture tests and nothing else:
// the package arrows of the design (docs/architecture.md) checked against
// what the go tool really links, so an import that breaks them fails `go
// test ./...` instead of waiting for a review to notice.
//
// Three kinds of check. The package graph itself: the Arrows block of
// docs/architecture.md is parsed and every package's imports of ours (go
// list, both modules) must be drawn there, and every drawn arrow must
// exist, so the page and the code cannot drift (docarrows_test.go). And
// transitive rules over go list -deps (archtest_test.go).
//
// The transitive rules it pins:
//   - the vocabulary (spans), the analyzer (analyze/...) and the dashboards
//     (dashboards/...) link neither the OpenTelemetry SDK, nor the OTLP
//     exporters, nor gRPC, nor the Prometheus client: reading span and metric
//     names must stay cheap for every importer, the Collector connector
//     included;
//   - spans imports nothing of ours, and spans/telemetry only spans;
//   - analyze never imports pool or the MCP SDK (it reads traces from any
//     implementation), fixtures never imports pool (it tests any client) and
//     imports spans at most, the dashboards import only spans;
//   - analyze/gate never links analyze (only the analysis value of
//     analyze/report, the rules of analyze/rulefmt, ingest's ReadError and
//     spans), and rulefmt and report link no engine;
//   - analyze/report holds data and never imports its renderers
//     (analyze/report/render), which import it and link no engine;
//   - the Collector connector (its own module under collector/) imports only
//     analyze and spans of ours, never the pool or the telemetry setup.
//
// The test-support packages (internal/dumptest, internal/analyzetest) are
// imported by no package's own code, only by _test.go files
// (testsupport_test.go): they link the trace generators and the analyzer.
//
// And one rule over the source itself (private_test.go): no exported
// signature of analyze names its span index, which callers hold only as
// the opaque analyze.Dump.
//
// Only the packages themselves are checked, not their tests: a test may run
// a real pipeline (the dashboards' query test starts the demo), which links
// nothing into a user's binary.
package archtest
