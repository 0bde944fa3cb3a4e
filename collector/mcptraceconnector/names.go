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
	// misses, AttrMissCause: a cause the analyzer attributed, or
	// MissCauseUnknown for the misses whose cause the spans cannot show.
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
	// AttrMissCause is the analyzer's attribution of a miss (one of
	// spans.MissReasons), or MissCauseUnknown; absent on hits.
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

// MissCauseUnknown is AttrMissCause on a miss whose cause the spans of its
// pool cannot show, as mcptrace analyze on those spans marks that cause's
// figure not measurable or only an upper bound: once one of a pool's
// acquire spans carried no target identity (no cache key), the pool's
// misses that would read concurrent, ttl, after_failure, health_check,
// evicted or unexplained count here instead, and so do a server-side
// writer's unexplained misses, which may be redials it never saw refused,
// so that no series claims a cause the spans do not support and the
// series still sum to the misses. Cold and redial misses keep their cause
// (cold is then a lower bound: some unknown misses may be cold too);
// another pool's keys are kept apart, and its causes kept.
// One value, so the metric's cardinality stays pools × causes; the
// connector logs why once per reason.
const MissCauseUnknown = spans.MissCauseUnknown
