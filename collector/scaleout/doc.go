// Package scaleout is the end-to-end test of the scale-out topology in
// collector/scale-out/: a routing collector (loadbalancing exporter,
// routing_key traceID, static resolver) in front of two otelcol-mcptrace
// backends, each with its own Prometheus exporter endpoint, scraped by a
// real Prometheus. The test starts them as real processes on 127.0.0.1,
// sends a generated workload (GenerateWorkload of internal/tracegen) over
// OTLP to the router and checks the counters Prometheus holds against `mcptrace analyze` and
// `mcptrace check` on file dumps of the same spans; then it kills one
// backend mid-run, restarts it, and checks that only what the docs say is
// lost is lost.
//
// The test needs the two collector binaries, so it runs only when asked:
// collector/scale-out/e2e.sh builds them with collector/build.sh and runs
//
//	MCPTRACE_E2E_COLLECTOR=.../otelcol-mcptrace \
//	MCPTRACE_E2E_ROUTER=.../otelcol-mcptrace-router \
//	go test ./scaleout/ -run TestScaleOut -v
//
// Without those variables the test skips (saying why); with them set, a
// binary that is missing, or a Prometheus that is not installed, fails it.
package scaleout
