// Package archtest holds the module's architecture tests and nothing else:
// the package arrows of the design (docs/architecture.md) checked against
// what the go tool really links, so an import that breaks them fails `go
// test ./...` instead of waiting for a review to notice.
//
// The arrows it pins:
//   - the vocabulary (spans), the analyzer (analyze/...) and the dashboards
//     (dashboards/...) link neither the OpenTelemetry SDK, nor the OTLP
//     exporters, nor gRPC, nor the Prometheus client: reading span and metric
//     names must stay cheap for every importer, the Collector connector
//     included;
//   - spans imports nothing of ours, and spans/telemetry only spans;
//   - analyze never imports pool or the MCP SDK (it reads traces from any
//     implementation), fixtures never imports pool (it tests any client) and
//     imports spans at most, the dashboards import only spans;
//   - the Collector connector (its own module under collector/) imports only
//     analyze and spans of ours, never the pool or the telemetry setup.
//
// Only the packages themselves are checked, not their tests: a test may run
// a real pipeline (the dashboards' query test starts the demo), which links
// nothing into a user's binary.
package archtest
