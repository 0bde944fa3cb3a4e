package mcptraceconnector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcptrace/mcptrace/analyze"
)

// Tests of behaviours the mutation runs (TESTING.md, stop 31) found
// unpinned.

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

// TestSweepWarnsOnlyWhenFinalizingExpiredTracesFails pins the sweep's
// other error path: the traces it expires are finalized and their records
// sent; a sweep whose next consumer takes them logs no warning, one whose
// next consumer refuses them warns, naming the error.
func TestSweepWarnsOnlyWhenFinalizingExpiredTracesFails(t *testing.T) {
	errDown := errors.New("backend down")
	for _, fails := range []bool{false, true} {
		t.Run(fmt.Sprintf("fails=%v", fails), func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Wait = time.Minute
			s, err := cfg.settings()
			must(t, err)
			a := &recordingAnalyzer{outcomes: map[pcommon.TraceID]traceOutcome{
				tid('A'): {Violations: []ruleViolation{{RuleID: "r1", Severity: "error", Finding: "slow", TraceQL: "{}", TraceID: tid('A'), SpanID: sid(1)}}},
			}}
			core, logs := observer.New(zap.InfoLevel)
			c := newConnector(zap.New(core), s, a)
			var next consumer.Logs = new(consumertest.LogsSink)
			if fails {
				next = consumertest.NewErr(errDown)
			}
			c.logs = next
			must(t, c.ConsumeTraces(context.Background(), batch(sp{'A', 1, "gw"}))) // no root: open until it expires
			c.sweep(time.Now().Add(time.Hour))
			if got := a.seen(); len(got) != 1 || got[0].reason != reasonWait {
				t.Fatalf("analyzer saw %+v, want trace A finalized by the sweep (wait)", got)
			}
			warned := logs.FilterMessageSnippet("finalizing expired traces").All()
			if !fails && len(warned) != 0 {
				t.Fatalf("%d warnings while the records were taken: %v", len(warned), warned[0].ContextMap())
			}
			if fails {
				if len(warned) != 1 {
					t.Fatalf("%d warnings after a sweep whose records were refused, want 1", len(warned))
				}
				if got := fmt.Sprint(warned[0].ContextMap()["error"]); !strings.Contains(got, errDown.Error()) {
					t.Errorf("warning's error = %q, want it to name %q", got, errDown)
				}
			}
		})
	}
}
