package mcptraceconnector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

type acquireKey struct {
	pool  string
	hit   bool
	cause string
}

type executionKey struct {
	pool  string
	multi bool
}

type violationKey struct {
	rule, severity string
}

// aggregates are the cumulative sums of every outcome since start. They only
// grow, which is what makes them exact when summed across collectors.
type aggregates struct {
	start      pcommon.Timestamp
	acquires   map[acquireKey]int64
	handshakes map[string]int64
	executions map[executionKey]int64
	violations map[violationKey]int64
	// dirty is set when an outcome added something since the last emit.
	dirty bool
}

func newAggregates(start time.Time) *aggregates {
	return &aggregates{
		start:      pcommon.NewTimestampFromTime(start),
		acquires:   make(map[acquireKey]int64),
		handshakes: make(map[string]int64),
		executions: make(map[executionKey]int64),
		violations: make(map[violationKey]int64),
	}
}

// add sums one trace's outcome in.
func (a *aggregates) add(o traceOutcome) {
	if len(o.Acquires)+len(o.Handshakes)+len(o.Executions)+len(o.Violations) > 0 {
		a.dirty = true
	}
	for _, x := range o.Acquires {
		a.acquires[acquireKey{x.PoolID, x.CacheHit, x.MissCause}] += x.N
	}
	for _, x := range o.Handshakes {
		a.handshakes[x.PoolID] += x.N
	}
	for _, x := range o.Executions {
		a.executions[executionKey{x.PoolID, x.MultiSession}] += x.N
	}
	for _, x := range o.Violations {
		a.violations[violationKey{x.RuleID, x.Severity}]++
	}
}

// finalize hands each trace to the analyzer and, when measure is set or
// completeGroup traces are waiting, has it measure every trace handed over
// since the last time as one group; it sums the outcomes (metrics leg) or
// sends their violations as log records (logs leg).
func (c *mcptraceConnector) finalize(ctx context.Context, traces []finalizedTrace, measure bool) error {
	c.finMu.Lock()
	defer c.finMu.Unlock()
	if len(traces) == 0 && (!measure || c.pending == 0) {
		return nil
	}
	var found []ruleViolation
	var pairs []analyze.PairEvent
	for _, ft := range traces {
		o := c.analyzer.Finalize(ft.id, ft.spans, ft.reason)
		if c.metrics != nil {
			c.agg.add(o)
		}
		found = append(found, o.Violations...)
		pairs = append(pairs, o.Pairs...)
	}
	c.pending += len(traces)
	if measure || c.pending >= completeGroup {
		c.measured += int64(c.pending)
		c.pending = 0
		o := c.analyzer.Attribute()
		if c.metrics != nil {
			c.agg.add(o)
		}
		found = append(found, o.Violations...)
		pairs = append(pairs, o.Pairs...)
	}
	if c.logs == nil {
		return nil
	}
	var errs []error
	if len(found) > 0 {
		if err := c.logs.ConsumeLogs(ctx, violationLogs(found)); err != nil {
			errs = append(errs, fmt.Errorf("mcptrace: send %d violation records: %w", len(found), err))
		}
	}
	if len(pairs) > 0 {
		if err := c.logs.ConsumeLogs(ctx, pairLogs(pairs)); err != nil {
			errs = append(errs, fmt.Errorf("mcptrace: forward %d acquire records: %w", len(pairs), err))
		}
	}
	return errors.Join(errs...)
}

// emitCounters sends the cumulative counters on the metrics leg: always
// when force is set, otherwise at the first sweep, when they changed, or
// at the heartbeat.
func (c *mcptraceConnector) emitCounters(ctx context.Context, force bool) error {
	if c.metrics == nil {
		return nil
	}
	counts, _ := c.buf.snapshot()
	c.finMu.Lock()
	defer c.finMu.Unlock()
	// The buffer has counted traces that wait in pending to be measured;
	// the counters say finalized only once their figures are counted too.
	counts.finalized = c.measured
	if lost := counts.lostParts - c.lastCounts.lostParts; lost > 0 {
		c.logger.Warn("mcptrace: held spans of finalized traces would not decode and were not analysed (a bug: please report it)",
			zap.Int64("parts", lost), zap.Int64("total", counts.lostParts))
	}
	c.idleSweeps++
	if !force && c.emitted && counts == c.lastCounts && c.idleSweeps < heartbeatSweeps && !c.agg.dirty {
		return nil
	}
	md := c.agg.metrics(&counts, pcommon.NewTimestampFromTime(time.Now()))
	c.emitted, c.lastCounts, c.idleSweeps, c.agg.dirty = true, counts, 0, false
	if err := c.metrics.ConsumeMetrics(ctx, md); err != nil {
		return fmt.Errorf("mcptrace: send counters: %w", err)
	}
	return nil
}

// metrics renders the counters as cumulative monotonic sums, series sorted
// so that the output is stable. counts are the traces legs' trace counters;
// nil (the pairs leg, which sees no traces) leaves them out.
func (a *aggregates) metrics(counts *bufferCounts, now pcommon.Timestamp) pmetric.Metrics {
	md := pmetric.NewMetrics()
	sm := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()

	sum := func(name, desc string) pmetric.NumberDataPointSlice {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetDescription(desc)
		m.SetUnit("{" + unitOf(name) + "}")
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		return s.DataPoints()
	}
	point := func(dps pmetric.NumberDataPointSlice, v int64) pcommon.Map {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(a.start)
		dp.SetTimestamp(now)
		dp.SetIntValue(v)
		return dp.Attributes()
	}

	if counts != nil {
		point(sum(MetricTracesFinalized, "Traces finalized (after wait, cut, at their root or at shutdown) and measured."), counts.finalized)
		point(sum(MetricTracesCut, "Traces finalized early to keep max_open_traces."), counts.cut)
		point(sum(MetricTracesLateSpans, "Spans that arrived after their trace was finalized; not analysed."), counts.lateSpans)
	}

	if len(a.acquires) > 0 {
		dps := sum(MetricAcquires, "Pool acquires by pool, hit and miss cause; miss cause "+MissCauseUnknown+
			" where the pool's spans cannot show it (no target identity, or a server that never sees a refused attempt), its cold misses then a lower bound.")
		for _, k := range slices.SortedFunc(maps.Keys(a.acquires), func(x, y acquireKey) int {
			return cmp.Or(cmp.Compare(x.pool, y.pool), cmpBool(x.hit, y.hit), cmp.Compare(x.cause, y.cause))
		}) {
			at := point(dps, a.acquires[k])
			at.PutStr(AttrPoolID, k.pool)
			at.PutBool(AttrCacheHit, k.hit)
			if !k.hit && k.cause != "" {
				at.PutStr(AttrMissCause, k.cause)
			}
		}
	}
	if len(a.handshakes) > 0 {
		dps := sum(MetricHandshakes, "Session handshakes by pool.")
		for _, pool := range slices.Sorted(maps.Keys(a.handshakes)) {
			point(dps, a.handshakes[pool]).PutStr(AttrPoolID, pool)
		}
	}
	if len(a.executions) > 0 {
		dps := sum(MetricExecutions, "Executions by pool and whether they used more than one session.")
		for _, k := range slices.SortedFunc(maps.Keys(a.executions), func(x, y executionKey) int {
			return cmp.Or(cmp.Compare(x.pool, y.pool), cmpBool(x.multi, y.multi))
		}) {
			at := point(dps, a.executions[k])
			at.PutStr(AttrPoolID, k.pool)
			at.PutBool(AttrMultiSession, k.multi)
		}
	}
	if len(a.violations) > 0 {
		dps := sum(MetricRuleViolations, "Rule violations by rule and severity.")
		for _, k := range slices.SortedFunc(maps.Keys(a.violations), func(x, y violationKey) int {
			return cmp.Or(cmp.Compare(x.rule, y.rule), cmp.Compare(x.severity, y.severity))
		}) {
			at := point(dps, a.violations[k])
			at.PutStr(AttrRuleID, k.rule)
			at.PutStr(AttrRuleSeverity, k.severity)
		}
	}
	return md
}

// unitOf names the counted thing for a metric's curly-brace unit.
func unitOf(name string) string {
	switch name {
	case MetricAcquires:
		return "acquire"
	case MetricHandshakes:
		return "handshake"
	case MetricExecutions:
		return "execution"
	case MetricRuleViolations:
		return "violation"
	case MetricTracesLateSpans:
		return "span"
	}
	return "trace"
}

func cmpBool(x, y bool) int {
	switch {
	case x == y:
		return 0
	case !x:
		return -1
	}
	return 1
}

// violationLogs renders violations as log records: trace and span ids set,
// the finding as body and attribute, severity mapped to the log severity.
func violationLogs(vs []ruleViolation) plog.Logs {
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	now := pcommon.NewTimestampFromTime(time.Now())
	for _, v := range vs {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetObservedTimestamp(now)
		lr.SetTraceID(v.TraceID)
		lr.SetSpanID(v.SpanID)
		lr.SetSeverityText(v.Severity)
		if v.Severity == "error" {
			lr.SetSeverityNumber(plog.SeverityNumberError)
		} else {
			lr.SetSeverityNumber(plog.SeverityNumberWarn)
		}
		lr.Body().SetStr(v.Finding)
		at := lr.Attributes()
		at.PutStr(AttrRuleID, v.RuleID)
		at.PutStr(AttrRuleSeverity, v.Severity)
		at.PutStr(AttrFinding, v.Finding)
		at.PutStr(AttrTraceQL, v.TraceQL)
	}
	return ld
}
