package gate

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestAcquireEndingBeforeItStartsIsNoLatencySample pins the boundary of a
// duration the spans can tell: an acquire span (a hit) whose end equals
// its start lasted 0 ms, a real sample, and a rule on its p99 passes; one
// whose end is one nanosecond before its start has no duration the spans
// can tell, so it is left out of the samples (counted in left_out), the
// percentiles are not measurable and the rule does not pass on them. Read
// as 0 ms, it would pass `acquire_hit.p99 < 5` on a duration nobody
// measured.
func TestAcquireEndingBeforeItStartsIsNoLatencySample(t *testing.T) {
	for _, tc := range []struct {
		name        string
		end         time.Duration // the acquire's end, relative to its start
		wantCount   int
		wantLeftOut int
		wantState   report.Measurability
		wantStatus  Status
	}{
		{"end at start", 0, 1, 0, report.Measurable, StatusPass},
		{"end 1ns before start", -time.Nanosecond, 0, 1, report.NotMeasurable, StatusNotApplicable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "gw")
			acqAt := 10 * time.Millisecond
			inv := b.Add(ss, dumptest.Span{Trace: 1, Name: spans.SpanInvoke, Start: 0, End: 500 * time.Millisecond, Attrs: []any{spans.AttrCacheKey, "k1"}})
			b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanAcquire, Start: acqAt, End: acqAt + tc.end,
				Attrs: []any{spans.AttrCacheKey, "k1", spans.AttrCacheHit, true}})
			b.Add(ss, dumptest.Span{Trace: 1, Parent: inv, Name: spans.SpanCallTool, Start: 100 * time.Millisecond, End: 400 * time.Millisecond,
				Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s1"}})
			gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte("rules:\n  - id: fast-hits\n    scope: dump\n    expect: {of: acquire_hit.p99, op: \"<\", than: 5}\n"))
			if err != nil {
				t.Fatal(err)
			}
			r, res := gateEval(t, rulefmt.Config{}, gc.Rules, b.Traces())
			lat := r.Pool.Latency.AcquireHit
			if lat.Count != tc.wantCount || lat.LeftOut != tc.wantLeftOut {
				t.Errorf("acquire_hit count %d, left out %d; want %d and %d", lat.Count, lat.LeftOut, tc.wantCount, tc.wantLeftOut)
			}
			if f := r.FigureOf("acquire_hit.p99"); f.State != tc.wantState {
				t.Errorf("acquire_hit.p99 is %s (%s), want %s", f.State, f.Why, tc.wantState)
			}
			if got := res["fast-hits"]; got.Status != tc.wantStatus {
				t.Errorf("fast-hits %s (%s), want %s", got.Status, got.Found, tc.wantStatus)
			}
		})
	}
}
