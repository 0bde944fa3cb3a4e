package engine

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

// TestAMissAfterAPrewarmedSessionIsNotCold: a pre-warm handshake
// (pool.Options.Prewarm) is its pair's first session, idle from the
// handshake's end, so the first acquire that misses after it gets the
// cause the pool gives it (a known key whose session expired: ttl), not
// cold; idle exactly the TTL is not expired (the pool's rule), so that
// miss is unexplained. A failed pre-warm opened nothing (the pool forgets
// the key: cold), and a pre-warm of another key is another pair's. The
// pair stays one key of its scope either way.
func TestAMissAfterAPrewarmedSessionIsNotCold(t *testing.T) {
	const ttl = time.Second
	for _, tc := range []struct {
		name       string
		prewarmKey string
		failed     bool
		start      time.Duration // of the acquire; the pre-warm ran 0-100ms
		hit        bool
		want       string // the miss cause, "" for a hit
	}{
		{"expired unused", "k1", false, 100*time.Millisecond + ttl + time.Microsecond, false, spans.MissTTL},
		{"idle exactly the TTL", "k1", false, 100*time.Millisecond + ttl, false, spans.MissUnexplained},
		{"used", "k1", false, 500 * time.Millisecond, true, ""},
		{"failed pre-warm", "k1", true, 2 * time.Second, false, spans.MissCold},
		{"another key pre-warmed", "k2", false, 2 * time.Second, false, spans.MissCold},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gateway")
			hs := sp{trace: 1, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: 0, end: 100 * time.Millisecond,
				attrs: []any{spans.AttrPoolID, "scope-1", spans.AttrCacheKey, tc.prewarmKey, spans.AttrPrewarm, true, spans.AttrSessionID, "s-0"}}
			if tc.failed {
				hs.status = ptrace.StatusCodeError
			}
			d.add(ss, hs)
			d.invocation(ss, lease{trace: 2, start: tc.start, end: tc.start + 100*time.Millisecond, key: "k1", hit: tc.hit, handshake: !tc.hit,
				attempt: 1, session: "s-1", invokeKV: []any{spans.AttrPoolID, "scope-1"}})
			p := analyzeTD(t, rulefmt.Config{IdleTTL: ttl}, d.td).Pool
			if p.Acquires != 1 || (p.Hits == 1) != tc.hit || p.Keys != 1 {
				t.Errorf("acquires %d, hits %d, keys %d; want 1 acquire, hit %v, 1 key", p.Acquires, p.Hits, p.Keys, tc.hit)
			}
			for reason, n := range p.MissReasons {
				if want := map[bool]int{true: 1}[reason == tc.want]; n != want {
					t.Errorf("%d %s misses, want %d (the miss is %q)", n, reason, want, tc.want)
				}
			}
		})
	}
}
