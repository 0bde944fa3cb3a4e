package dashboards

import (
	"fmt"
	"slices"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/table"

	"github.com/mcptrace/mcptrace/spans"
)

// FleetUID is the uid of the "MCP pool fleet" dashboard, stable so links and
// provisioning survive regeneration.
const FleetUID = "mcptrace-mcp-pool-fleet"

// VarRule is the fleet dashboard's rule variable (mcptrace.rule.id).
const VarRule = "rule"

// Titles of the fleet dashboard's panels whose values a test checks against
// what the connector counted.
const (
	FleetPanelHitRate          = "Hit rate against the cold-start floor, per pool"
	FleetPanelHitRateSince     = "Hit rate and cold-start floor since the collectors started"
	FleetPanelMissesByCause    = "Misses by cause"
	FleetPanelMissesSince      = "Misses by cause since the collectors started"
	FleetPanelUnexplained      = "Unexplained misses"
	FleetPanelMultiSession     = "Executions on more than one session"
	FleetPanelViolations       = "Rule violations by rule"
	FleetPanelViolationsSince  = "Rule violations since the collectors started"
	FleetPanelConnectorTraces  = "Finalized, cut and late"
	FleetPanelConnectorSummary = "Traces finalized since the collectors started"
)

// Prometheus names of the mcptrace connector's metrics and labels.
var (
	fleetAcquires   = promName(spans.ConnectorMetricAcquires, "_total")
	fleetExecutions = promName(spans.ConnectorMetricExecutions, "_total")
	fleetViolations = promName(spans.ConnectorMetricRuleViolations, "_total")
	fleetFinalized  = promName(spans.ConnectorMetricTracesFinalized, "_total")
	fleetCut        = promName(spans.ConnectorMetricTracesCut, "_total")
	fleetLate       = promName(spans.ConnectorMetricTracesLateSpans, "_total")

	labelCause        = promLabel(spans.AttrMissCause)
	labelMultiSession = promLabel(spans.AttrMultiSession)
	labelRule         = promLabel(spans.AttrRuleID)
	labelSeverity     = promLabel(spans.AttrRuleSeverity)

	ruleSelector       = fmt.Sprintf(`%s=~"${%s}"`, labelRule, VarRule)
	coldCauseSelector  = fmt.Sprintf(`%s="%s"`, labelCause, spans.MissCold)
	unexplainedCauses  = fmt.Sprintf(`%s!~"%s"`, labelCause, strings.Join(append(slices.Clone(spans.ExplainedMissReasons), spans.MissCauseUnknown), "|"))
	unknownCause       = fmt.Sprintf(`%s="%s"`, labelCause, spans.MissCauseUnknown)
	multiSessionSelect = fmt.Sprintf(`%s="true"`, labelMultiSession)
)

// unknownWhy says when the connector counts a miss under cause
// spans.MissCauseUnknown, and unknownFloorNote what that makes of the
// cold-start floor, for the panels that read either.
const (
	unknownWhy       = "acquire spans without a cache key: no target identity, so the analyzer cannot tell a concurrent, ttl, after_failure, health_check, evicted or unexplained miss from a miss of another target"
	unknownFloorNote = "Where a pool has misses of cause " + spans.MissCauseUnknown + " (" + unknownWhy + "), some may be cold: its floor is then a lower bound and its ceiling an upper bound."
)

// byPool is the grouping every per-pool ratio uses: the counters are summed
// per pool across collectors first, then divided.
var byPool = []string{labelPool}

// sinceStart is sum by (labels) (metric{matchers}): the cumulative counters
// summed across collectors, exact as long as none restarted.
func sinceStart(metric string, by []string, matchers ...string) string {
	return fmt.Sprintf("%s (%s%s)", sumBy(by), metric, sel(matchers...))
}

// ratio is num / den per pool, where a pool that den has and num lacks
// (no hits, no cold misses) reads 0 instead of vanishing from the panel.
func ratio(num, den string) string {
	return fmt.Sprintf("(%s or 0 * %s) / %s", num, den, den)
}

// promInstant is one Prometheus target evaluated once, at the end of the
// time range, as a table.
func promInstant(ref, expr, legend string) *prometheus.DataqueryBuilder {
	return promTarget(ref, expr, legend).Format(prometheus.PromQueryFormatTable).Instant()
}

// sinceTable is a table of instant Prometheus queries.
func sinceTable(title, description, unit string, targets ...*prometheus.DataqueryBuilder) *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Title(title).
		Description(description).
		Datasource(ds(TypePrometheus, VarPrometheus)).
		Unit(unit).
		Height(8).
		Span(12)
	for _, t := range targets {
		p.WithTarget(t)
	}
	return p
}

// FleetDashboard builds the "MCP pool fleet" dashboard: the mcptrace
// Collector connector's metrics (the analyzer's verdicts counted in-stream,
// per finalized trace) summed across every collector of a fleet, per pool.
// Ratios are taken of sums of counters, never averaged per collector, so
// they stay right however the traces are spread over the collectors.
//
// Like [PoolDashboard] it uses the v1 dashboard model on purpose (file
// provisioning loads it).
//
//lint:ignore SA1019 file provisioning imports the v1 JSON model; see PoolDashboard.
func FleetDashboard() (dashboard.Dashboard, error) {
	//lint:ignore SA1019 file provisioning imports the v1 JSON model; see PoolDashboard.
	b := dashboard.NewDashboardBuilder("MCP pool fleet").
		Uid(FleetUID).
		Description("Is the fleet of MCP pools hitting, as mcptrace judges it from whole traces? Hit rate against the cold-start floor per pool, misses by cause, unexplained misses, executions on more than one session, rule violations by rule, and the connector's own finalized, cut and late counts, from the mcptrace Collector connector's metrics summed across collectors. Generated by github.com/mcptrace/mcptrace/dashboards: edit the generator, not this JSON.").
		Tags([]string{"mcp", "mcptrace", "pool", "collector"}).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Refresh("30s").
		Time("now-6h", "now").
		Timezone(common.TimeZoneBrowser).
		Variables(fleetVariables())

	all := func(extra ...string) []string { return append([]string{poolSelector}, extra...) }
	hitRate := ratio(rate(fleetAcquires, byPool, all(hitSelector)...), rate(fleetAcquires, byPool, all()...))
	ceiling := "1 - " + ratio(rate(fleetAcquires, byPool, all(coldCauseSelector)...), rate(fleetAcquires, byPool, all()...))

	b.WithRow(dashboard.NewRowBuilder("Is the fleet hitting?"))
	b.WithPanel(series(FleetPanelHitRate,
		"Hits / acquires per pool over the rate interval, against the ceiling 1 − cold-start floor, where the floor is cold misses / acquires (the first acquire of each key in each pool: the misses no pool can avoid; a pool without hits or cold misses reads 0). Both are ratios of counters summed over every collector first (sum by pool of rate), so they stay right however the traces are spread. Across several collectors routed by trace id both are exact when the collectors forward acquires to a pair tier (attribution: forward); with local attribution the floor is an upper bound (a key seen by k collectors counts k cold starts), so the ceiling is a lower bound. "+unknownFloorNote,
		"percentunit",
		promQuery("A", hitRate, "{{"+labelPool+"}} hit rate"),
		promQuery("B", ceiling, "{{"+labelPool+"}} ceiling (1 − cold-start floor)"),
	).Min(0).Max(1))
	b.WithPanel(sinceTable(FleetPanelHitRateSince,
		"Per pool, from the counters since the collectors started (a restarted collector starts its counters again from zero): hits / acquires and cold misses / acquires. "+unknownFloorNote,
		"percentunit",
		promInstant("A", ratio(sinceStart(fleetAcquires, byPool, all(hitSelector)...), sinceStart(fleetAcquires, byPool, all()...)), "{{"+labelPool+"}} hit rate"),
		promInstant("B", ratio(sinceStart(fleetAcquires, byPool, all(coldCauseSelector)...), sinceStart(fleetAcquires, byPool, all()...)), "{{"+labelPool+"}} cold-start floor"),
	))

	b.WithRow(dashboard.NewRowBuilder("Misses"))
	b.WithPanel(series(FleetPanelMissesByCause,
		"Misses per second by pool and the cause the analyzer attributed from whole traces: "+strings.Join(spans.MissReasons, ", ")+", or "+spans.MissCauseUnknown+" where the spans cannot show it ("+unknownWhy+"). Causes are judged against the history of the (pool, key) pair each collector saw: across collectors, a concurrent lease held on another collector reads as another cause.",
		"reqps",
		promQuery("A", rate(fleetAcquires, []string{labelPool, labelCause}, all(missSelector)...), "{{"+labelPool+"}} {{"+labelCause+"}}"),
	).Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal)).FillOpacity(30))
	b.WithPanel(series(FleetPanelUnexplained,
		"Misses nothing explains (no cause among "+strings.Join(spans.ExplainedMissReasons, ", ")+": "+spans.MissUnexplained+", and "+spans.MissEvicted+" by the idle caps, the analyzer's unexplained_misses), per second per pool: sessions the pool should have reused. The regression to chase; find the traces with the \"MCP pool\" dashboard's trace panel or mcptrace analyze. Beside them, the misses of cause "+spans.MissCauseUnknown+" ("+unknownWhy+"): the unexplained misses among them cannot be told apart, so where a pool has any, its unexplained count is only a lower bound, and 0 is no all-clear.",
		"reqps",
		promQuery("A", rate(fleetAcquires, byPool, all(missSelector, unexplainedCauses)...), "{{"+labelPool+"}} unexplained/s"),
		promQuery("B", rate(fleetAcquires, byPool, all(unknownCause)...), "{{"+labelPool+"}} cause unknown/s (may hold unexplained)"),
	))
	b.WithPanel(sinceTable(FleetPanelMissesSince,
		"Misses per pool and cause, counted since the collectors started.",
		"short",
		promInstant("A", sinceStart(fleetAcquires, []string{labelPool, labelCause}, all(missSelector)...), "{{"+labelPool+"}} {{"+labelCause+"}}"),
	).Span(24))

	b.WithRow(dashboard.NewRowBuilder("Executions and rules"))
	b.WithPanel(series(FleetPanelMultiSession,
		"Executions (traces) per second per pool, and those whose calls landed on more than one downstream session, which breaks stateful servers. An execution counts under the pool of its first tool call.",
		"ops",
		promQuery("A", rate(fleetExecutions, byPool, all()...), "{{"+labelPool+"}} executions/s"),
		promQuery("B", rate(fleetExecutions, byPool, all(multiSessionSelect)...), "{{"+labelPool+"}} on several sessions/s"),
	))
	b.WithPanel(series(FleetPanelViolations,
		"Per-trace and per-subtree rule violations per second, by rule and severity (dump-wide rules are not evaluated in-stream: run mcptrace check on a dump for those). The violation metric has no pool label: the pool selection does not narrow it.",
		"ops",
		promQuery("A", rate(fleetViolations, []string{labelRule, labelSeverity}, ruleSelector), "{{"+labelRule+"}} ({{"+labelSeverity+"}})"),
	))
	b.WithPanel(sinceTable(FleetPanelViolationsSince,
		"Rule violations by rule and severity since the collectors started. Per rule only, whatever the pool selection.",
		"short",
		promInstant("A", sinceStart(fleetViolations, []string{labelRule, labelSeverity}, ruleSelector), "{{"+labelRule+"}} ({{"+labelSeverity+"}})"),
	).Span(24))

	b.WithRow(dashboard.NewRowBuilder("The connector"))
	b.WithPanel(series(FleetPanelConnectorTraces,
		"Traces the connectors finalized per second, those cut (finalized early to keep max_open_traces: their later spans arrive late), and spans that arrived after their trace was finalized (not analysed: raise wait if this is not zero). Fleet-wide: these counters have no pool label.",
		"ops",
		promQuery("A", rate(fleetFinalized, nil), "finalized traces/s"),
		promQuery("B", rate(fleetCut, nil), "cut traces/s"),
		promQuery("C", rate(fleetLate, nil), "late spans/s"),
	))
	b.WithPanel(sinceTable(FleetPanelConnectorSummary,
		"Traces finalized, traces cut and late spans since the collectors started, fleet-wide.",
		"short",
		promInstant("A", sinceStart(fleetFinalized, nil), "finalized traces"),
		promInstant("B", sinceStart(fleetCut, nil), "cut traces"),
		promInstant("C", sinceStart(fleetLate, nil), "late spans"),
	))

	d, err := b.Build()
	if err != nil {
		return d, err
	}
	numberPanels(&d)
	return d, nil
}

// fleetVariables are the fleet dashboard's template variables: the
// Prometheus datasource, the pools and the rules the connector reported.
func fleetVariables() []cog.Builder[dashboard.VariableModel] {
	return []cog.Builder[dashboard.VariableModel]{
		dashboard.NewDatasourceVariableBuilder(VarPrometheus).Label("Prometheus").Type(TypePrometheus),
		labelValuesVariable(VarPool, "Pool", "Pool scope (plugin.mcp.pool.id) the connector counted acquires for.",
			fmt.Sprintf("label_values(%s, %s)", fleetAcquires, labelPool)),
		labelValuesVariable(VarRule, "Rule", "Rule id (mcptrace.rule.id) with violations. Narrows the violation panels only.",
			fmt.Sprintf("label_values(%s, %s)", fleetViolations, labelRule)),
	}
}
