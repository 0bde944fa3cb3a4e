package engine

import (
	"testing"
	"time"

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
	// The invoke ended 10 minutes before its acquire began.
	d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, acquireAt: 10 * time.Minute, key: "k", hit: false, handshake: true, session: "s1"})
	d.invocation(ss, lease{trace: 2, start: 14 * time.Minute, end: 14*time.Minute + time.Second, key: "k", hit: false, handshake: true, session: "s2"})
	r := analyzeTD(t, rulefmt.Config{}, d.td)
	if got := r.Pool.MissReasons; got[spans.MissCold] != 1 || got[spans.MissUnexplained] != 1 || got[spans.MissTTL] != 0 {
		t.Errorf("miss reasons %v, want one cold, one unexplained, no ttl", got)
	}
}
