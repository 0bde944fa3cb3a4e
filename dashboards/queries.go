package dashboards

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Query is one target of one panel, as found in dashboard JSON.
type Query struct {
	// Panel and PanelType are the panel's title and visualization type;
	// Description is the panel's description.
	Panel, PanelType, Description string
	// RefID names the target within its panel ("A", "B", ...).
	RefID string
	// Datasource is the plugin type the target runs on (TypePrometheus,
	// TypeTempo, TypePyroscope).
	Datasource string
	// Expr is the query text: PromQL, TraceQL, or for Pyroscope the
	// profile type and label selector ("type{selector}").
	Expr string
	// Legend is the Prometheus legend format, if any.
	Legend string
	// GroupBy lists the labels a Pyroscope query groups by.
	GroupBy []string
}

// jsonPanel is the part of a panel Queries reads.
type jsonPanel struct {
	Type        string      `json:"type"`
	Title       string      `json:"title"`
	Description string      `json:"description"`
	Datasource  *jsonDS     `json:"datasource"`
	Targets     []jsonQuery `json:"targets"`
	Panels      []jsonPanel `json:"panels"` // a row's collapsed panels
}

type jsonDS struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

type jsonQuery struct {
	RefID         string   `json:"refId"`
	Datasource    *jsonDS  `json:"datasource"`
	Expr          string   `json:"expr"`
	LegendFormat  string   `json:"legendFormat"`
	Query         string   `json:"query"`
	ProfileTypeID string   `json:"profileTypeId"`
	LabelSelector string   `json:"labelSelector"`
	GroupBy       []string `json:"groupBy"`
}

// Queries lists every panel target of a dashboard's JSON in layout order,
// rows' collapsed panels included, so tests and tools can run or check
// them. A target's datasource is its own, else its panel's. It fails on
// JSON that is not a dashboard, and names the panel of a target whose
// datasource type it cannot tell.
func Queries(dashboardJSON []byte) ([]Query, error) {
	var d struct {
		Panels []jsonPanel `json:"panels"`
	}
	if err := json.Unmarshal(dashboardJSON, &d); err != nil {
		return nil, fmt.Errorf("decode dashboard JSON: %w", err)
	}
	var out []Query
	var walk func([]jsonPanel) error
	walk = func(panels []jsonPanel) error {
		for _, p := range panels {
			if err := walk(p.Panels); err != nil {
				return err
			}
			for _, t := range p.Targets {
				q := Query{Panel: p.Title, PanelType: p.Type, Description: p.Description, RefID: t.RefID, Legend: t.LegendFormat, GroupBy: t.GroupBy}
				switch {
				case t.Datasource != nil && t.Datasource.Type != "":
					q.Datasource = t.Datasource.Type
				case p.Datasource != nil:
					q.Datasource = p.Datasource.Type
				}
				switch q.Datasource {
				case TypePrometheus:
					q.Expr = t.Expr
				case TypeTempo:
					q.Expr = t.Query
				case TypePyroscope:
					q.Expr = t.ProfileTypeID + t.LabelSelector
				default:
					return fmt.Errorf("panel %q target %s: unknown datasource type %q", p.Title, t.RefID, q.Datasource)
				}
				out = append(out, q)
			}
		}
		return nil
	}
	if err := walk(d.Panels); err != nil {
		return nil, err
	}
	return out, nil
}

// readme renders dashboards/README.md: the hand-written introduction, then
// each panel of the dashboard with its description and queries, so the
// document cannot drift from the JSON.
func readme(poolJSON []byte) ([]byte, error) {
	qs, err := Queries(poolJSON)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(readmeIntro)
	last := ""
	for _, q := range qs {
		if q.Panel != last {
			last = q.Panel
			fmt.Fprintf(&b, "\n### %s\n\n%s\n\n*%s panel on %s.*\n", q.Panel, q.Description, q.PanelType, datasourceName(q.Datasource))
		}
		lang := map[string]string{TypePrometheus: "promql", TypeTempo: "traceql", TypePyroscope: "text"}[q.Datasource]
		label := q.Legend
		if label == "" && len(q.GroupBy) > 0 {
			label = "by " + strings.Join(q.GroupBy, ", ")
		}
		if label != "" {
			label = " — " + label
		}
		fmt.Fprintf(&b, "\n%s%s:\n\n```%s\n%s\n```\n", q.RefID, label, lang, q.Expr)
	}
	return []byte(b.String()), nil
}

func datasourceName(typ string) string {
	switch typ {
	case TypePrometheus:
		return "Prometheus"
	case TypeTempo:
		return "Tempo"
	case TypePyroscope:
		return "Pyroscope"
	}
	return typ
}

// readmeIntro is the hand-written part of dashboards/README.md.
const readmeIntro = `# Grafana dashboards

Generated from Go code (` + "`dashboards/pool.go`" + ` in the mcptrace repository) with the Grafana Foundation SDK;
every metric, label, span and attribute name comes from the vocabulary in
` + "`spans/`" + `. Do not edit the JSON or this file: edit the generator and run

` + "```sh" + `
go generate ./dashboards          # rewrites mcp-pool.json and this README
mcptrace dashboards --out DIR     # writes them anywhere (--provisioning adds the provisioning files)
` + "```" + `

A test fails when the committed files differ from the generator's output, and
another starts a real Prometheus, scrapes a running ` + "`mcptrace demo`" + ` workload and
runs every Prometheus query below against it: each must parse and return data.

## Setup

- **Metrics**: run the pool with ` + "`spans.NewPrometheusExporter`" + ` and
  ` + "`spans.ServeMetrics`" + ` (or ` + "`mcptrace demo --metrics-addr 127.0.0.1:9464 --duration 2m`" + `
  for live data with misses of every reason, failures and evictions), and let
  Prometheus scrape ` + "`/metrics`" + `.
- **Traces**: export the pool's spans to Tempo over OTLP (` + "`spans.Setup`" + ` with
  ` + "`Exporter: \"otlp\"`" + ` and the standard ` + "`OTEL_EXPORTER_OTLP_*`" + ` variables).
- **Profiles**: ` + "`mcptrace demo --pyroscope-url http://pyroscope:4040`" + ` pushes CPU and
  memory profiles as service ` + "`mcptrace-demo`" + `; the pool's pprof label ` + "`phase`" + `
  (` + "`handshake`" + ` or ` + "`call`" + `) splits them. ` + "`--profile-dir DIR`" + ` writes the same
  profiles as pprof files instead.
- **Grafana**: ` + "`mcptrace dashboards --out DIR --provisioning`" + ` also writes
  ` + "`provisioning/datasources/mcptrace.yaml`" + `, which declares the three datasources,
  and ` + "`provisioning/dashboards/mcptrace.yaml`" + `, which loads the JSON from
  ` + "`/var/lib/grafana/dashboards/mcptrace`" + ` (the same files are in the repository's
  ` + "`dashboards/provisioning/`" + `).

## Variables

- ` + "`prometheus`, `tempo`, `pyroscope`" + `: datasource variables. Panels name
  datasources only through them, never by uid, so the JSON imports into any
  Grafana.
- ` + "`pool`" + `: pool scopes, from ` + "`label_values(mcp_pool_acquires_total, plugin_mcp_pool_id)`" + `.
- ` + "`key`" + `: hashed pool keys (` + "`plugin.mcp.cache_key`" + `), from the same metric.
  Only ` + "`mcp_pool_acquires_total`, `mcp_pool_connection_wait_time_seconds`,\n  `mcp_pool_connection_use_time_seconds` and `mcp_pool_failures_total`" + ` carry it,
  so the key narrows acquires, hit rate, misses, acquire latency, lease hold
  time, failures and the trace tables. Handshakes, call latency, evictions,
  redials and the idle/in-use gauge are per pool only: with a key selected
  they still show the whole pool (their panel descriptions say so). The
  key is an HMAC with a per-process secret: its values change when the
  process restarts, so a key copied from a trace filters both the trace and
  the metric panels of the same process.
- ` + "`service`" + `: the Pyroscope ` + "`service_name`" + ` of the profiled process.

"All" on ` + "`pool`" + ` and ` + "`key`" + ` is the regex ` + "`.*`" + `.

## Panels
`
