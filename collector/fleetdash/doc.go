// Package fleetdash holds the test of the "MCP pool fleet" Grafana
// dashboard (github.com/mcptrace/mcptrace/dashboards) against real data: the
// real mcptrace connector runs on a trace workload, the real Collector
// Prometheus exporter (contrib prometheusexporter) exposes its counters on
// 127.0.0.1, the Debian Prometheus scrapes them, and every query of the
// dashboard must parse and return data, with All and with concrete pool and
// rule values selected; the hit-rate, miss-cause, violation and trace-count
// queries must return what the connector counted.
//
// It lives in the collector module because the connector does: the main
// module, where the dashboards are generated, must not link the Collector.
// The package has no code besides this test.
package fleetdash
