package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestALeaseNeverEndsBeforeItsAcquireBegan pins the lease's end where a
// writer's clocks disagree: an acquire whose parent span ends before the
// acquire starts (another process's clock, or a hostile dump) holds its
// session until the acquire's start at least, never from before it. The
// next miss of the key, 4 minutes after the acquire began, then found the
// session idle for less than the 5 minute TTL: unexplained; counted from
// the parent's end it would pass for a TTL expiry.
func TestALeaseNeverEndsBeforeItsAcquireBegan(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	miss := func(trace uint64, invStart, invEnd, at time.Duration, session string) {
		inv := d.add(ss, sp{trace: trace, name: spans.SpanInvoke, start: invStart, end: invEnd, attrs: []any{spans.AttrCacheKey, "k"}})
		acq := d.add(ss, sp{trace: trace, parent: inv, name: spans.SpanAcquire, start: at, end: at + 100*time.Millisecond,
			attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false}})
		d.add(ss, sp{trace: trace, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: at, end: at + 100*time.Millisecond,
			attrs: []any{spans.AttrSessionID, session}})
	}
	miss(1, 0, time.Second, 10*time.Minute, "s1") // the invoke ended 10 minutes before its acquire began
	miss(2, 14*time.Minute, 14*time.Minute+time.Second, 14*time.Minute, "s2")
	r := analyzeTD(t, rulefmt.Config{}, d.td)
	if got := r.Pool.MissReasons; got[spans.MissCold] != 1 || got[spans.MissUnexplained] != 1 || got[spans.MissTTL] != 0 {
		t.Errorf("miss reasons %v, want one cold, one unexplained, no ttl", got)
	}
}
