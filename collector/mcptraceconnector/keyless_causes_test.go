package mcptraceconnector

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestMissesWhoseCauseTheSpansCannotShowCountAsUnknown pins the metrics
// leg's miss causes against what mcptrace analyze can show of them, pool
// by pool. Three misses of a pool, the last a second attempt: keyed a, b,
// c, two cold and a redial; keyed a, a, b, a cold, an unexplained (a's
// session sat idle) and a redial; without a cache key the three read as
// one key, so the second, which found that key's session idle, reads
// unexplained, a cause the analyzer marks not measurable without a target
// identity (it may have been a cold start of another target). The
// connector counts it under mcptrace.miss.cause="unknown", keeps cold and
// redial, says so in the metric's description and logs why once. A keyed
// pool beside a keyless one keeps its causes: the pair stage keeps each
// pool's keys apart. Each pool's counters equal mcptrace analyze's on
// that pool's spans alone, with the same relabelling, whether one
// instance attributes them (attribution local) or a pairs leg fed the
// acquire records a traces leg forwards (attribution forward: the records
// say what the spans of their pool lacked).
func TestMissesWhoseCauseTheSpansCannotShowCountAsUnknown(t *testing.T) {
	abc, aab, keyless := []string{"a", "b", "c"}, []string{"a", "a", "b"}, []string{"", "", ""}
	for _, tc := range []struct {
		name   string
		pools  [][]string                  // each pool's keys, pool-1 first
		causes map[string]map[string]int64 // pool, cause: misses
		logged bool
	}{
		{"keyed", [][]string{abc}, map[string]map[string]int64{"pool-1": {"cold": 2, "redial": 1}}, false},
		{"keyed, a key reused", [][]string{aab}, map[string]map[string]int64{"pool-1": {"cold": 1, "unexplained": 1, "redial": 1}}, false},
		{"keyless", [][]string{keyless}, map[string]map[string]int64{"pool-1": {"cold": 1, MissCauseUnknown: 1, "redial": 1}}, true},
		{"a keyed pool beside a keyless one", [][]string{aab, keyless}, map[string]map[string]int64{
			"pool-1": {"cold": 1, "unexplained": 1, "redial": 1}, "pool-2": {"cold": 1, MissCauseUnknown: 1, "redial": 1}}, true},
	} {
		for _, attribution := range []string{AttributionLocal, AttributionForward} {
			t.Run(tc.name+"/"+attribution, func(t *testing.T) {
				cfg := NewFactory().CreateDefaultConfig().(*Config)
				cfg.Attribution = attribution
				s, err := cfg.settings()
				if err != nil {
					t.Fatal(err)
				}
				all := ptrace.NewTraces()
				want := figures{}
				for i, keys := range tc.pools {
					one := poolDump(keys, i+1)
					one.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
					f, _, _ := batchFigures(t, dumptest.WriteTraces(t, poolDump(keys, i+1)), s)
					for k, n := range f {
						if strings.HasPrefix(k, "acquire ") { // the legs under test count acquires only
							want.add(k, n)
						}
					}
				}
				core, logs := observer.New(zap.InfoLevel)
				sink := countAcquires(t, dumptest.WriteTraces(t, all), cfg, zap.New(core))

				got := map[string]map[string]int64{}
				for _, p := range lastPoints(t, sink, MetricAcquires) {
					if hit, _ := p.Attributes().Get(AttrCacheHit); hit.Bool() {
						t.Errorf("a hit counted: %v", p.Attributes().AsRaw())
						continue
					}
					pool := str(p, AttrPoolID)
					if got[pool] == nil {
						got[pool] = map[string]int64{}
					}
					got[pool][str(p, AttrMissCause)] += p.IntValue()
				}
				if !maps.EqualFunc(got, tc.causes, maps.Equal) {
					t.Errorf("misses by pool and %s = %v, want %v", AttrMissCause, got, tc.causes)
				}
				compareFigures(t, metricFigures(t, sink), want)

				if desc := metricDescription(t, sink, MetricAcquires); !strings.Contains(desc, MissCauseUnknown) {
					t.Errorf("%s's description %q does not say what %s=%s means", MetricAcquires, desc, AttrMissCause, MissCauseUnknown)
				}
				said := logs.FilterMessageSnippet(AttrMissCause + "=" + MissCauseUnknown).All()
				if len(said) != map[bool]int{true: 1}[tc.logged] || tc.logged && said[0].ContextMap()["why"] == "" {
					t.Errorf("logged %d times why misses count as %s (%v), want %v", len(said), MissCauseUnknown, said, tc.logged)
				}
			})
		}
	}
}

// poolDump is dumptest.MissesOnKeys(keys...) as pool n writes it: its
// pool id pool-n, its trace ids its own.
func poolDump(keys []string, n int) ptrace.Traces {
	td := dumptest.MissesOnKeys(keys...).Traces()
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		rs.Resource().Attributes().PutStr(spans.ResourceServiceInstanceID, fmt.Sprintf("pool-%d", n))
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				tid := ss.At(k).TraceID()
				tid[0] = byte(n)
				ss.At(k).SetTraceID(tid)
			}
		}
	}
	return td
}

// countAcquires feeds the dump at path through the legs that count its
// acquires under cfg, logging to logger, and returns the sink of their
// counters: a traces → metrics leg (attribution local), or a traces →
// logs leg whose acquire records a logs → metrics pairs leg attributes
// (attribution forward).
func countAcquires(t *testing.T, path string, cfg *Config, logger *zap.Logger) *consumertest.MetricsSink {
	t.Helper()
	ctx := context.Background()
	set := connectortest.NewNopSettings(metadata.Type)
	set.Logger = logger
	sink := new(consumertest.MetricsSink)
	if cfg.Attribution != AttributionForward {
		leg, err := NewFactory().CreateTracesToMetrics(ctx, set, cfg, sink)
		must(t, err)
		must(t, leg.Start(ctx, componenttest.NewNopHost()))
		for _, td := range readDump(t, path) {
			must(t, leg.ConsumeTraces(ctx, td))
		}
		must(t, leg.Shutdown(ctx))
		return sink
	}
	records := new(consumertest.LogsSink)
	traces, err := NewFactory().CreateTracesToLogs(ctx, set, cfg, records)
	must(t, err)
	must(t, traces.Start(ctx, componenttest.NewNopHost()))
	for _, td := range readDump(t, path) {
		must(t, traces.ConsumeTraces(ctx, td))
	}
	must(t, traces.Shutdown(ctx))
	pairs, err := NewFactory().CreateLogsToMetrics(ctx, set, cfg, sink)
	must(t, err)
	must(t, pairs.Start(ctx, componenttest.NewNopHost()))
	for _, ld := range records.AllLogs() {
		must(t, pairs.ConsumeLogs(ctx, ld))
	}
	must(t, pairs.Shutdown(ctx))
	return sink
}

// metricDescription is the description of metric name in the last
// metrics the sink received.
func metricDescription(t *testing.T, sink *consumertest.MetricsSink, name string) string {
	t.Helper()
	all := sink.AllMetrics()
	if len(all) == 0 {
		t.Fatal("no metrics sent")
	}
	var found pmetric.Metric
	ok := false
	rms := all[len(all)-1].ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		for j := 0; j < rms.At(i).ScopeMetrics().Len(); j++ {
			ms := rms.At(i).ScopeMetrics().At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == name {
					found, ok = ms.At(k), true
				}
			}
		}
	}
	if !ok {
		t.Fatalf("no %s sent", name)
	}
	return found.Description()
}
