package mcptraceconnector

import "github.com/mcptrace/mcptrace/spans"

// The connector's output contract, spelled once in package spans
// (the vocabulary, which the dashboards generator reads too). Dashboards and
// users' alerts depend on these names: change them only with a migration
// note. The
// Prometheus exporter turns dots into underscores and adds _total to
// counters (mcptrace.pool.acquires → mcptrace_pool_acquires_total).
const (
	// MetricAcquires counts acquires by AttrPoolID, AttrCacheHit and, on
	// misses, AttrMissCause.
	MetricAcquires = spans.ConnectorMetricAcquires
	// MetricHandshakes counts handshakes by AttrPoolID.
	MetricHandshakes = spans.ConnectorMetricHandshakes
	// MetricExecutions counts executions by AttrPoolID and AttrMultiSession.
	MetricExecutions = spans.ConnectorMetricExecutions
	// MetricRuleViolations counts rule violations by AttrRuleID and
	// AttrRuleSeverity.
	MetricRuleViolations = spans.ConnectorMetricRuleViolations
	// MetricTracesFinalized counts traces finalized for any reason, cut
	// ones included.
	MetricTracesFinalized = spans.ConnectorMetricTracesFinalized
	// MetricTracesLateSpans counts spans that arrived after their trace was
	// finalized; they are not analysed.
	MetricTracesLateSpans = spans.ConnectorMetricTracesLateSpans
	// MetricTracesCut counts traces finalized early by max_open_traces.
	MetricTracesCut = spans.ConnectorMetricTracesCut
	// MetricAcquiresPending is the pairs leg's gauge of acquires held for
	// attribution (attribution: forward).
	MetricAcquiresPending = spans.ConnectorMetricAcquiresPending
)

// Attribute keys of the metrics and log records. No trace, span or session
// id is ever a metric attribute, and plugin.mcp.cache_key is left out, so
// the cardinality is bounded by pools × causes × rules.
const (
	// AttrPoolID names the pool scope (the pool's own span attribute).
	AttrPoolID = spans.AttrPoolID
	// AttrCacheHit is true when the acquire reused an idle session.
	AttrCacheHit = spans.AttrCacheHit
	// AttrMissCause is the analyzer's attribution of a miss; absent on hits.
	AttrMissCause = spans.AttrMissCause
	// AttrMultiSession is true when an execution used more than one session.
	AttrMultiSession = spans.AttrMultiSession
	// AttrRuleID names a rule.
	AttrRuleID = spans.AttrRuleID
	// AttrRuleSeverity is the rule's severity: error or warning.
	AttrRuleSeverity = spans.AttrRuleSeverity
	// AttrFinding is the finding text on a violation's log record.
	AttrFinding = spans.AttrFinding
	// AttrTraceQL is the TraceQL query that finds a violation in Tempo.
	AttrTraceQL = spans.AttrTraceQL
)
