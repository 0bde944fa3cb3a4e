package analyze

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestPrewarmHandshakeIsASessionOpenedNotAMissNorAColdStart reads a dump
// shaped as the pool writes a pre-warmed scope (pool.Options.Prewarm): a
// handshake span of its own trace, with no acquire above it, marked
// plugin.mcp.prewarm and naming its pool scope, then an invocation whose
// acquire hits the pre-warmed session. The handshake counts as a session
// opened (handshakes, per scope too), never as a miss, and is no sample of
// the handshake latency or a revision's cold start, which measure what a
// caller waited for. The same handshake unmarked is a sample: the
// contrast shows the mark is what the stage reads.
func TestPrewarmHandshakeIsASessionOpenedNotAMissNorAColdStart(t *testing.T) {
	for _, tc := range []struct {
		name         string
		marked       bool
		wantLatCount int
	}{
		{"pre-warm", true, 0},
		{"unmarked", false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gateway")
			attrs := []any{spans.AttrPoolID, "scope-1", spans.AttrCacheKey, "k1", spans.AttrSessionID, "s-1", spans.AttrProtocolVersion, spans.ProtocolLegacy}
			if tc.marked {
				attrs = append(attrs, spans.AttrPrewarm, true)
			}
			d.add(ss, sp{trace: 1, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: 0, end: 400 * time.Millisecond, attrs: attrs})
			d.invocation(ss, lease{trace: 2, start: time.Second, end: 1100 * time.Millisecond, key: "k1", hit: true, attempt: 1, session: "s-1",
				invokeKV: []any{spans.AttrPoolID, "scope-1"}})
			r := analyzeTD(t, rulefmt.Config{}, d.td)
			p := r.Pool
			if p.Acquires != 1 || p.Hits != 1 || p.Misses != 0 || p.Handshakes != 1 {
				t.Errorf("acquires %d, hits %d, misses %d, handshakes %d; want 1, 1, 0, 1", p.Acquires, p.Hits, p.Misses, p.Handshakes)
			}
			for reason, n := range p.MissReasons {
				if n != 0 {
					t.Errorf("%d %s misses, want none", n, reason)
				}
			}
			if len(p.ByScope) != 1 || p.ByScope[0].Scope != "scope-1" || p.ByScope[0].Handshakes != 1 || p.ByScope[0].Misses != 0 {
				t.Errorf("by scope = %+v, want one row scope-1 with 1 handshake and no miss", p.ByScope)
			}
			if got := p.Latency.Handshake.Count; got != tc.wantLatCount {
				t.Errorf("handshake latency samples = %d, want %d", got, tc.wantLatCount)
			}
			cold := 0
			for _, pr := range r.ByProtocol {
				cold += pr.ColdStart.Count
			}
			if cold != tc.wantLatCount {
				t.Errorf("cold-start samples over the revisions = %d, want %d", cold, tc.wantLatCount)
			}
		})
	}
}
