// Package telemetry builds the OpenTelemetry pipeline that emits mcptrace's
// vocabulary (package [github.com/mcptrace/mcptrace/spans]): the SDK tracer
// and meter providers ([Setup]), the OTLP exporters, an OTLP JSON-lines file
// exporter ([FileExporter]), an in-memory span recorder for tests
// ([Recorder]), the conversion of finished SDK spans to pdata ([ToTraces])
// and a Prometheus endpoint ([NewPrometheusExporter], [ServeMetrics]).
//
// It is a package of its own because it links the OpenTelemetry SDK, the
// OTLP exporters, gRPC and the Prometheus client. Code that only needs the
// names (the analyzer, the dashboards, the Collector connector) imports
// spans and stays free of all of that; code that records telemetry (the
// pool, the CLI's demo) imports this package as well.
package telemetry
