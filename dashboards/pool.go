package dashboards

import (
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/grafanapyroscope"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/tempo"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/mcptrace/mcptrace/spans"
)

// PoolUID is the uid of the "MCP pool" dashboard, stable so links and
// provisioning survive regeneration.
const PoolUID = "mcptrace-mcp-pool"

// Datasource plugin types the dashboards' datasource variables select.
const (
	TypePrometheus = "prometheus"
	TypeTempo      = "tempo"
	TypePyroscope  = "grafana-pyroscope-datasource"
)

// Template variable names. Panels reference them as ${name}; tests
// substitute them to run the queries.
const (
	VarPrometheus = "prometheus"
	VarTempo      = "tempo"
	VarPyroscope  = "pyroscope"
	VarPool       = "pool"
	VarKey        = "key"
	VarService    = "service"
)

// AllValue is the value of the pool and key variables' "All" option: a
// regex matching any value, and also series without the label at all.
const AllValue = ".*"

// DefaultPyroscopeService is the service_name the flame graphs show by
// default: the application name `mcptrace demo --pyroscope-url` uses.
const DefaultPyroscopeService = "mcptrace-demo"

// ProfileTypeCPU is the Pyroscope profile type of Go CPU profiles.
const ProfileTypeCPU = "process_cpu:cpu:nanoseconds:cpu:nanoseconds"

// promName is the Prometheus name the OpenTelemetry exporter gives an
// instrument (telemetry.NewPrometheusExporter pins the translation): dots become
// underscores, then the unit and counter suffixes.
func promName(instrument, suffix string) string {
	return strings.ReplaceAll(instrument, ".", "_") + suffix
}

// promLabel is the Prometheus label of an attribute key.
func promLabel(attr string) string { return strings.ReplaceAll(attr, ".", "_") }

// Prometheus names of the pool's metrics.
var (
	metricAcquires   = promName(spans.MetricAcquires, "_total")
	metricEvictions  = promName(spans.MetricEvictions, "_total")
	metricRedials    = promName(spans.MetricRedials, "_total")
	metricFailures   = promName(spans.MetricFailures, "_total")
	metricWaitTime   = promName(spans.MetricConnectionWaitTime, "_seconds")
	metricCreateTime = promName(spans.MetricConnectionCreateTime, "_seconds")
	metricUseTime    = promName(spans.MetricConnectionUseTime, "_seconds")
	metricOpDuration = promName(spans.MetricOperationDuration, "_seconds")
	metricConnCount  = promName(spans.MetricConnectionCount, "")

	labelPool        = promLabel(spans.AttrPoolID)
	labelKey         = promLabel(spans.AttrCacheKey)
	labelHit         = promLabel(spans.AttrCacheHit)
	labelMissReason  = promLabel(spans.AttrMissReason)
	labelState       = promLabel(spans.AttrConnectionState)
	labelEviction    = promLabel(spans.AttrEvictionReason)
	labelErrorType   = promLabel(spans.AttrErrorType)
	labelToolName    = promLabel(spans.AttrGenAIToolName)
	labelMethod      = promLabel(spans.AttrMethodName)
	rateInterval     = "$__rate_interval"
	poolSelector     = fmt.Sprintf(`%s=~"${%s}"`, labelPool, VarPool)
	poolKeySelector  = fmt.Sprintf(`%s, %s=~"${%s}"`, poolSelector, labelKey, VarKey)
	hitSelector      = fmt.Sprintf(`%s="true"`, labelHit)
	missSelector     = fmt.Sprintf(`%s="false"`, labelHit)
	coldSelector     = fmt.Sprintf(`%s="%s"`, labelMissReason, spans.MissCold)
	pyroscopeService = fmt.Sprintf(`service_name="${%s}"`, VarService)
)

// sel builds a selector {a, b, ...} from matchers.
func sel(matchers ...string) string { return "{" + strings.Join(matchers, ", ") + "}" }

// sumBy is PromQL's sum aggregation, grouped by labels when there are any.
func sumBy(by []string) string {
	if len(by) == 0 {
		return "sum"
	}
	return "sum by (" + strings.Join(by, ", ") + ")"
}

// rate is sum [by (labels)] (rate(metric{matchers}[$__rate_interval])).
func rate(metric string, by []string, matchers ...string) string {
	return fmt.Sprintf("%s (rate(%s%s[%s]))", sumBy(by), metric, sel(matchers...), rateInterval)
}

// quantile is the q-quantile of a histogram over the rate interval.
func quantile(q float64, histogram string, by []string, matchers ...string) string {
	return fmt.Sprintf("histogram_quantile(%g, %s)", q, rate(histogram+"_bucket", append([]string{"le"}, by...), matchers...))
}

// ds references the datasource chosen in a datasource variable.
func ds(typ, variable string) common.DataSourceRef {
	uid := "${" + variable + "}"
	return common.DataSourceRef{Type: &typ, Uid: &uid}
}

// promTarget is one Prometheus target on the dashboard's datasource
// variable, written in code mode; promQuery and promInstant say how it is
// evaluated.
func promTarget(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return prometheus.NewDataqueryBuilder().
		Datasource(ds(TypePrometheus, VarPrometheus)).
		RefId(ref).
		Expr(expr).
		LegendFormat(legend).
		EditorMode(prometheus.QueryEditorModeCode)
}

// promQuery is one Prometheus target over the time range.
func promQuery(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return promTarget(ref, expr, legend).Range()
}

// series is a time series panel over Prometheus.
func series(title, description, unit string, targets ...cog.Builder[variants.Dataquery]) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds(TypePrometheus, VarPrometheus)).
		Unit(unit).
		Height(8).
		Span(12).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"lastNotNull", "max"}))
	for _, t := range targets {
		p.WithTarget(t)
	}
	return p
}

// PoolDashboard builds the "MCP pool" dashboard: the pool's Prometheus
// metrics per pool and key, the traces behind its misses on Tempo, and its
// CPU split by phase on Pyroscope.
//
// It uses the Foundation SDK's v1 dashboard builder, which the SDK marks
// deprecated in favour of dashboardv2, on purpose: Grafana's file
// provisioning (the provider in provisioning/dashboards, and "Import
// dashboard") loads the classic v1 JSON model, while v2 resources are only
// served by the newer dashboard API. The lint:ignore directives below say so
// to staticcheck.
//
//lint:ignore SA1019 file provisioning imports the v1 JSON model; see above.
func PoolDashboard() (dashboard.Dashboard, error) {
	//lint:ignore SA1019 file provisioning imports the v1 JSON model; see PoolDashboard.
	b := dashboard.NewDashboardBuilder("MCP pool").
		Uid(PoolUID).
		Description("Is the MCP connection pool hitting? Hit rate against its ceiling, misses by reason, latency, sessions, evictions and failures from the pool's Prometheus metrics; the traces of unexplained misses and of executions that used more than one session; CPU by phase. Generated by github.com/mcptrace/mcptrace/dashboards: edit the generator, not this JSON.").
		Tags([]string{"mcp", "mcptrace", "pool"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("10s").
		Time("now-30m", "now").
		Timezone(common.TimeZoneBrowser).
		Variables(variables())

	b.WithRow(dashboard.NewRowBuilder("Is the pool hitting?"))
	b.WithPanel(series("Hit rate against its ceiling",
		"Hits / acquires over the rate interval, and since the pools started, against 1 − cold-start floor: the floor is cold misses / acquires (the first acquire of each key in each pool), the miss rate no pool can beat. A hit rate below the ceiling is excess misses to chase.",
		"percentunit",
		promQuery("A", fmt.Sprintf("%s / %s", rate(metricAcquires, nil, poolKeySelector, hitSelector), rate(metricAcquires, nil, poolKeySelector)), "hit rate"),
		promQuery("B", fmt.Sprintf("sum(%s%s) / sum(%s%s)", metricAcquires, sel(poolKeySelector, hitSelector), metricAcquires, sel(poolKeySelector)), "hit rate since start"),
		promQuery("C", fmt.Sprintf("1 - sum(%s%s) / sum(%s%s)", metricAcquires, sel(poolKeySelector, coldSelector), metricAcquires, sel(poolKeySelector)), "ceiling (1 − cold-start floor)"),
	).Min(0).Max(1))
	b.WithPanel(stat.NewPanelBuilder().
		Title("Excess misses").
		Description("Misses above the cold-start floor, as a share of acquires since the pools started: (misses − cold misses) / acquires. Zero means every miss was an unavoidable cold start.").
		Datasource(ds(TypePrometheus, VarPrometheus)).
		Unit("percentunit").
		Height(8).
		Span(6).
		GraphMode(common.BigValueGraphModeArea).
		ColorMode(common.BigValueColorModeValue).
		Thresholds(dashboard.NewThresholdsConfigBuilder().
			Mode(dashboard.ThresholdsModeAbsolute).
			Steps([]dashboard.Threshold{{Value: nil, Color: "green"}, {Value: ptr(0.05), Color: "orange"}, {Value: ptr(0.2), Color: "red"}})).
		WithTarget(promQuery("A", fmt.Sprintf("(sum(%s%s) - sum(%s%s)) / sum(%s%s)",
			metricAcquires, sel(poolKeySelector, missSelector),
			metricAcquires, sel(poolKeySelector, coldSelector),
			metricAcquires, sel(poolKeySelector)), "excess misses")))
	b.WithPanel(stat.NewPanelBuilder().
		Title("Acquires").
		Description("Acquires since the pools started, hits and misses together.").
		Datasource(ds(TypePrometheus, VarPrometheus)).
		Unit("short").
		Height(8).
		Span(6).
		GraphMode(common.BigValueGraphModeArea).
		WithTarget(promQuery("A", fmt.Sprintf("sum(%s%s)", metricAcquires, sel(poolKeySelector)), "acquires")))

	b.WithRow(dashboard.NewRowBuilder("Traffic and misses"))
	b.WithPanel(series("Acquires and handshakes per second",
		"Every acquire, hit or miss, and every handshake (a new session dialed and initialized). When the two lines meet, the pool dials per call. Handshakes are per pool only: the handshake metric has no key label, so a key selection narrows the acquires but not the handshakes.",
		"reqps",
		promQuery("A", rate(metricAcquires, nil, poolKeySelector), "acquires/s"),
		promQuery("B", fmt.Sprintf("sum (rate(%s_count%s[%s]))", metricCreateTime, sel(poolSelector), rateInterval), "handshakes/s (pool)"),
	))
	b.WithPanel(series("Misses by reason",
		"Misses per second by the reason the pool recorded: cold, concurrent, ttl, redial, after_failure, health_check, evicted.",
		"reqps",
		promQuery("A", rate(metricAcquires, []string{labelMissReason}, poolKeySelector, missSelector), "{{"+labelMissReason+"}}"),
	).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).FillOpacity(30))

	b.WithRow(dashboard.NewRowBuilder("Latency"))
	b.WithPanel(series("Acquire latency: hit and miss (p50, p99)",
		"Time to acquire a session. A hit is a lock and a pop; a miss includes the handshake.",
		"s",
		promQuery("A", quantile(0.5, metricWaitTime, nil, poolKeySelector, hitSelector), "hit p50"),
		promQuery("B", quantile(0.99, metricWaitTime, nil, poolKeySelector, hitSelector), "hit p99"),
		promQuery("C", quantile(0.5, metricWaitTime, nil, poolKeySelector, missSelector), "miss p50"),
		promQuery("D", quantile(0.99, metricWaitTime, nil, poolKeySelector, missSelector), "miss p99"),
	))
	b.WithPanel(series("Handshake latency (p50, p99)",
		"Dial plus MCP initialize of a new session: what every miss costs. Per pool only: the handshake metric has no key label, so the key selection does not narrow it.",
		"s",
		promQuery("A", quantile(0.5, metricCreateTime, nil, poolSelector), "p50"),
		promQuery("B", quantile(0.99, metricCreateTime, nil, poolSelector), "p99"),
	))
	b.WithPanel(series("Call latency by tool (p50, p99)",
		"tools/call duration on a leased session, by tool. Per pool only: the call metric has no key label, so the key selection does not narrow it.",
		"s",
		promQuery("A", quantile(0.5, metricOpDuration, []string{labelToolName}, poolSelector, fmt.Sprintf(`%s="%s"`, labelMethod, spans.MethodToolsCall)), "{{"+labelToolName+"}} p50"),
		promQuery("B", quantile(0.99, metricOpDuration, []string{labelToolName}, poolSelector, fmt.Sprintf(`%s="%s"`, labelMethod, spans.MethodToolsCall)), "{{"+labelToolName+"}} p99"),
	))
	b.WithPanel(series("Lease hold time (p50, p99)",
		"How long callers keep a session leased; long holds force concurrent misses.",
		"s",
		promQuery("A", quantile(0.5, metricUseTime, nil, poolKeySelector), "p50"),
		promQuery("B", quantile(0.99, metricUseTime, nil, poolKeySelector), "p99"),
	))

	b.WithRow(dashboard.NewRowBuilder("Sessions, evictions, failures"))
	b.WithPanel(series("Idle and in-use sessions",
		"Sessions the pools hold, by state. Per pool only: the gauge has no key label.",
		"short",
		promQuery("A", fmt.Sprintf("sum by (%s) (%s%s)", labelState, metricConnCount, sel(poolSelector)), "{{"+labelState+"}}"),
	))
	b.WithPanel(series("Evictions by reason",
		"Idle sessions closed per second: ttl (idle too long), idle_limit (per-key cap), lru (global cap), health_check (ping failed), pool_closed. Per pool only: the eviction metric has no key label, so the key selection does not narrow it.",
		"ops",
		promQuery("A", rate(metricEvictions, []string{labelEviction}, poolSelector), "{{"+labelEviction+"}}"),
	))
	b.WithPanel(series("Redials and failures",
		"Transparent redials of reused sessions the server forgot, and sessions dropped after a failed lease, by error type. Redials are per pool only (the redial metric has no key label); failures follow the key selection.",
		"ops",
		promQuery("A", rate(metricRedials, nil, poolSelector), "redials (pool)"),
		promQuery("B", rate(metricFailures, []string{labelErrorType}, poolKeySelector), "failed: {{"+labelErrorType+"}}"),
	).Span(24))

	b.WithRow(dashboard.NewRowBuilder("Traces"))
	b.WithPanel(traceTable("Recent unexplained misses",
		"Acquire spans that missed with no explaining reason: miss_reason absent or not one of "+strings.Join(spans.ExplainedMissReasons, ", ")+" (the definition `mcptrace analyze` uses). The regression to chase.",
		"A", UnexplainedMissesTraceQL()))
	b.WithPanel(traceTable("Executions with more than one session",
		"Traces in which more than one acquire opened a session: calls of one execution that landed on different downstream sessions, which breaks stateful servers.",
		"A", MultiSessionTraceQL()))

	b.WithRow(dashboard.NewRowBuilder("Profiles"))
	b.WithPanel(timeseries.NewPanelBuilder().
		Title("CPU by phase").
		Description("CPU time of the pool's work, split by the pprof label phase: handshake (dial and initialize) against call (tools/call).").
		Datasource(ds(TypePyroscope, VarPyroscope)).
		Unit("ns").
		Height(8).
		Span(24).
		WithTarget(pyroscopeQuery("A", "", grafanapyroscope.PyroscopeQueryTypeMetrics).GroupBy([]string{spans.PprofLabelPhase})))
	b.WithPanel(flameGraph("Flame graph: handshake", spans.PhaseHandshake))
	b.WithPanel(flameGraph("Flame graph: call", spans.PhaseCall))

	d, err := b.Build()
	if err != nil {
		return d, err
	}
	numberPanels(&d)
	return d, nil
}

// numberPanels gives every panel and row a unique id in layout order, which
// Grafana needs for panel links and the panel view.
//
//lint:ignore SA1019 file provisioning imports the v1 JSON model; see PoolDashboard.
func numberPanels(d *dashboard.Dashboard) {
	id := uint32(0)
	for _, p := range d.Panels {
		id++
		switch {
		case p.Panel != nil:
			p.Panel.Id = ptr(id)
		case p.RowPanel != nil:
			p.RowPanel.Id = id
			for i := range p.RowPanel.Panels {
				id++
				p.RowPanel.Panels[i].Id = ptr(id)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// variables are the dashboard's template variables: a datasource variable
// per backend (never a hard-coded uid), pool and key from the metrics, and
// the Pyroscope service.
func variables() []cog.Builder[dashboard.VariableModel] {
	service := dashboard.StringOrMap{String: ptr(DefaultPyroscopeService)}
	return []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder(VarPrometheus).Label("Prometheus").Type(TypePrometheus),
		dashboard.NewDatasourceVariableBuilder(VarTempo).Label("Tempo").Type(TypeTempo),
		dashboard.NewDatasourceVariableBuilder(VarPyroscope).Label("Pyroscope").Type(TypePyroscope),
		labelValuesVariable(VarPool, "Pool", "Pool scope (plugin.mcp.pool.id).",
			fmt.Sprintf("label_values(%s, %s)", metricAcquires, labelPool)),
		labelValuesVariable(VarKey, "Key", "Hashed pool key (plugin.mcp.cache_key). Narrows acquires, acquire latency, lease hold time, failures and the traces; handshakes, call latency, evictions, redials and the session gauge are per pool only (those metrics have no key label).",
			fmt.Sprintf("label_values(%s{%s}, %s)", metricAcquires, poolSelector, labelKey)),
		dashboard.NewTextBoxVariableBuilder(VarService).
			Label("Pyroscope service").
			Description("service_name of the profiled process in Pyroscope.").
			DefaultValue(service).
			Current(dashboard.VariableOption{
				Text:  dashboard.StringOrArrayOfString{String: ptr(DefaultPyroscopeService)},
				Value: dashboard.StringOrArrayOfString{String: ptr(DefaultPyroscopeService)},
			}),
	}
}

// labelValuesVariable is a multi-select variable over a Prometheus label's
// values (query, a label_values expression), All by default and matching
// every value with AllValue: one shape for every label variable of both
// dashboards, so they filter alike.
func labelValuesVariable(name, label, description, query string) cog.Builder[dashboard.VariableModel] {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Description(description).
		Datasource(ds(TypePrometheus, VarPrometheus)).
		Query(dashboard.StringOrMap{String: ptr(query)}).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(AllValue).
		Current(dashboard.VariableOption{
			Selected: ptr(true),
			Text:     dashboard.StringOrArrayOfString{String: ptr("All")},
			Value:    dashboard.StringOrArrayOfString{String: ptr("$__all")},
		})
}

// traceAttr is a span attribute in TraceQL.
func traceAttr(key string) string { return "span." + key }

// UnexplainedMissesTraceQL selects acquire spans that missed for no reason
// the pool explains, in the selected pool and key: the shared definition
// [spans.TraceQLUnexplainedMiss] (reason absent or outside
// [spans.ExplainedMissReasons]) narrowed by a further pipeline stage.
func UnexplainedMissesTraceQL() string {
	return fmt.Sprintf(`%s | { %s =~ "${%s}" && %s =~ "${%s}" }`,
		spans.TraceQLUnexplainedMiss,
		traceAttr(spans.AttrPoolID), VarPool,
		traceAttr(spans.AttrCacheKey), VarKey)
}

// MultiSessionTraceQL selects traces with more than one successful miss:
// each opened a session, so the trace's calls used more than one.
func MultiSessionTraceQL() string {
	return fmt.Sprintf(`{ name = "%s" && %s = false && status != error && %s =~ "${%s}" && %s =~ "${%s}" } | count() > 1`,
		spans.SpanAcquire,
		traceAttr(spans.AttrCacheHit),
		traceAttr(spans.AttrPoolID), VarPool,
		traceAttr(spans.AttrCacheKey), VarKey)
}

// traceTable is a table of Tempo search results.
func traceTable(title, description, ref, query string) *table.PanelBuilder {
	return table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds(TypeTempo, VarTempo)).
		Height(10).
		Span(12).
		WithTarget(tempo.NewDataqueryBuilder().
			Datasource(ds(TypeTempo, VarTempo)).
			RefId(ref).
			QueryType("traceql").
			Query(query).
			Limit(20).
			TableType(tempo.SearchTableTypeTraces))
}

// pyroscopeQuery is a CPU profile query for the Pyroscope service,
// optionally narrowed to one phase.
func pyroscopeQuery(ref, phase string, queryType grafanapyroscope.PyroscopeQueryType) *grafanapyroscope.DataqueryBuilder {
	selector := pyroscopeService
	if phase != "" {
		selector += fmt.Sprintf(`, %s="%s"`, spans.PprofLabelPhase, phase)
	}
	return grafanapyroscope.NewDataqueryBuilder().
		Datasource(ds(TypePyroscope, VarPyroscope)).
		RefId(ref).
		QueryType(string(queryType)).
		ProfileTypeId(ProfileTypeCPU).
		LabelSelector("{" + selector + "}").
		GroupBy([]string{})
}

// flameGraph is a flame graph of one phase's CPU profile.
func flameGraph(title, phase string) *dashboard.PanelBuilder {
	return dashboard.NewPanelBuilder().
		Type("flamegraph").
		Title(title).
		Description(fmt.Sprintf("CPU profile of the pool's %s phase (pprof label %s=%q), merged over the time range.", phase, spans.PprofLabelPhase, phase)).
		Datasource(ds(TypePyroscope, VarPyroscope)).
		Height(12).
		Span(12).
		WithTarget(pyroscopeQuery("A", phase, grafanapyroscope.PyroscopeQueryTypeProfile))
}
