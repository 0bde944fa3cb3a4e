package mcptraceconnector

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze"
)

// TestOutcomesRenderUnderTheContractNames pins how the engine's outcomes
// become metrics: names, attributes (cause absent on hits, no ids), and sums
// across traces. The outcomes are scripted per trace by the test (the
// measures themselves are pinned against mcptrace analyze in measures_test.go).
func TestOutcomesRenderUnderTheContractNames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, time.Second, 100)
		a.outcomes[tid('A')] = traceOutcome{
			Acquires: []acquireCount{
				{PoolID: "p1", CacheHit: false, MissCause: "cold", N: 1},
				{PoolID: "p1", CacheHit: true, N: 3},
			},
			Handshakes: []poolCount{{PoolID: "p1", N: 1}},
			Executions: []executionCount{{PoolID: "p1", MultiSession: false, N: 1}},
		}
		a.outcomes[tid('B')] = traceOutcome{
			Acquires: []acquireCount{
				{PoolID: "p1", CacheHit: true, N: 2},
				{PoolID: "p2", CacheHit: false, MissCause: "ttl", N: 1},
			},
			Handshakes: []poolCount{{PoolID: "p2", N: 1}},
			Executions: []executionCount{{PoolID: "p2", MultiSession: true, N: 1}},
			Violations: []ruleViolation{{RuleID: "invocations-do-not-fail", Severity: "error", TraceID: tid('B'), SpanID: sid(1)}},
		}
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'B', 1, "gw"})))
		must(t, c.Shutdown(ctx))

		want := []struct {
			name  string
			attrs map[string]any
			v     int64
		}{
			{MetricAcquires, map[string]any{AttrPoolID: "p1", AttrCacheHit: false, AttrMissCause: "cold"}, 1},
			{MetricAcquires, map[string]any{AttrPoolID: "p1", AttrCacheHit: true}, 5},
			{MetricAcquires, map[string]any{AttrPoolID: "p2", AttrCacheHit: false, AttrMissCause: "ttl"}, 1},
			{MetricHandshakes, map[string]any{AttrPoolID: "p1"}, 1},
			{MetricHandshakes, map[string]any{AttrPoolID: "p2"}, 1},
			{MetricExecutions, map[string]any{AttrPoolID: "p1", AttrMultiSession: false}, 1},
			{MetricExecutions, map[string]any{AttrPoolID: "p2", AttrMultiSession: true}, 1},
			{MetricRuleViolations, map[string]any{AttrRuleID: "invocations-do-not-fail", AttrRuleSeverity: "error"}, 1},
			{MetricTracesFinalized, nil, 2},
		}
		for _, w := range want {
			got, ok := counterValue(t, sink, w.name, w.attrs)
			if !ok || got != w.v {
				t.Errorf("%s%v = %d (present %v), want %d", w.name, w.attrs, got, ok, w.v)
			}
		}
		if n := pointCount(sink); n != len(want)+2 { // + cut and late_spans at 0
			t.Errorf("last metrics hold %d points, want %d: a series too many", n, len(want)+2)
		}
	})
}

// TestTraceWithoutPoolSpansAddsNoMeasures: the analyzer reports what the
// spans hold and guesses nothing: a trace with no pool spans adds no
// acquire, handshake, execution or violation, only to the trace counters.
func TestTraceWithoutPoolSpansAddsNoMeasures(t *testing.T) {
	ctx := context.Background()
	s, err := createDefaultConfig().(*Config).settings()
	must(t, err)
	a, err := newAnalyzer(zap.NewNop(), s, false)
	must(t, err)
	c := newConnector(zap.NewNop(), s, a)
	sink := new(consumertest.MetricsSink)
	c.metrics = sink
	must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"})))
	must(t, c.Shutdown(ctx))
	for _, name := range []string{MetricAcquires, MetricHandshakes, MetricExecutions, MetricRuleViolations} {
		if hasMetric(sink, name) {
			t.Errorf("%s emitted for a trace without pool spans", name)
		}
	}
	if fin, _, _ := counters(t, sink); fin != 1 {
		t.Fatalf("finalized = %d, want 1", fin)
	}
}

// TestViolationsBecomeLogRecordsOnTheLogsLeg: one record per violation,
// trace and span ids set, the contract's attributes present.
func TestViolationsBecomeLogRecordsOnTheLogsLeg(t *testing.T) {
	ctx := context.Background()
	s, err := createDefaultConfig().(*Config).settings()
	must(t, err)
	a := &recordingAnalyzer{outcomes: map[pcommon.TraceID]traceOutcome{
		tid('A'): {Violations: []ruleViolation{
			{RuleID: "r1", Severity: "error", Finding: "2 transport errors", TraceQL: `{ trace:id = "x" }`, TraceID: tid('A'), SpanID: sid(2)},
			{RuleID: "r2", Severity: "warning", Finding: "slow", TraceQL: "{}", TraceID: tid('A'), SpanID: sid(1)},
		}},
	}}
	c := newConnector(zap.NewNop(), s, a)
	sink := new(consumertest.LogsSink)
	c.logs = sink
	must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'A', 2, "gw"})))
	must(t, c.Shutdown(ctx))
	if sink.LogRecordCount() != 2 {
		t.Fatalf("%d log records, want 2", sink.LogRecordCount())
	}
	lr := sink.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if lr.TraceID() != tid('A') || lr.SpanID() != sid(2) {
		t.Fatalf("record ids %v/%v, want trace A span 2", lr.TraceID(), lr.SpanID())
	}
	want := map[string]any{AttrRuleID: "r1", AttrRuleSeverity: "error", AttrFinding: "2 transport errors", AttrTraceQL: `{ trace:id = "x" }`}
	if got := lr.Attributes().AsRaw(); !equalAttrs(got, want) {
		t.Fatalf("attributes %v, want %v", got, want)
	}
	if lr.SeverityText() != "error" || lr.Body().Str() != "2 transport errors" {
		t.Fatalf("severity %q body %q", lr.SeverityText(), lr.Body().Str())
	}
}

func hasMetric(sink *consumertest.MetricsSink, name string) bool {
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if ms.At(k).Name() == name {
						return true
					}
				}
			}
		}
	}
	return false
}

func pointCount(sink *consumertest.MetricsSink) int {
	all := sink.AllMetrics()
	if len(all) == 0 {
		return 0
	}
	return all[len(all)-1].DataPointCount()
}

// TestTheLogsLegNeverSendsAnEmptyBatch pins what the logs leg hands the
// next consumer for a measured group: one batch of violation records when
// there are violations, one batch of acquire records when there are
// acquires to forward, and no batch at all for what is absent (an empty
// plog.Logs is a call down the pipeline carrying nothing).
func TestTheLogsLegNeverSendsAnEmptyBatch(t *testing.T) {
	violation := ruleViolation{RuleID: "r1", Severity: "error", Finding: "slow", TraceQL: "{}", TraceID: tid('A'), SpanID: sid(1)}
	pair := analyze.PairEvent{TraceID: tid('A'), SpanID: sid(1), Scope: "p", HasScope: true, Key: "k", HasKey: true}
	for _, tc := range []struct {
		name        string
		outcome     traceOutcome
		wantBatches int
		wantRecords int
	}{
		{"neither violations nor acquires", traceOutcome{}, 0, 0},
		{"violations only", traceOutcome{Violations: []ruleViolation{violation}}, 1, 1},
		{"acquires only", traceOutcome{Pairs: []analyze.PairEvent{pair}}, 1, 1},
		{"both", traceOutcome{Violations: []ruleViolation{violation}, Pairs: []analyze.PairEvent{pair}}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			s, err := createDefaultConfig().(*Config).settings()
			must(t, err)
			a := &recordingAnalyzer{outcomes: map[pcommon.TraceID]traceOutcome{tid('A'): tc.outcome}}
			c := newConnector(zap.NewNop(), s, a)
			sink := new(consumertest.LogsSink)
			c.logs = sink
			must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'A', 2, "gw"})))
			must(t, c.Shutdown(ctx))
			if len(a.seen()) != 1 {
				t.Fatalf("analyzer saw %d traces, want 1", len(a.seen()))
			}
			if got := len(sink.AllLogs()); got != tc.wantBatches || sink.LogRecordCount() != tc.wantRecords {
				t.Errorf("%d batches, %d records; want %d, %d", got, sink.LogRecordCount(), tc.wantBatches, tc.wantRecords)
			}
			for i, ld := range sink.AllLogs() {
				if ld.LogRecordCount() == 0 {
					t.Errorf("batch %d is empty", i)
				}
			}
		})
	}
}

// TestCountersAreEmittedWhenForcedOrWhenOnlyTheFiguresChanged pins the
// traces → metrics leg's change test beyond the trace counters: after a
// first emission, a sweep with nothing changed emits nothing; a forced
// emission (Shutdown's last) is sent though nothing changed; and figures
// added without any trace counter moving are emitted at the next sweep.
// The last is the interleaving of a sweep that snapshots the buffer's
// counters after it counted a finished trace but before finalize added
// that trace's outcome: here finalize is handed the trace directly, so the
// buffer counts nothing and only the aggregates change.
func TestCountersAreEmittedWhenForcedOrWhenOnlyTheFiguresChanged(t *testing.T) {
	for _, tc := range []struct {
		name     string
		force    bool
		figures  bool // an outcome with an acquire finalized between the sweeps
		wantSent int  // emissions, the first sweep's included
	}{
		{"a sweep with nothing changed", false, false, 1},
		{"a forced emission with nothing changed", true, false, 2},
		{"a sweep after only the figures changed", false, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			c, a, sink := testLeg(t, time.Minute, 10)
			a.outcomes[tid('A')] = traceOutcome{Acquires: []acquireCount{{PoolID: "p", CacheHit: true, N: 1}}}
			must(t, c.emitCounters(ctx, false)) // the first sweep emits
			if tc.figures {
				must(t, c.finalize(ctx, []finalizedTrace{{id: tid('A'), spans: batch(sp{'A', rootSpan, "gw"}), reason: reasonComplete}}, false))
			}
			must(t, c.emitCounters(ctx, tc.force))
			if got := len(sink.AllMetrics()); got != tc.wantSent {
				t.Fatalf("%d emissions, want %d", got, tc.wantSent)
			}
			if tc.figures {
				if v, ok := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: true}); !ok || v != 1 {
					t.Errorf("hits of pool p = %d (present %v), want the 1 added", v, ok)
				}
			}
		})
	}
}
