package engine

import (
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestLatenciesAreMillisecondsRoundedToTheMicrosecond pins the latency
// figures' unit and rounding: milliseconds rounded to the nearest
// microsecond, in the percentiles and in the series' sample alike (an
// acquire of 1 234 567 ns reads 1.235, a call of 2 345 432 ns 2.345).
func TestLatenciesAreMillisecondsRoundedToTheMicrosecond(t *testing.T) {
	const acquire, call = 1_234_567 * time.Nanosecond, 2_345_432 * time.Nanosecond
	b := dumptest.New()
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := b.Add(ss, dumptest.Span{Trace: 1, Name: spans.SpanInvoke, End: acquire + call, Attrs: []any{spans.AttrCacheKey, "k"}})
	b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanAcquire, End: acquire,
		Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
	b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient, Start: acquire, End: acquire + call,
		Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s-1"}})
	cfg := rulefmt.Config{}
	d := NewDump(cfg.IndexOptions())
	d.Add(b.Traces())
	r, err := Analyze(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    report.Percentiles
		want float64
	}{
		{"acquire miss", r.Pool.Latency.AcquireMiss, 1.235},
		{"call", r.Pool.Latency.Call, 2.345},
	} {
		p := tc.p
		if p.Count != 1 || p.P50 == nil || p.P95 == nil || p.P99 == nil || *p.P50 != tc.want || *p.P95 != tc.want || *p.P99 != tc.want {
			t.Errorf("%s: %+v, want one sample of %v ms at every percentile", tc.name, p, tc.want)
		}
		if p.Sample != nil && !slices.Equal(p.Sample, []float64{tc.want}) {
			t.Errorf("%s: sample %v, want [%v]", tc.name, p.Sample, tc.want)
		}
	}
}
