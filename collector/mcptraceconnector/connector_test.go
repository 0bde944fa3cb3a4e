package mcptraceconnector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

// --- helpers ---

// tid and sid make readable ids: trace 'A', span 1.
func tid(c byte) pcommon.TraceID { return pcommon.TraceID{15: c} }
func sid(n byte) pcommon.SpanID  { return pcommon.SpanID{7: n} }

// rootSpan is the id of a test trace's root span: the span with no parent.
// Every other span's parent is the root, so a trace is complete once span
// rootSpan arrives (analyze.CompleteAtRoot).
const rootSpan = 100

// sp is one span of a test batch: its trace, its id and the service that
// emitted it (one resource per service).
type sp struct {
	trace   byte
	span    byte
	service string
}

// batch builds one OTLP batch, one resource per service in order of first
// appearance, spans named by their ids.
func batch(spans ...sp) ptrace.Traces {
	td := ptrace.NewTraces()
	bySvc := map[string]ptrace.SpanSlice{}
	for _, s := range spans {
		out, ok := bySvc[s.service]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.service)
			ss := rs.ScopeSpans().AppendEmpty()
			ss.Scope().SetName("test")
			out = ss.Spans()
			bySvc[s.service] = out
		}
		span := out.AppendEmpty()
		span.SetTraceID(tid(s.trace))
		span.SetSpanID(sid(s.span))
		span.SetName(string(s.trace) + string('0'+s.span))
		if s.span != rootSpan {
			span.SetParentSpanID(sid(rootSpan))
		} else {
			span.SetName(string(s.trace) + "root")
		}
	}
	return td
}

// seen is one call of the analyzer: which trace, which spans (name@service,
// sorted) and why.
type seen struct {
	trace  byte
	spans  []string
	reason finalizeReason
}

// recordingAnalyzer records what it is handed and answers with the outcome
// the test scripted for that trace (zero when none). It stands in for the
// engine only to observe the buffer and to pin how outcomes are rendered;
// it computes nothing.
type recordingAnalyzer struct {
	mu       sync.Mutex
	calls    []seen
	groups   int // Attribute calls that followed at least one Finalize
	since    int // Finalize calls since the last Attribute
	outcomes map[pcommon.TraceID]traceOutcome
}

func (r *recordingAnalyzer) Finalize(id pcommon.TraceID, td ptrace.Traces, reason finalizeReason) traceOutcome {
	var names []string
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		svc, _ := rs.Resource().Attributes().Get("service.name")
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j)
			for k := 0; k < ss.Spans().Len(); k++ {
				s := ss.Spans().At(k)
				if s.TraceID() != id {
					names = append(names, "WRONG TRACE:"+s.Name())
				}
				names = append(names, s.Name()+"@"+svc.Str())
			}
		}
	}
	slices.Sort(names)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, seen{trace: id[15], spans: names, reason: reason})
	r.since++
	return r.outcomes[id]
}

// Attribute counts the groups and returns nothing: the scripted outcomes
// carry the acquires.
func (r *recordingAnalyzer) Attribute() traceOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.since > 0 {
		r.groups++
	}
	r.since = 0
	return traceOutcome{}
}

func (r *recordingAnalyzer) seen() []seen {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// testLeg builds a metrics leg over a recording analyzer.
func testLeg(t *testing.T, wait time.Duration, maxOpen int) (*mcptraceConnector, *recordingAnalyzer, *consumertest.MetricsSink) {
	t.Helper()
	cfg := &Config{Wait: wait, MaxOpenTraces: maxOpen, Profile: "default"}
	s, err := cfg.settings()
	if err != nil {
		t.Fatal(err)
	}
	a := &recordingAnalyzer{outcomes: map[pcommon.TraceID]traceOutcome{}}
	c := newConnector(zap.NewNop(), s, a)
	sink := new(consumertest.MetricsSink)
	c.metrics = sink
	return c, a, sink
}

// counterValue returns the value of the data point of metric name whose
// attributes equal attrs in the last metrics sent, and whether it exists.
func counterValue(t *testing.T, sink *consumertest.MetricsSink, name string, attrs map[string]any) (int64, bool) {
	t.Helper()
	all := sink.AllMetrics()
	if len(all) == 0 {
		return 0, false
	}
	md := all[len(all)-1]
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		sms := md.ResourceMetrics().At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				if m.Name() != name {
					continue
				}
				if m.Type() != pmetric.MetricTypeSum || !m.Sum().IsMonotonic() ||
					m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative {
					t.Fatalf("%s is not a cumulative monotonic sum", name)
				}
				dps := m.Sum().DataPoints()
				for d := 0; d < dps.Len(); d++ {
					if equalAttrs(dps.At(d).Attributes().AsRaw(), attrs) {
						return dps.At(d).IntValue(), true
					}
				}
			}
		}
	}
	return 0, false
}

func equalAttrs(got, want map[string]any) bool {
	if len(got) != len(want) {
		return false
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// counters reads the three trace counters from the last metrics sent.
func counters(t *testing.T, sink *consumertest.MetricsSink) (finalized, cut, late int64) {
	t.Helper()
	var ok [3]bool
	finalized, ok[0] = counterValue(t, sink, MetricTracesFinalized, nil)
	cut, ok[1] = counterValue(t, sink, MetricTracesCut, nil)
	late, ok[2] = counterValue(t, sink, MetricTracesLateSpans, nil)
	if ok != [3]bool{true, true, true} {
		t.Fatalf("trace counters missing from the last metrics (found %v)", ok)
	}
	return finalized, cut, late
}

// --- lifecycle ---

func TestFactoryTypeStabilityAndLegs(t *testing.T) {
	f := NewFactory()
	if f.Type().String() != "mcptrace" {
		t.Fatalf("type = %q, want mcptrace", f.Type())
	}
	if got := f.TracesToMetricsStability().String(); got != "Development" {
		t.Fatalf("traces_to_metrics stability = %s, want Development", got)
	}
	if got := f.TracesToLogsStability().String(); got != "Development" {
		t.Fatalf("traces_to_logs stability = %s, want Development", got)
	}
	if got := f.LogsToMetricsStability().String(); got != "Development" {
		t.Fatalf("logs_to_metrics stability = %s, want Development", got)
	}
	set := connectortest.NewNopSettings(metadata.Type)
	if _, err := f.CreateLogsToLogs(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop()); err == nil {
		t.Fatal("logs_to_logs should not be supported")
	}
	if _, err := f.CreateTracesToTraces(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop()); err == nil {
		t.Fatal("traces_to_traces should not be supported")
	}
}

// TestLifecycle starts and shuts down each leg through the factory, as the
// Collector does, and checks Shutdown without Start and twice.
func TestLifecycle(t *testing.T) {
	f := NewFactory()
	set := connectortest.NewNopSettings(metadata.Type)
	ctx := context.Background()
	build := map[string]func(*Config) (*mcptraceConnector, error){
		"traces_to_metrics": func(cfg *Config) (*mcptraceConnector, error) {
			c, err := f.CreateTracesToMetrics(ctx, set, cfg, consumertest.NewNop())
			if err != nil {
				return nil, err
			}
			return c.(*mcptraceConnector), nil
		},
		"traces_to_logs": func(cfg *Config) (*mcptraceConnector, error) {
			c, err := f.CreateTracesToLogs(ctx, set, cfg, consumertest.NewNop())
			if err != nil {
				return nil, err
			}
			return c.(*mcptraceConnector), nil
		},
	}
	for name, mk := range build {
		t.Run(name+"/start and shutdown", func(t *testing.T) {
			c, err := mk(createDefaultConfig().(*Config))
			if err != nil {
				t.Fatal(err)
			}
			if c.Capabilities().MutatesData {
				t.Fatal("MutatesData must be false")
			}
			if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
				t.Fatal(err)
			}
			if err := c.ConsumeTraces(ctx, batch(sp{'A', 1, "svc"})); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(ctx); err != nil {
				t.Fatalf("second Shutdown: %v", err)
			}
		})
		t.Run(name+"/shutdown without start", func(t *testing.T) {
			c, err := mk(createDefaultConfig().(*Config))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Shutdown(ctx); err != nil {
				t.Fatal(err)
			}
		})
		t.Run(name+"/bad config fails at create with the field named", func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.Profile = "fancy"
			if _, err := mk(cfg); err == nil || err.Error()[:8] != "profile:" {
				t.Fatalf("create error = %v, want one starting with profile:", err)
			}
		})
	}
}

// --- buffering ---

// TestTraceFinalizedWaitAfterItsLastSpan: spans of one trace arriving in
// several batches, from several services, are handed to the analyzer once,
// together, wait after the last one arrived, and not before.
func TestTraceFinalizedWaitAfterItsLastSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, 10*time.Second, 100)
		if err := c.Start(ctx, componenttest.NewNopHost()); err != nil {
			t.Fatal(err)
		}
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'B', 1, "gw"}, sp{'A', 2, "pool"})))
		time.Sleep(6 * time.Second)
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 3, "gw"})))
		time.Sleep(5 * time.Second) // B's wait is over (11s), A's is not (5s)
		synctest.Wait()
		if got := a.seen(); len(got) != 1 || got[0].trace != 'B' || got[0].reason != reasonWait {
			t.Fatalf("after 11s finalized %+v, want only B after wait", got)
		}
		time.Sleep(6 * time.Second) // A: 11s after its last span
		synctest.Wait()
		got := a.seen()
		want := []string{"A1@gw", "A2@pool", "A3@gw"}
		if len(got) != 2 || got[1].trace != 'A' || !slices.Equal(got[1].spans, want) || got[1].reason != reasonWait {
			t.Fatalf("finalized %+v, want B then A with %v", got, want)
		}
		if fin, cut, late := counters(t, sink); fin != 2 || cut != 0 || late != 0 {
			t.Fatalf("counters finalized=%d cut=%d late=%d, want 2 0 0", fin, cut, late)
		}
		must(t, c.Shutdown(ctx))
		if n := len(a.seen()); n != 2 {
			t.Fatalf("Shutdown finalized again: %d calls", n)
		}
	})
}

// TestLateSpansCountedNotReanalysed: a span of a finalized trace is counted
// as late and does not open the trace again.
func TestLateSpansCountedNotReanalysed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, time.Second, 100)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"})))
		time.Sleep(3 * time.Second)
		synctest.Wait()
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 2, "gw"}, sp{'A', 3, "pool"}, sp{'C', 1, "gw"})))
		must(t, c.Shutdown(ctx))
		got := a.seen()
		if len(got) != 2 || got[0].trace != 'A' || got[1].trace != 'C' || got[1].reason != reasonShutdown {
			t.Fatalf("finalized %+v, want A (wait) then C (shutdown)", got)
		}
		if fin, cut, late := counters(t, sink); fin != 2 || cut != 0 || late != 2 {
			t.Fatalf("counters finalized=%d cut=%d late=%d, want 2 0 2", fin, cut, late)
		}
	})
}

// TestCompleteTraceFinalizedWithoutWaiting: a trace whose root span
// arrives is finalized by the ConsumeTraces call that brought it, with no
// clock advance and wait an hour away, holding every span of that batch
// even though the root came first in it; a trace without its root stays
// open. Its outcome is counted (metrics at the next sweep).
func TestCompleteTraceFinalizedWithoutWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, time.Hour, 100)
		a.outcomes[tid('A')] = traceOutcome{Acquires: []acquireCount{{PoolID: "p", CacheHit: true, N: 1}}}
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'B', 1, "pool"}, sp{'A', 2, "pool"})))
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', rootSpan, "gw"}, sp{'A', 1, "pool"}, sp{'B', 2, "pool"}, sp{'A', 3, "pool"})))
		got := a.seen()
		want := []string{"A1@pool", "A2@pool", "A3@pool", "Aroot@gw"}
		if len(got) != 1 || got[0].trace != 'A' || got[0].reason != reasonComplete || !slices.Equal(got[0].spans, want) {
			t.Fatalf("finalized %+v, want only A (complete) with %v", got, want)
		}
		if counts, open := c.buf.snapshot(); counts.finalized != 1 || counts.complete != 1 || open != 1 {
			t.Fatalf("finalized=%d complete=%d open=%d, want 1 1 1 (B)", counts.finalized, counts.complete, open)
		}
		time.Sleep(time.Second) // the next sweep emits
		synctest.Wait()
		if fin, cut, late := counters(t, sink); fin != 1 || cut != 0 || late != 0 {
			t.Fatalf("counters finalized=%d cut=%d late=%d, want 1 0 0", fin, cut, late)
		}
		if n, ok := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: true}); !ok || n != 1 {
			t.Fatalf("A's acquire counted %d (found %v), want 1", n, ok)
		}
	})
}

// TestCompleteTracesMeasuredInGroups: complete traces are handed to the
// analyzer as they complete but measured as one group once completeGroup
// of them wait, or at the next sweep, never one group per batch.
func TestCompleteTracesMeasuredInGroups(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, _ := testLeg(t, time.Hour, 10*completeGroup)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		groups := func() int { a.mu.Lock(); defer a.mu.Unlock(); return a.groups }
		for i := range completeGroup + 10 {
			td := batch(sp{'A', 1, "pool"}, sp{'A', rootSpan, "gw"})
			for _, s := range td.ResourceSpans().All() {
				for _, sp := range s.ScopeSpans().At(0).Spans().All() {
					sp.SetTraceID(pcommon.TraceID{0: byte(i >> 8), 1: byte(i), 15: 'A'})
				}
			}
			must(t, c.ConsumeTraces(ctx, td))
			if want := (i + 1) / completeGroup; groups() != want {
				t.Fatalf("after %d complete traces %d groups measured, want %d", i+1, groups(), want)
			}
		}
		if n := len(a.seen()); n != completeGroup+10 {
			t.Fatalf("%d traces handed over, want every one at once (%d)", n, completeGroup+10)
		}
		time.Sleep(time.Second) // the sweep measures the 10 left
		synctest.Wait()
		if groups() != 2 {
			t.Fatalf("after the sweep %d groups, want 2", groups())
		}
	})
}

// TestSpansAfterCompletionAreLate pins what a complete trace does with
// spans that come in a later batch: they are late (counted, not analysed,
// the trace not reopened), as in the engine. A root that comes batches
// ahead of its children therefore finalizes its trace without them; with
// hold_complete the same feed waits and keeps every span.
func TestSpansAfterCompletionAreLate(t *testing.T) {
	feed := [][]sp{
		{{'A', 1, "pool"}, {'A', rootSpan, "gw"}},
		{{'A', 2, "pool"}, {'C', rootSpan, "gw"}}, // A2 after A's root: late
		{{'C', 1, "pool"}, {'C', 2, "pool"}},      // C's children after C's root: late
	}
	for _, tt := range []struct {
		name    string
		hold    bool
		want    []seen
		late    int64
		reasons string
	}{
		{"complete at root", false, []seen{
			{trace: 'A', spans: []string{"A1@pool", "Aroot@gw"}, reason: reasonComplete},
			{trace: 'C', spans: []string{"Croot@gw"}, reason: reasonComplete},
		}, 3, ""},
		{"hold_complete", true, []seen{
			{trace: 'A', spans: []string{"A1@pool", "A2@pool", "Aroot@gw"}, reason: reasonWait},
			{trace: 'C', spans: []string{"C1@pool", "C2@pool", "Croot@gw"}, reason: reasonWait},
		}, 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				c, a, sink := testLeg(t, 10*time.Second, 100)
				if tt.hold {
					cfg := &Config{Wait: 10 * time.Second, MaxOpenTraces: 100, Profile: "default", HoldComplete: true}
					s, err := cfg.settings()
					must(t, err)
					c = newConnector(zap.NewNop(), s, a)
					c.metrics = sink
				}
				must(t, c.Start(ctx, componenttest.NewNopHost()))
				defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
				for _, b := range feed {
					must(t, c.ConsumeTraces(ctx, batch(b...)))
				}
				time.Sleep(11 * time.Second) // past wait: the held traces go
				synctest.Wait()
				must(t, c.Shutdown(ctx))
				got := a.seen()
				if len(got) != len(tt.want) {
					t.Fatalf("finalized %+v, want %+v", got, tt.want)
				}
				for i := range got {
					if got[i].trace != tt.want[i].trace || got[i].reason != tt.want[i].reason || !slices.Equal(got[i].spans, tt.want[i].spans) {
						t.Fatalf("finalized %+v, want %+v", got, tt.want)
					}
				}
				if fin, cut, late := counters(t, sink); fin != 2 || cut != 0 || late != tt.late {
					t.Fatalf("counters finalized=%d cut=%d late=%d, want 2 0 %d", fin, cut, late, tt.late)
				}
			})
		})
	}
}

// TestMaxOpenTracesCutsTheTraceWithTheOldestLastSpan: the bound finalizes
// early the trace whose last span is oldest (not the first opened), counts
// it as cut, and a span of it later in the same batch is late.
func TestMaxOpenTracesCutsTheTraceWithTheOldestLastSpan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, time.Minute, 2)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"})))
		time.Sleep(time.Millisecond)
		must(t, c.ConsumeTraces(ctx, batch(sp{'B', 1, "gw"})))
		time.Sleep(time.Millisecond)
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 2, "gw"}))) // A is now the newer
		// One batch: A3 touches A again; C needs room, so B goes; D needs
		// room, so A goes with A1-A3; A4, after D in the same batch, is late
		// and must not be filed into the trace already cut.
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 3, "gw"}, sp{'C', 1, "gw"}, sp{'D', 1, "gw"}, sp{'A', 4, "gw"})))
		got := a.seen()
		if len(got) != 2 || got[0].trace != 'B' || got[0].reason != reasonCut ||
			got[1].trace != 'A' || got[1].reason != reasonCut || !slices.Equal(got[1].spans, []string{"A1@gw", "A2@gw", "A3@gw"}) {
			t.Fatalf("cut %+v, want B then A (A1, A2, A3)", got)
		}
		must(t, c.Shutdown(ctx))
		got = a.seen()
		if len(got) != 4 || got[2].reason != reasonShutdown || got[3].reason != reasonShutdown {
			t.Fatalf("after Shutdown %+v, want C and D flushed", got)
		}
		if fin, cut, late := counters(t, sink); fin != 4 || cut != 2 || late != 1 {
			t.Fatalf("counters finalized=%d cut=%d late=%d, want 4 2 1", fin, cut, late)
		}
	})
}

// TestShutdownFlushesEveryOpenTrace: nothing open is lost at Shutdown, and
// the final counters are sent even though no sweep ran.
func TestShutdownFlushesEveryOpenTrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, sink := testLeg(t, time.Hour, 100)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'B', 1, "gw"}, sp{'C', 1, "gw"}, sp{'B', 2, "pool"})))
		must(t, c.Shutdown(ctx))
		got := a.seen()
		if len(got) != 3 {
			t.Fatalf("Shutdown finalized %+v, want A, B, C", got)
		}
		for _, s := range got {
			if s.reason != reasonShutdown {
				t.Fatalf("trace %c finalized for %v, want shutdown", s.trace, s.reason)
			}
		}
		if fin, cut, late := counters(t, sink); fin != 3 || cut != 0 || late != 0 {
			t.Fatalf("counters finalized=%d cut=%d late=%d, want 3 0 0", fin, cut, late)
		}
	})
}

// TestLateHorizonIsBounded: the ids remembered for late-span detection are
// capped at max_open_traces, so memory stays bounded; a span of a trace
// finalized longer ago than that opens a new trace.
func TestLateHorizonIsBounded(t *testing.T) {
	b := newTraceBuffer(time.Second, 2, true)
	now := time.Now()
	for _, c := range []byte{'A', 'B', 'C'} {
		b.add(batch(sp{c, 1, "gw"}), now)
	}
	b.flush() // C and the survivor B; A was cut when C arrived
	if len(b.done) != 2 || len(b.ring) != 2 {
		t.Fatalf("remembered %d ids (ring %d), want 2", len(b.done), len(b.ring))
	}
	if _, ok := b.done[tid('A')]; ok {
		t.Fatal("A should have been forgotten")
	}
	b.add(batch(sp{'A', 2, "gw"}, sp{'C', 2, "gw"}), now)
	counts, open := b.snapshot()
	if counts.lateSpans != 1 || open != 1 {
		t.Fatalf("late=%d open=%d, want C's span late and A open again", counts.lateSpans, open)
	}
}

// TestSpansWithoutTraceIDAreCountedNotBuffered guards the one kind of span
// that cannot be grouped.
func TestSpansWithoutTraceIDAreCountedNotBuffered(t *testing.T) {
	b := newTraceBuffer(time.Second, 10, true)
	td := batch(sp{'A', 1, "gw"})
	td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty().SetName("no trace id")
	_, _, dropped := b.add(td, time.Now())
	counts, open := b.snapshot()
	if dropped != 1 || counts.noTraceID != 1 || open != 1 {
		t.Fatalf("noTraceID=%d open=%d, want 1 and 1", counts.noTraceID, open)
	}
}

// TestSweepEncodesWaitingSpans: the sweep encodes an open trace's spans
// once they have waited encodeAfter, not before, and the trace still
// reaches the analyzer whole.
func TestSweepEncodesWaitingSpans(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		c, a, _ := testLeg(t, time.Hour, 100)
		must(t, c.Start(ctx, componenttest.NewNopHost()))
		defer c.Shutdown(ctx) // idempotent: stops the sweep if the test fails early
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', 1, "pool"}, sp{'A', 2, "pool"})))
		held := func() (int, bool) {
			c.buf.mu.Lock()
			defer c.buf.mu.Unlock()
			ot := c.buf.open[tid('A')].Value.(*openTrace)
			return len(ot.held), ot.hasCur
		}
		time.Sleep(encodeAfter - time.Second)
		synctest.Wait()
		if n, pdata := held(); n != 0 || !pdata {
			t.Fatalf("before encodeAfter: %d encoded parts, pdata %v; want 0, true", n, pdata)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n, pdata := held(); n != 1 || pdata {
			t.Fatalf("after encodeAfter: %d encoded parts, pdata %v; want 1, false", n, pdata)
		}
		must(t, c.ConsumeTraces(ctx, batch(sp{'A', rootSpan, "gw"})))
		got := a.seen()
		want := []string{"A1@pool", "A2@pool", "Aroot@gw"}
		if len(got) != 1 || got[0].reason != reasonComplete || !slices.Equal(got[0].spans, want) {
			t.Fatalf("finalized %+v, want A complete with %v", got, want)
		}
	})
}

// TestHeldSpansSurviveEncoding: spans of an open trace are encoded only
// once they have waited encodeAfter, and come back whole at finalization,
// under their resources, merged with the spans not yet encoded; a part that
// would not decode is counted (lostParts, logged by the connector) and the
// other parts are kept.
func TestHeldSpansSurviveEncoding(t *testing.T) {
	b := newTraceBuffer(time.Hour, 10, true)
	t0 := time.Now()
	b.add(batch(sp{'A', 1, "pool"}, sp{'A', 2, "gw"}), t0)
	b.add(batch(sp{'A', 3, "pool"}), t0.Add(time.Second))
	sweepAt := func(now time.Time) { b.encodeOlder(now.Add(-encodeAfter)) } // as the sweep calls it
	sweepAt(t0.Add(encodeAfter - time.Millisecond))
	ot := b.open[tid('A')].Value.(*openTrace)
	if len(ot.held) != 0 || !ot.hasCur {
		t.Fatalf("before encodeAfter: %d parts encoded, want none", len(ot.held))
	}
	sweepAt(t0.Add(encodeAfter + time.Second)) // A1-A3 are one part
	b.add(batch(sp{'B', 1, "pool"}, sp{'A', 4, "pool"}), t0.Add(encodeAfter))
	sweepAt(t0.Add(2 * encodeAfter)) // A4 (and B1) a second
	if len(ot.held) != 2 || ot.held[0].proto == nil || ot.held[1].proto == nil || ot.hasCur {
		t.Fatalf("after encoding: %d parts (pdata left: %v), want 2 encoded parts", len(ot.held), ot.hasCur)
	}
	ot.held[1].proto = []byte{0xff} // damage A4's part
	_, complete, _ := b.add(batch(sp{'A', 5, "pool"}, sp{'A', rootSpan, "gw"}), t0.Add(2*encodeAfter))
	if len(complete) != 1 {
		t.Fatalf("%d traces completed, want A", len(complete))
	}
	a := &recordingAnalyzer{}
	a.Finalize(complete[0].id, complete[0].spans, complete[0].reason)
	want := []string{"A1@pool", "A2@gw", "A3@pool", "A5@pool", "Aroot@gw"}
	if got := a.seen()[0].spans; !slices.Equal(got, want) {
		t.Fatalf("finalized spans %v, want %v", got, want)
	}
	if counts, _ := b.snapshot(); counts.lostParts != 1 {
		t.Fatalf("lostParts = %d, want 1", counts.lostParts)
	}
	sweepAt(t0.Add(4 * encodeAfter))
	if len(b.fresh) != 0 {
		t.Fatalf("%d traces queued for encoding after the next sweep, want none (B is encoded, A finalized)", len(b.fresh))
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestFactoryLegCountsTracesEndToEnd drives the traces → metrics leg built
// by the factory with the Collector's nop settings: a cut, expiries, a late
// span and the counters that reach the next consumer.
func TestFactoryLegCountsTracesEndToEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := createDefaultConfig().(*Config)
		cfg.Wait, cfg.MaxOpenTraces = 2*time.Second, 2
		sink := new(consumertest.MetricsSink)
		leg, err := NewFactory().CreateTracesToMetrics(ctx, connectortest.NewNopSettings(metadata.Type), cfg, sink)
		must(t, err)
		must(t, leg.Start(ctx, componenttest.NewNopHost()))
		defer leg.Shutdown(ctx)
		must(t, leg.ConsumeTraces(ctx, batch(sp{'A', 1, "gw"}, sp{'B', 1, "gw"}, sp{'C', 1, "gw"}))) // A cut for C
		time.Sleep(3 * time.Second)                                                                  // B and C expire
		synctest.Wait()
		if fin, cut, late := counters(t, sink); fin != 3 || cut != 1 || late != 0 {
			t.Fatalf("before Shutdown: finalized=%d cut=%d late=%d, want 3 1 0", fin, cut, late)
		}
		must(t, leg.ConsumeTraces(ctx, batch(sp{'C', 2, "gw"})))
		must(t, leg.Shutdown(ctx))
		if fin, cut, late := counters(t, sink); fin != 3 || cut != 1 || late != 1 {
			t.Fatalf("after Shutdown: finalized=%d cut=%d late=%d, want 3 1 1", fin, cut, late)
		}
	})
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

// testPairsLeg is a pairs leg of the default configuration with pair_wait
// wait (0 keeps the default), logging to logger, emitting into the sink it
// returns.
func testPairsLeg(t *testing.T, wait time.Duration, logger *zap.Logger) (*pairsLeg, *consumertest.MetricsSink) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	if wait != 0 {
		cfg.PairWait = wait
	}
	s, err := cfg.settings()
	must(t, err)
	ps, err := analyze.NewPairStream(s.analyze)
	must(t, err)
	sink := new(consumertest.MetricsSink)
	return newPairsLeg(logger, s, ps, sink), sink
}
