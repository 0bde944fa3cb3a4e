// Package dashboards generates mcptrace's Grafana dashboards from Go code
// with the Grafana Foundation SDK, so every metric, label, span and attribute
// name in them comes from the vocabulary in package spans and a rename there
// cannot leave a dashboard silently empty.
//
// Two dashboards: "MCP pool" (mcp-pool.json, the pool's own metrics, traces
// and profiles) and "MCP pool fleet" (mcp-pool-fleet.json, the mcptrace
// Collector connector's metrics summed across a fleet of collectors). The
// generated JSON is committed next to this file for
// Grafana's file provisioning; a test fails when it differs from what the
// generator writes now. Regenerate with
//
//	go generate ./dashboards
//
// or write it anywhere with `mcptrace dashboards --dir DIR`.
//
// # Datasources
//
// Panels never name a datasource uid: each dashboard has datasource
// variables (prometheus, tempo, pyroscope; the fleet dashboard only
// prometheus) that Grafana fills with a
// datasource of the right type, so the JSON imports into any Grafana. The
// provisioning/ directory holds example datasource and dashboard provider
// files; README.md describes every panel and the query behind it.
package dashboards

//go:generate go run ./gen -out .
