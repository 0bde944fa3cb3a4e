package mcptraceconnector

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// routePairRecords splits the acquire records of ld by pool scope over n
// instances, as the loadbalancing exporter does with routing_key
// attributes and routing_attributes [mcptrace.pair.scope]: one plog.Logs
// per record, records that are not acquires dropped.
func routePairRecords(t *testing.T, ld plog.Logs, n int) [][]plog.Logs {
	t.Helper()
	evs, err := ReadAcquireRecords(ld)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]plog.Logs, n)
	for _, ev := range evs {
		h := fnv.New32a()
		fmt.Fprintf(h, "%s=%s|", AttrPairScope, ev.Scope)
		i := h.Sum32() % uint32(n)
		out[i] = append(out[i], pairLogs([]analyze.PairEvent{ev}))
	}
	return out
}

// workloadDump writes the scale-out test's workload (every miss cause, two
// pools) as a JSON lines dump and returns its path; settings, by pool, are
// recorded on its acquire spans (tracegen.WorkloadConfig.Settings).
func workloadDump(t *testing.T, traces int, settings map[string]map[string]string) string {
	t.Helper()
	wl, err := tracegen.GenerateWorkload(tracegen.WorkloadConfig{
		Seed: 5, Traces: traces, Pools: []string{"pool-a", "pool-b"}, KeysPerPool: 8, TracesPerBatch: 40, Settings: settings,
	})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	var m ptrace.JSONMarshaler
	for _, td := range wl.Batches {
		line, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	name := "workload.otlp.jsonl"
	if settings != nil {
		name = "workload-settings.otlp.jsonl"
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestForwardedAttributionSumsExactlyAcrossInstances is the fleet of
// docs/collector.md with attribution: forward, in process: every dump (and
// the scale-out workload, which has every miss cause) shuffled, its spans
// routed by trace id to three instances (a metrics leg and a logs leg
// each), their acquire records routed by pool scope to two logs → metrics legs
// in shuffled order. Every counter summed over the five legs, miss causes
// included, equals mcptrace analyze and check on the dump; the traces legs
// count no acquire themselves.
func TestForwardedAttributionSumsExactlyAcrossInstances(t *testing.T) {
	// pool-b keeps no idle session in the second workload: its misses
	// after the first are evicted, and the settings travel with the records.
	keepNone := map[string]map[string]string{"pool-b": {
		spans.AttrPoolIdleTTL: "300", spans.AttrPoolMaxIdlePerKey: "-1", spans.AttrPoolIdleSizing: spans.IdleSizingPeak, spans.AttrPoolMaxIdle: "64",
	}}
	paths := append(dumps(t), workloadDump(t, 600, nil), workloadDump(t, 600, keepNone))
	causes := map[string]bool{}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			ctx := context.Background()
			set := connectortest.NewNopSettings(metadata.Type)
			cfg, s := configFor(t, path)
			if strings.HasPrefix(filepath.Base(path), "workload") {
				cfg.Profile = string(rulefmt.ProfileDefault)
				s.analyze.Profile = rulefmt.ProfileDefault
			}
			cfg.Attribution = AttributionForward
			want, _, _ := batchFigures(t, path, s)

			const traceTier, pairTier = 3, 2
			type legs struct {
				metrics, logs interface {
					ConsumeTraces(context.Context, ptrace.Traces) error
					Shutdown(context.Context) error
				}
				msink *consumertest.MetricsSink
				lsink *consumertest.LogsSink
			}
			var tier [traceTier]legs
			for i := range tier {
				tier[i].msink, tier[i].lsink = new(consumertest.MetricsSink), new(consumertest.LogsSink)
				m, err := NewFactory().CreateTracesToMetrics(ctx, set, cfg, tier[i].msink)
				must(t, err)
				l, err := NewFactory().CreateTracesToLogs(ctx, set, cfg, tier[i].lsink)
				must(t, err)
				must(t, m.Start(ctx, componenttest.NewNopHost()))
				must(t, l.Start(ctx, componenttest.NewNopHost()))
				tier[i].metrics, tier[i].logs = m, l
			}
			for _, td := range shuffledBatches(readDump(t, path), 17, exportOrder) {
				eachResource(td, func(one ptrace.Traces, id pcommon.TraceID) {
					must(t, tier[id[15]%traceTier].metrics.ConsumeTraces(ctx, one))
					must(t, tier[id[15]%traceTier].logs.ConsumeTraces(ctx, one))
				})
			}
			got := figures{}
			var routed [pairTier][]plog.Logs
			for i := range tier {
				must(t, tier[i].metrics.Shutdown(ctx))
				must(t, tier[i].logs.Shutdown(ctx))
				if len(tier[i].msink.AllMetrics()) > 0 {
					if n := len(lastPoints(t, tier[i].msink, MetricAcquires)); n > 0 {
						t.Fatalf("traces instance %d counted %d acquire series itself: with attribution forward only the pairs legs count acquires", i, n)
					}
					for k, n := range metricFigures(t, tier[i].msink) {
						got[k] += n
					}
				}
				for _, ld := range tier[i].lsink.AllLogs() {
					for p, lds := range routePairRecords(t, ld, pairTier) {
						routed[p] = append(routed[p], lds...)
					}
				}
			}
			rng := rand.New(rand.NewPCG(3, 9))
			for p := range routed {
				rng.Shuffle(len(routed[p]), func(i, j int) { routed[p][i], routed[p][j] = routed[p][j], routed[p][i] })
				sink := new(consumertest.MetricsSink)
				leg, err := NewFactory().CreateLogsToMetrics(ctx, set, cfg, sink)
				must(t, err)
				must(t, leg.Start(ctx, componenttest.NewNopHost()))
				for _, ld := range routed[p] {
					must(t, leg.ConsumeLogs(ctx, ld))
				}
				must(t, leg.Shutdown(ctx))
				if len(sink.AllMetrics()) == 0 {
					continue
				}
				for k, n := range metricFigures(t, sink) {
					got[k] += n
				}
			}
			compareFigures(t, got, want)
			for k := range got {
				if _, cause, ok := strings.Cut(k, " miss="); ok {
					causes[cause] = true
				}
			}
		})
	}
	for _, c := range spans.MissReasons {
		if !causes[c] {
			t.Errorf("no input produced a %s miss: the comparison does not cover it", c)
		}
	}
}

// pairRecord is one acquire record of pool "p", key "k".
func pairRecord(trace byte, start, leaseEnd int64, hit bool) plog.Logs {
	return pairLogs([]analyze.PairEvent{{
		TraceID: pcommon.TraceID{15: trace}, SpanID: pcommon.SpanID{7: trace},
		Scope: "p", HasScope: true, Key: "k", HasKey: true,
		Start: start, LeaseEnd: leaseEnd, Hit: hit,
	}})
}

// TestPairsLegHoldsAcquiresForPairWait: an acquire that arrives after a
// later-starting acquire of its pair, within pair_wait, is still
// attributed first, so causes are those of time order; nothing is counted
// before pair_wait has passed over the later arrival; an acquire arriving
// after pair_wait is attributed against the pair's state then (late).
func TestPairsLegHoldsAcquiresForPairWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		cfg := createDefaultConfig().(*Config)
		cfg.PairWait = 10 * time.Second
		sink := new(consumertest.MetricsSink)
		leg, err := NewFactory().CreateLogsToMetrics(ctx, connectortest.NewNopSettings(metadata.Type), cfg, sink)
		must(t, err)
		must(t, leg.Start(ctx, componenttest.NewNopHost()))
		defer func() { _ = leg.Shutdown(ctx) }() // idempotent: stops the sweep if a check fails
		sec := int64(time.Second)
		// The pair's second acquire (a miss 399 s after the first lease
		// ended, past the 5 min idle TTL: ttl) arrives first; its first
		// acquire (the cold miss) arrives 5 s later.
		must(t, leg.ConsumeLogs(ctx, pairRecord(2, 500*sec, 501*sec, false)))
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if v, ok := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: spans.MissCold}); ok {
			t.Fatalf("after 5 s of a 10 s pair_wait, %d cold misses counted: the acquire was not held", v)
		}
		if p := pendingGauge(t, sink); p != 1 {
			t.Fatalf("pending gauge = %d after 5 s, want the 1 acquire held", p)
		}
		must(t, leg.ConsumeLogs(ctx, pairRecord(1, 100*sec, 101*sec, false)))
		time.Sleep(12 * time.Second)
		synctest.Wait()
		for cause, want := range map[string]int64{spans.MissCold: 1, spans.MissTTL: 1} {
			if v, _ := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: false, AttrMissCause: cause}); v != want {
				t.Fatalf("%s misses = %d, want %d: the held acquires were not attributed in start order", cause, v, want)
			}
		}
		// Past pair_wait, an earlier acquire is attributed against the
		// pair's state now: a hit stays a hit, and it is late.
		must(t, leg.ConsumeLogs(ctx, pairRecord(3, 50*sec, 51*sec, true)))
		must(t, leg.Shutdown(ctx))
		if v, _ := counterValue(t, sink, MetricAcquires, map[string]any{AttrPoolID: "p", AttrCacheHit: true}); v != 1 {
			t.Fatalf("hits = %d, want 1", v)
		}
		if late := leg.(*pairsLeg).ps.LateAcquires(); late != 1 {
			t.Fatalf("late acquires = %d, want 1", late)
		}
		if p := pendingGauge(t, sink); p != 0 {
			t.Fatalf("pending gauge = %d after Shutdown, want 0", p)
		}
	})
}

// TestPairRecordsReadBackOrAreNamed: pairLogs and readPairs agree on every
// field; a record of another event is skipped; a malformed acquire record
// is skipped and counted with its place and what was expected, and the
// others of its batch are kept; what the forwarder's spans lacked reads
// back, a capability this version does not know skipped.
func TestPairRecordsReadBackOrAreNamed(t *testing.T) {
	ev := analyze.PairEvent{
		TraceID: pcommon.TraceID{1, 15: 2}, SpanID: pcommon.SpanID{3, 7: 4},
		Scope: "pool-a", HasScope: true, Key: "", HasKey: true, Session: "s-1", HasSession: true,
		Start: 10, LeaseEnd: 20, Hit: true, Redial: true, Failed: true, HealthCheck: true,
		Settings: analyze.PoolSettings{spans.AttrPoolIdleTTL: "0.25", spans.AttrPoolMaxIdle: "2"},
		Lacks:    rulefmt.CapTargetIdentity | rulefmt.CapRefusedAttempts,
	}
	b := readPairs(pairLogs([]analyze.PairEvent{ev, {TraceID: pcommon.TraceID{9}, Start: 5, LeaseEnd: 6}}))
	if b.bad != 0 || len(b.events) != 2 || !reflect.DeepEqual(b.events[0], ev) || b.events[1].HasScope || b.events[1].HasKey || b.events[1].Settings != nil {
		t.Fatalf("read back %+v (bad %d: %v), want %+v and an event without scope or key", b.events, b.bad, b.firstBad, ev)
	}
	// A capability a later forwarder names is skipped, as a report's writer section reads.
	later := pairLogs([]analyze.PairEvent{ev})
	lacks, _ := later.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes().Get(spans.AttrPairLacks)
	lacks.Slice().AppendEmpty().SetStr("a_later_capability")
	if b := readPairs(later); b.bad != 0 || len(b.events) != 1 || b.events[0].Lacks != ev.Lacks {
		t.Fatalf("read %+v (bad %d: %v), want lacks %v", b.events, b.bad, b.firstBad, ev.Lacks.Names())
	}
	for _, tt := range []struct {
		name    string
		mangle  func(plog.LogRecord)
		wantErr string
	}{
		{"lease end not an int", func(lr plog.LogRecord) { lr.Attributes().PutStr(spans.AttrPairLeaseEnd, "20") }, spans.AttrPairLeaseEnd + ": want an int"},
		{"hit missing", func(lr plog.LogRecord) { lr.Attributes().Remove(spans.AttrPairHit) }, spans.AttrPairHit + ": want a bool"},
		{"a setting not a string", func(lr plog.LogRecord) { lr.Attributes().PutDouble(spans.AttrPoolIdleTTL, 0.25) }, spans.AttrPoolIdleTTL + ": want a string"},
		{"scope not a string", func(lr plog.LogRecord) { lr.Attributes().PutInt(AttrPairScope, 7) }, AttrPairScope + ": want a string, got Int"},
		{"no trace id", func(lr plog.LogRecord) { lr.SetTraceID(pcommon.TraceID{}) }, "no trace id"},
		{"lacks not a list", func(lr plog.LogRecord) { lr.Attributes().PutStr(spans.AttrPairLacks, "target_identity") }, spans.AttrPairLacks + ": want a list of capability names, got Str"},
		{"a lack not a name", func(lr plog.LogRecord) {
			v, _ := lr.Attributes().Get(spans.AttrPairLacks)
			v.Slice().AppendEmpty().SetBool(true)
		}, spans.AttrPairLacks + "[2]: want a capability name, got Bool"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ld := pairLogs([]analyze.PairEvent{ev, ev, ev})
			recs := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
			tt.mangle(recs.At(1))
			other := recs.AppendEmpty()
			other.Body().SetStr("a violation record")
			b := readPairs(ld)
			if len(b.events) != 2 || b.bad != 1 || b.other != 1 {
				t.Fatalf("kept %d, bad %d, other %d; want 2, 1, 1", len(b.events), b.bad, b.other)
			}
			if b.firstBad == nil || !strings.Contains(b.firstBad.Error(), "record 1: "+tt.wantErr) {
				t.Fatalf("error = %v, want one naming record 1 and %q", b.firstBad, tt.wantErr)
			}
		})
	}
}

// TestPairsLegLifecycle starts and shuts down the logs → metrics leg as the
// Collector does, twice, and without Start; bad config fails at create.
func TestPairsLegLifecycle(t *testing.T) {
	ctx := context.Background()
	set := connectortest.NewNopSettings(metadata.Type)
	mk := func(cfg *Config) (connector.Logs, error) {
		return NewFactory().CreateLogsToMetrics(ctx, set, cfg, consumertest.NewNop())
	}
	leg, err := mk(createDefaultConfig().(*Config))
	must(t, err)
	if leg.Capabilities().MutatesData {
		t.Fatal("MutatesData must be false")
	}
	must(t, leg.Start(ctx, componenttest.NewNopHost()))
	must(t, leg.ConsumeLogs(ctx, pairRecord(1, 1, 2, false)))
	must(t, leg.Shutdown(ctx))
	must(t, leg.Shutdown(ctx))
	leg, err = mk(createDefaultConfig().(*Config))
	must(t, err)
	must(t, leg.Shutdown(ctx))
	cfg := createDefaultConfig().(*Config)
	cfg.Attribution = "pairs"
	if _, err := mk(cfg); err == nil || !strings.HasPrefix(err.Error(), "attribution:") {
		t.Fatalf("create error = %v, want one starting with attribution:", err)
	}
}

// pendingGauge is the last emitted value of the pairs leg's pending gauge.
func pendingGauge(t *testing.T, sink *consumertest.MetricsSink) int64 {
	t.Helper()
	all := sink.AllMetrics()
	if len(all) == 0 {
		t.Fatal("no metrics emitted")
	}
	ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if m := ms.At(i); m.Name() == MetricAcquiresPending {
			if m.Type() != pmetric.MetricTypeGauge || m.Gauge().DataPoints().Len() != 1 {
				t.Fatalf("%s is not a gauge of one point", MetricAcquiresPending)
			}
			return m.Gauge().DataPoints().At(0).IntValue()
		}
	}
	t.Fatalf("no %s in the last emission", MetricAcquiresPending)
	return 0
}
