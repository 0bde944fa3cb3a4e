package pool_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/spans"
)

func TestMetricsCountAcquiresSessionsAndDurations(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for range 3 {
		h.mustCall("echo", map[string]any{"text": "m"})
	}
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	byName := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			byName[m.Name] = m.Data
		}
	}
	for _, name := range []string{spans.MetricAcquires, spans.MetricConnectionWaitTime, spans.MetricConnectionCreateTime, spans.MetricConnectionUseTime, spans.MetricOperationDuration, spans.MetricConnectionCount} {
		if _, ok := byName[name]; !ok {
			t.Errorf("metric %s not exported", name)
		}
	}
	acq, ok := byName[spans.MetricAcquires].(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("acquires is %T", byName[spans.MetricAcquires])
	}
	var hits, misses int64
	for _, dp := range acq.DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(spans.AttrCacheHit))
		if v.AsBool() {
			hits += dp.Value
		} else {
			misses += dp.Value
			if r, _ := dp.Attributes.Value(attribute.Key(spans.AttrMissReason)); r.AsString() != spans.MissCold {
				t.Errorf("miss reason label = %q, want cold", r.AsString())
			}
		}
	}
	if hits != 2 || misses != 1 {
		t.Errorf("acquire counts hits=%d misses=%d, want 2 and 1", hits, misses)
	}
	conns, ok := byName[spans.MetricConnectionCount].(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("connection count is %T", byName[spans.MetricConnectionCount])
	}
	for _, dp := range conns.DataPoints {
		state, _ := dp.Attributes.Value(attribute.Key(spans.AttrConnectionState))
		want := map[string]int64{spans.StateIdle: 1, spans.StateUsed: 0}[state.AsString()]
		if dp.Value != want {
			t.Errorf("connection count %s = %d, want %d", state.AsString(), dp.Value, want)
		}
	}
	ops, ok := byName[spans.MetricOperationDuration].(metricdata.Histogram[float64])
	if !ok || len(ops.DataPoints) == 0 || ops.DataPoints[0].Count != 3 {
		t.Errorf("operation duration = %+v, want 3 recorded calls", byName[spans.MetricOperationDuration])
	}
}
