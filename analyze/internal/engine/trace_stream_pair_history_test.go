package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// pooledCall builds one trace of pool "gw-1": an invocation of key k at
// at, its acquire (hit as given) and its call on session.
func pooledCall(trace uint64, at time.Duration, hit bool, session string) ptrace.Traces {
	b := dumptest.New()
	b.NextID = trace * 10
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := b.Add(ss, dumptest.Span{Trace: trace, Name: spans.SpanInvoke, Start: at, End: at + time.Second, Attrs: []any{spans.AttrCacheKey, "k"}})
	b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond,
		Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, hit}})
	b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient,
		Start: at + time.Millisecond, End: at + time.Second,
		Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, session}})
	return b.Traces()
}

// TestATraceStreamKeepsEachPairsHistoryAcrossFlushes pins that a
// TraceStream attributes each Flush's acquires after those of the
// Flushes before, as one analysis would: a key's first acquire is its
// cold start once, a later miss while its session sat idle is
// unexplained (not cold again), and each Flush returns only its own
// counts.
func TestATraceStreamKeepsEachPairsHistoryAcrossFlushes(t *testing.T) {
	s, err := NewTraceStream(rulefmt.Config{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		td   ptrace.Traces
		want []AcquireCount
	}{
		{pooledCall(1, 0, false, "s-1"), []AcquireCount{{Pool: "gw-1", MissCause: spans.MissCold, N: 1}}},
		{pooledCall(2, 10*time.Second, true, "s-1"), []AcquireCount{{Pool: "gw-1", Hit: true, N: 1}}},
		{pooledCall(3, 20*time.Second, false, "s-2"), []AcquireCount{{Pool: "gw-1", MissCause: spans.MissUnexplained, N: 1}}},
	} {
		s.Add(tc.td)
		out, err := s.Flush()
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, out.Acquires, cmpopts.IgnoreFields(AcquireCount{}, "Writer")); d != "" {
			t.Errorf("flush %d: acquires (-want +got):\n%s", i+1, d)
		}
		for _, x := range out.Acquires {
			// The keyed pool's writer tells its targets apart: its causes stand.
			if f := (&report.Report{Writer: x.Writer}).FigureOf(report.MissCauseFigure(x.MissCause)); x.Writer == nil || !f.Known() {
				t.Errorf("flush %d: %s's writer %+v, cause %s %+v", i+1, x.Pool, x.Writer, x.MissCause, f)
			}
		}
	}
}
