package mcptraceconnector

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcptrace/mcptrace/spans"
)

// TestAWaitShorterThanASweepIsSweptEveryWait pins the sweep's period
// when wait is under sweepEvery: the traces leg sweeps every wait, so a
// trace is finalized within two waits of its last span, not at the next
// whole second.
func TestAWaitShorterThanASweepIsSweptEveryWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, _ := testLeg(t, 200*time.Millisecond, 100)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"})))
		time.Sleep(450 * time.Millisecond)
		synctest.Wait()
		if got := a.seen(); len(got) != 1 || got[0].trace != 'A' || got[0].reason != reasonWait {
			t.Fatalf("450ms after its span, with wait 200ms, finalized %+v, want A after its wait", got)
		}
		must(t, c.Shutdown(ctx))
	})
}

// TestAPairWaitShorterThanASweepIsSweptEveryPairWait pins the same for
// the pairs leg: with pair_wait under sweepEvery it sweeps every
// pair_wait, so an acquire is counted within two pair_waits of arriving.
func TestAPairWaitShorterThanASweepIsSweptEveryPairWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		leg, sink := testPairsLeg(t, 200*time.Millisecond, zap.NewNop())
		must(t, leg.Start(ctx, componenttest.NewNopHost()))
		defer leg.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, leg.ConsumeLogs(ctx, pairRecord(1, 100, 101, false)))
		time.Sleep(450 * time.Millisecond)
		synctest.Wait()
		if v, ok := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: spans.MissCold}); !ok || v != 1 {
			t.Fatalf("450ms after it arrived, with pair_wait 200ms, cold misses = %d (present %v), want 1", v, ok)
		}
		must(t, leg.Shutdown(ctx))
	})
}

// TestStartNamesTheRulesFileWhoseRulesItSkips pins the warning Start
// gives for the dump-scoped rules it cannot judge in-stream: it names the
// rules file they came from and each rule skipped.
func TestStartNamesTheRulesFileWhoseRulesItSkips(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join("testdata", "rules.yaml")
	cfg := &Config{Wait: time.Minute, MaxOpenTraces: 10, Rules: path, Attribution: AttributionLocal}
	s, err := cfg.settings()
	must(t, err)
	core, logs := observer.New(zapcore.WarnLevel)
	c := newConnector(zap.New(core), s, &recordingAnalyzer{})
	c.metrics = new(consumertest.MetricsSink)
	must(t, c.Start(ctx, componenttest.NewNopHost()))
	must(t, c.Shutdown(ctx))
	var found bool
	for _, e := range logs.All() {
		fields := e.ContextMap()
		if _, ok := fields["skipped"]; !ok {
			continue
		}
		found = true
		skipped, _ := fields["skipped"].([]any)
		if fields["rules"] != path || len(skipped) != 1 || skipped[0] != "handshakes-match-misses" {
			t.Errorf("warning %q names rules %v and skipped %v, want %s and [handshakes-match-misses]", e.Message, fields["rules"], fields["skipped"], path)
		}
	}
	if !found {
		t.Fatalf("no warning naming the skipped rules; logs: %v", logs.All())
	}
}

// TestAFinalizedTraceKeepsNoSpans pins that finalizing a trace releases
// every span it held, encoded and not, even while the trace is still
// listed for the next sweep's encoding: a finalized trace pins no span
// bytes.
func TestAFinalizedTraceKeepsNoSpans(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b := newTraceBuffer(time.Minute, 10, false)
	b.add(batch(sp{'A', 1, "gw"}), t0)
	b.encodeOlder(t0) // A1 held encoded
	b.add(batch(sp{'A', 2, "gw"}), t0.Add(time.Second))
	out := b.flush()
	if len(out) != 1 || out[0].spans.SpanCount() != 2 {
		t.Fatalf("flush = %d traces, want A with its 2 spans", len(out))
	}
	if !slices.ContainsFunc(b.fresh, func(ot *openTrace) bool { return ot.id == tid('A') }) {
		t.Fatal("A is no longer listed for encoding: the case this pins is not set up")
	}
	for _, ot := range b.fresh {
		if ot.held != nil || ot.hasCur {
			t.Errorf("finalized trace %v still holds %d encoded parts (pdata held: %v)", ot.id, len(ot.held), ot.hasCur)
		}
	}
}

// TestASecondStartStartsNoSecondSweep pins that Start is idempotent: a
// second call starts no second sweep goroutine, so Shutdown stops the one
// sweep and finalizes once.
func TestASecondStartStartsNoSecondSweep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, _ := testLeg(t, time.Hour, 10)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"})))
		must(t, c.Shutdown(ctx))
		if got := a.seen(); len(got) != 1 || got[0].reason != reasonShutdown {
			t.Fatalf("finalized %+v, want A once at shutdown", got)
		}
	})
}

// TestThePairsLegLogsEachLateAcquireOnce pins the pairs leg's log of late
// acquires: an acquire that arrives after a later one of its pair was
// attributed is logged once, as one new of one in total, and a later sweep
// with nothing new late logs nothing more.
func TestThePairsLegLogsEachLateAcquireOnce(t *testing.T) {
	ctx := context.Background()
	core, logs := observer.New(zapcore.InfoLevel)
	leg, _ := testPairsLeg(t, time.Second, zap.New(core))
	sec := int64(time.Second)
	later := time.Now().Add(time.Hour)
	must(t, leg.ConsumeLogs(ctx, pairRecord(2, 500*sec, 501*sec, false)))
	must(t, leg.sweep(ctx, later, false))
	must(t, leg.ConsumeLogs(ctx, pairRecord(1, 100*sec, 101*sec, false)))
	must(t, leg.sweep(ctx, later.Add(time.Hour), false))
	must(t, leg.sweep(ctx, later.Add(2*time.Hour), false))
	must(t, leg.sweep(ctx, later.Add(3*time.Hour), true))
	got := logs.FilterMessageSnippet("forwarded acquires arrived after a later acquire").All()
	if len(got) != 1 {
		t.Fatalf("%d late-acquire logs, want 1: %v", len(got), got)
	}
	if f := got[0].ContextMap(); f["acquires"] != int64(1) || f["total"] != int64(1) {
		t.Errorf("late-acquire log fields %v, want acquires 1 of total 1", f)
	}
}

// TestSpansThatWouldNotDecodeAreWarnedOnce pins the warning for held
// spans that would not decode: none while every part decodes, one naming
// the lost part at the emission after it was lost, and none again at the
// emissions after that.
func TestSpansThatWouldNotDecodeAreWarnedOnce(t *testing.T) {
	ctx := context.Background()
	c, _, _ := testLeg(t, time.Hour, 10)
	core, logs := observer.New(zapcore.WarnLevel)
	c.logger = zap.New(core)
	t0 := time.Now()
	c.buf.add(batch(sp{'A', 1, "gw"}), t0)
	must(t, c.emitCounters(ctx, false))
	c.buf.encodeOlder(t0)
	c.buf.open[tid('A')].Value.(*openTrace).held[0].proto = []byte{0xff}
	must(t, c.finalize(ctx, c.buf.flush(), true))
	must(t, c.emitCounters(ctx, false))
	must(t, c.emitCounters(ctx, true))
	got := logs.FilterMessageSnippet("would not decode").All()
	if len(got) != 1 {
		t.Fatalf("%d warnings of spans that would not decode, want 1: %v", len(got), logs.All())
	}
	if f := got[0].ContextMap(); f["parts"] != int64(1) || f["total"] != int64(1) {
		t.Errorf("warning fields %v, want parts 1 of total 1", f)
	}
}

// TestThePairsLegWarnsOnlyOfRecordsThatDoNotRead pins ConsumeLogs's
// warning: a batch whose acquire records all read logs nothing; one with
// a record that does not read logs one warning counting it, and keeps the
// others.
func TestThePairsLegWarnsOnlyOfRecordsThatDoNotRead(t *testing.T) {
	ctx := context.Background()
	core, logs := observer.New(zapcore.WarnLevel)
	leg, _ := testPairsLeg(t, 0, zap.New(core))
	must(t, leg.ConsumeLogs(ctx, pairRecord(1, 100, 101, false)))
	if n := logs.Len(); n != 0 {
		t.Fatalf("%d warnings for a batch that reads, want none: %v", n, logs.All())
	}
	bad := pairRecord(2, 200, 201, false)
	bad.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Remove(spans.AttrPairHit)
	must(t, leg.ConsumeLogs(ctx, bad))
	if got := logs.All(); len(got) != 1 || got[0].ContextMap()["records"] != int64(1) {
		t.Fatalf("warnings %v, want one counting 1 record", got)
	}
	if p := leg.ps.Pending(); p != 1 {
		t.Errorf("%d acquires held, want the 1 that read", p)
	}
}
