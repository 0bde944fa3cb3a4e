package pool_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/spans"
)

// TestOperationDurationCarriesErrorTypeOnlyOnFailures pins the
// error.type label of mcp.client.operation.duration: a successful call's
// point has none, a tool that answers isError has tool_error, one refused
// with HTTP 500 has its own class; so a dashboard's error rate counts
// failures, never every call.
func TestOperationDurationCarriesErrorTypeOnlyOnFailures(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "ok"})
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "ok"})
	if _, err := h.call(context.Background(), fixtures.ToolFail, nil); err != nil {
		t.Fatalf("a tool error is a result, not an error: %v", err)
	}
	h.srv.RejectNext(fixtures.Reject{Status: 500, Method: "tools/call"})
	if _, err := h.call(context.Background(), fixtures.ToolEcho, nil); err == nil {
		t.Fatal("a call refused with 500 succeeded")
	}
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]uint64{} // error.type ("" for none) → calls
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != spans.MetricOperationDuration {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value(attribute.Key(spans.AttrErrorType))
				counts[v.AsString()] += dp.Count
			}
		}
	}
	if counts[""] != 2 || counts[spans.ErrTypeToolError] != 1 || len(counts) != 3 {
		t.Errorf("operation duration points by error.type = %v, want 2 without, 1 %s and 1 of the 500's class", counts, spans.ErrTypeToolError)
	}
}
