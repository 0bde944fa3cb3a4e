package jaegertest

import (
	_ "embed"
	"strconv"
	"strings"
)

// configTemplate is the Jaeger v2 (OpenTelemetry Collector) configuration
// Start runs (jaeger.yaml, which scripts/jaeger-run.sh runs too), its four
// ports filled in: query HTTP, query gRPC, OTLP/HTTP,
// OTLP/gRPC. Everything listens on 127.0.0.1 or not at all:
//   - only the two extensions the tests need run: no healthcheckv2, pprof,
//     expvar, zpages or remote_sampling, each of which listens on 0.0.0.0
//     in Jaeger's sample configs;
//   - the Collector's own metrics are off (level: none), so nothing serves
//     them on :8888;
//   - the query extension's tracing is off: on, it exports Jaeger's own
//     spans by OTLP to the default endpoint, localhost:4317, whatever
//     listens there;
//   - max_clock_skew_adjust 0s turns the clock-skew adjuster off, so the
//     API returns the timestamps sent;
//   - logs at warn: a failed test shows the end of the log, and info
//     lines would bury the error there.
//
// No batch processor: the exporter writes to the store while the OTLP
// request is served, so a span is queryable soon after its 200.
//
//go:embed jaeger.yaml
var configTemplate string

// config is configTemplate for ports (query HTTP, query gRPC, OTLP/HTTP,
// OTLP/gRPC).
func config(ports [4]int) string {
	return strings.NewReplacer(
		"${QUERY_HTTP_PORT}", strconv.Itoa(ports[0]), "${QUERY_GRPC_PORT}", strconv.Itoa(ports[1]),
		"${OTLP_HTTP_PORT}", strconv.Itoa(ports[2]), "${OTLP_GRPC_PORT}", strconv.Itoa(ports[3]),
		"${MAX_TRACES}", strconv.Itoa(MaxTraces),
	).Replace(configTemplate)
}
