package engine

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// settingsKV are acquire span attributes recording a pool's settings:
// TTL 300 s, one idle session per key, peak sizing, maxIdle idle sessions
// in all.
func settingsKV(maxIdle int) []any {
	return []any{
		spans.AttrPoolIdleTTL, 300.0,
		spans.AttrPoolMaxIdlePerKey, 1,
		spans.AttrPoolIdleSizing, spans.IdleSizingPeak,
		spans.AttrPoolMaxIdle, maxIdle,
	}
}

// TestForwardedPairsCarryTheirScopesSettings pins that the settings a pool
// scope recorded travel with its forwarded acquires: a scope whose global
// idle cap of one evicts key a's session when key b's is released makes a's
// next miss evicted, in the batch analysis and across a fleet whose
// forwarding streams each see only some of the scope's traces; with a cap
// of two, nothing is evicted and the miss is unexplained.
func TestForwardedPairsCarryTheirScopesSettings(t *testing.T) {
	for _, tc := range []struct {
		maxIdle int
		want    string
	}{
		{1, spans.MissEvicted},
		{2, spans.MissUnexplained},
	} {
		t.Run(tc.want, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			kv := settingsKV(tc.maxIdle)
			d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "a", hit: false, handshake: true, session: "s1", acquireKV: kv})
			d.invocation(ss, lease{trace: 2, start: 500 * time.Millisecond, end: 2 * time.Second, key: "b", hit: false, handshake: true, session: "s2", acquireKV: kv})
			d.invocation(ss, lease{trace: 3, start: 3 * time.Second, end: 4 * time.Second, key: "a", hit: false, handshake: true, session: "s3", acquireKV: kv})
			cfg := rulefmt.Config{}
			ref := analyzeTD(t, cfg, d.td)
			if got := ref.Pool.MissReasons[tc.want]; got != 1 {
				t.Fatalf("batch analysis: miss reasons %v, want one %s", ref.Pool.MissReasons, tc.want)
			}
			checkForwardedPairs(t, cfg, ref, singleSpans(d.td), 11)
		})
	}
}
