package engine

import (
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// protocolTrace builds one pooled invocation of revision rev, its call
// carrying session (none when ""), starting at at.
func protocolTrace(trace uint64, at time.Duration, rev, session string) ptrace.Traces {
	b := dumptest.New()
	b.NextID = trace * 10
	ss := b.Resource(spans.ResourceServiceInstanceID, "gw-1")
	ver := []any{spans.AttrProtocolVersion, rev}
	inv := b.Add(ss, dumptest.Span{Trace: trace, Name: spans.SpanInvoke, Start: at, End: at + 100*time.Millisecond, Attrs: []any{spans.AttrCacheKey, "k"}})
	b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanAcquire, Start: at, End: at + 10*time.Millisecond,
		Attrs: append([]any{spans.AttrCacheKey, "k", spans.AttrCacheHit, trace > 1}, ver...)})
	attrs := append([]any{spans.AttrMethodName, spans.MethodToolsCall}, ver...)
	if session != "" {
		attrs = append(attrs, spans.AttrSessionID, session)
	}
	b.Add(ss, dumptest.Span{Trace: trace, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient,
		Start: at + 10*time.Millisecond, End: at + 100*time.Millisecond, Attrs: attrs})
	return b.Traces()
}

// TestARevisionWithASessionInOneTraceIsNotSessionlessInAStream pins the
// merge of a revision's figures across traces finalized apart: its
// counts add up, and a revision whose calls carried a session id in any
// trace is not sessionless,
// whichever trace is measured first, in a stream that measures each trace
// on its own as in one index.
func TestARevisionWithASessionInOneTraceIsNotSessionlessInAStream(t *testing.T) {
	const w = time.Minute
	for _, order := range [][2]string{{"s-1", ""}, {"", "s-1"}} {
		t.Run(fmt.Sprintf("sessions %q then %q", order[0], order[1]), func(t *testing.T) {
			parts := []ptrace.Traces{
				protocolTrace(1, 0, spans.ProtocolLegacy, order[0]),
				protocolTrace(2, 2*w, spans.ProtocolLegacy, order[1]), // the window passes trace 1
				protocolTrace(3, 4*w, "other", ""),                    // and trace 2
			}
			eng, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: 1, Window: w, HoldComplete: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, td := range parts {
				if err := eng.Add(td); err != nil {
					eng.Close()
					t.Fatal(err)
				}
			}
			r, err := eng.Report()
			if err != nil {
				t.Fatal(err)
			}
			if r.Stream == nil || r.Stream.EarlyTraces < 2 {
				t.Fatalf("stream %+v: want the first two traces finalized apart", r.Stream)
			}
			for _, p := range r.ByProtocol {
				if p.ProtocolVersion == spans.ProtocolLegacy {
					if p.Traces != 2 || p.Calls != 2 || p.Acquires != 2 || p.Hits != 1 || p.Misses != 1 || p.Sessionless {
						t.Errorf("%s: %d traces, %d calls, %d acquires, %d hits, %d misses, sessionless %v; want 2, 2, 2, 1, 1, false",
							p.ProtocolVersion, p.Traces, p.Calls, p.Acquires, p.Hits, p.Misses, p.Sessionless)
					}
					return
				}
			}
			t.Fatalf("no %s group in %+v", spans.ProtocolLegacy, r.ByProtocol)
		})
	}
}
