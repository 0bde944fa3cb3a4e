package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/pool"
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

func TestMetricsSessionDurationPendingAndTimeouts(t *testing.T) {
	h := newHarness(t, harnessOpts{pool: pool.Options{MaxInUsePerKey: 1, AcquireTimeout: time.Millisecond}})
	ctx := context.Background()
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, pool.ErrAcquireTimeout) {
		t.Fatalf("err = %v, want ErrAcquireTimeout", err)
	}
	held.Release(errors.New("drop")) // closes the session: one lifetime recorded
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	byName := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			byName[m.Name] = m.Data
		}
	}
	dur, ok := byName[spans.MetricSessionDuration].(metricdata.Histogram[float64])
	if !ok || len(dur.DataPoints) != 1 || dur.DataPoints[0].Count != 1 {
		t.Fatalf("%s = %+v, want one session lifetime", spans.MetricSessionDuration, byName[spans.MetricSessionDuration])
	}
	if v, _ := dur.DataPoints[0].Attributes.Value(attribute.Key(spans.AttrProtocolVersion)); v.AsString() != spans.ProtocolLegacy {
		t.Errorf("session duration protocol label = %q, want %s", v.AsString(), spans.ProtocolLegacy)
	}
	to, ok := byName[spans.MetricTimeouts].(metricdata.Sum[int64])
	if !ok || len(to.DataPoints) != 1 || to.DataPoints[0].Value != 1 {
		t.Errorf("%s = %+v, want 1", spans.MetricTimeouts, byName[spans.MetricTimeouts])
	}
	pend, ok := byName[spans.MetricPendingRequests].(metricdata.Sum[int64])
	if !ok || len(pend.DataPoints) != 1 || pend.DataPoints[0].Value != 0 {
		t.Errorf("%s = %+v, want a gauge at 0", spans.MetricPendingRequests, byName[spans.MetricPendingRequests])
	}
}

// TestOnlyAWaitThatRunsOutCountsAsATimeout pins what the timeouts metric
// and Stat.Timeouts count: an acquire that gave up waiting at the key's
// in-use cap because Options.AcquireTimeout ran out, not one whose caller
// cancelled the wait.
func TestOnlyAWaitThatRunsOutCountsAsATimeout(t *testing.T) {
	for _, tc := range []struct {
		name         string
		timeout      time.Duration // Options.AcquireTimeout
		cancel       bool
		wantErr      error
		wantTimeouts int64
	}{
		{"the AcquireTimeout runs out", time.Millisecond, false, pool.ErrAcquireTimeout, 1},
		{"the caller cancels the wait", 0, true, context.Canceled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: pool.Options{MaxInUsePerKey: 1, AcquireTimeout: tc.timeout}})
			held, err := h.pool.Acquire(context.Background(), h.target)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Release(nil)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.cancel {
				cancel()
			}
			defer cancel()
			if _, err := h.pool.Acquire(ctx, h.target); !errors.Is(err, tc.wantErr) {
				t.Fatalf("acquire at the cap: %v, want %v", err, tc.wantErr)
			}
			var rm metricdata.ResourceMetrics
			if err := h.reader.Collect(context.Background(), &rm); err != nil {
				t.Fatal(err)
			}
			var got int64
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == spans.MetricTimeouts {
						for _, dp := range sum.DataPoints {
							got += dp.Value
						}
					}
				}
			}
			if st := h.pool.Stat(); got != tc.wantTimeouts || st.Timeouts != tc.wantTimeouts {
				t.Errorf("%s = %d, Stat.Timeouts = %d; want %d", spans.MetricTimeouts, got, st.Timeouts, tc.wantTimeouts)
			}
		})
	}
}
