package mcptraceconnector

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
	"github.com/mcptrace/mcptrace/spans"
)

// TestIdleCountersAreReEmittedExactlyAtTheHeartbeat pins the heartbeat of
// both legs: counters that did not change are emitted at the first sweep,
// then not again until heartbeatSweeps sweeps later (one sweep short of
// it: still one emission; at it: the second), so a backend sees a live
// series at a known rate and no more. The traces → metrics leg
// (emitCounters) and the logs → metrics pairs leg (sweep) count their idle
// sweeps each.
func TestIdleCountersAreReEmittedExactlyAtTheHeartbeat(t *testing.T) {
	ctx := context.Background()
	legs := map[string]func(t *testing.T) (sweep func() error, sink *consumertest.MetricsSink){
		"traces → metrics": func(t *testing.T) (func() error, *consumertest.MetricsSink) {
			c, _, sink := testLeg(t, time.Minute, 10)
			return func() error { return c.emitCounters(ctx, false) }, sink
		},
		"pairs leg": func(t *testing.T) (func() error, *consumertest.MetricsSink) {
			l, sink := testPairsLeg(t, 0, zap.NewNop())
			now := time.Now()
			return func() error { return l.sweep(ctx, now, false) }, sink
		},
	}
	for name, mk := range legs {
		for _, c := range []struct {
			idle int // sweeps after the first, with nothing changed
			want int // emissions
		}{
			{0, 1},
			{1, 1},
			{heartbeatSweeps - 1, 1},
			{heartbeatSweeps, 2},
			{2*heartbeatSweeps - 1, 2},
			{2 * heartbeatSweeps, 3},
		} {
			sweep, sink := mk(t)
			for i := 0; i <= c.idle; i++ {
				must(t, sweep())
			}
			if got := len(sink.AllMetrics()); got != c.want {
				t.Errorf("%s: the first sweep and %d idle ones emitted %d times, want %d (heartbeat every %d sweeps)",
					name, c.idle, got, c.want, heartbeatSweeps)
			}
		}
	}
}

// TestSweepWarnsOnlyWhenEmittingFails pins the sweep's error path on both
// legs: a sweep whose counters reach the next consumer logs no warning; one
// whose next consumer refuses them warns, naming the error.
// The legs run their own sweep goroutine (under synctest, so the sweep
// interval passes at once).
func TestSweepWarnsOnlyWhenEmittingFails(t *testing.T) {
	errDown := errors.New("backend down")
	for _, leg := range []string{"traces → metrics", "logs → metrics"} {
		for _, fails := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/fails=%v", leg, fails), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					ctx := context.Background()
					core, logs := observer.New(zap.InfoLevel)
					set := connectortest.NewNopSettings(metadata.Type)
					set.Logger = zap.New(core)
					next := consumertest.NewNop()
					if fails {
						next = consumertest.NewErr(errDown)
					}
					cfg := createDefaultConfig().(*Config)
					var c component.Component
					var err error
					if leg == "traces → metrics" {
						c, err = NewFactory().CreateTracesToMetrics(ctx, set, cfg, next)
					} else {
						c, err = NewFactory().CreateLogsToMetrics(ctx, set, cfg, next)
					}
					must(t, err)
					must(t, c.Start(ctx, componenttest.NewNopHost()))
					time.Sleep(2*sweepEvery + time.Second) // two sweeps: the first emits
					synctest.Wait()
					_ = c.Shutdown(ctx)
					warned := logs.FilterMessageSnippet("emitting counters").All()
					if !fails && len(warned) != 0 {
						t.Fatalf("%d warnings while every emission succeeded: %v", len(warned), warned[0].ContextMap())
					}
					if fails {
						if len(warned) == 0 {
							t.Fatal("no warning after a sweep whose emission failed")
						}
						if got := fmt.Sprint(warned[0].ContextMap()["error"]); !strings.Contains(got, errDown.Error()) {
							t.Errorf("warning's error = %q, want it to name %q", got, errDown)
						}
					}
				})
			})
		}
	}
}

// TestPairsLegEmitsWhenOnlyThePendingGaugeChanges pins the pairs leg's
// change test on the pending gauge alone: a sweep after acquires arrived
// that pair_wait still holds (nothing attributed, no counter changed) is
// emitted, with the gauge at their number; the next sweep, with nothing
// changed, is not.
func TestPairsLegEmitsWhenOnlyThePendingGaugeChanges(t *testing.T) {
	ctx := context.Background()
	l, sink := testPairsLeg(t, time.Hour, zap.NewNop())
	now := time.Now()
	must(t, l.sweep(ctx, now, false)) // the first sweep emits
	must(t, l.sweep(ctx, now, false)) // nothing changed: not emitted
	if n := len(sink.AllMetrics()); n != 1 {
		t.Fatalf("%d emissions after two sweeps with nothing to count, want 1", n)
	}
	sec := int64(time.Second)
	must(t, l.ConsumeLogs(ctx, pairRecord(1, 100*sec, 101*sec, false)))
	must(t, l.ConsumeLogs(ctx, pairRecord(2, 200*sec, 201*sec, true)))
	must(t, l.sweep(ctx, now, false))
	if n := len(sink.AllMetrics()); n != 2 {
		t.Fatalf("%d emissions after the pending acquires changed, want 2", n)
	}
	if p := pendingGauge(t, sink); p != 2 {
		t.Errorf("pending gauge = %d, want the 2 held acquires", p)
	}
	must(t, l.sweep(ctx, now, false))
	if n := len(sink.AllMetrics()); n != 2 {
		t.Errorf("%d emissions after a sweep with nothing changed, want still 2", n)
	}
}

// TestPairsLegEmitsWhenOnlyTheCountersChanged pins the pairs leg's change
// test on the counters alone: acquires that arrived and were attributed
// between two sweeps (the pending gauge 0 before and after, within the
// heartbeat) are emitted at the next sweep, and counted.
func TestPairsLegEmitsWhenOnlyTheCountersChanged(t *testing.T) {
	ctx := context.Background()
	l, sink := testPairsLeg(t, time.Second, zap.NewNop())
	now := time.Now()
	must(t, l.sweep(ctx, now, false)) // the first sweep emits
	sec := int64(time.Second)
	must(t, l.ConsumeLogs(ctx, pairRecord(1, 100*sec, 101*sec, false)))
	later := time.Now().Add(time.Hour) // past pair_wait: attributed now
	must(t, l.sweep(ctx, later, false))
	if n := len(sink.AllMetrics()); n != 2 {
		t.Fatalf("%d emissions after an acquire was attributed, want 2", n)
	}
	if p := pendingGauge(t, sink); p != 0 {
		t.Fatalf("pending gauge = %d, want 0: the acquire attributed", p)
	}
	if v, _ := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: spans.MissCold}); v != 1 {
		t.Errorf("cold misses = %d, want the 1 attributed", v)
	}
}
