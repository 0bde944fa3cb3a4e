package pool_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// TestEveryAcquireSpanRecordsThePoolsSettings pins the settings a replay
// reads off a dump: every acquire span, hit, miss and failed acquire alike,
// carries the pool's idle TTL, idle sessions per key, sizing rule, global
// idle cap and sweep interval, defaults filled in, so any one acquire span
// of a scope (a sampled trace, a partial dump) tells its settings.
func TestEveryAcquireSpanRecordsThePoolsSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts pool.Options
		want map[string]string
	}{
		{"defaults", pool.Options{SweepInterval: time.Minute}, map[string]string{
			spans.AttrPoolIdleTTL: "300", spans.AttrPoolMaxIdlePerKey: "1", spans.AttrPoolIdleSizing: spans.IdleSizingPeak,
			spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: "60",
		}},
		{"fixed sizing, acquire-only sweeps", pool.Options{IdleTTL: 200 * time.Millisecond, MaxIdlePerKey: 2, FixedIdlePerKey: true, MaxIdle: 5, SweepInterval: -1}, map[string]string{
			spans.AttrPoolIdleTTL: "0.2", spans.AttrPoolMaxIdlePerKey: "2", spans.AttrPoolIdleSizing: spans.IdleSizingFixed,
			spans.AttrPoolMaxIdle: "5", spans.AttrPoolSweepInterval: "-1",
		}},
		{"per call", pool.Options{MaxIdlePerKey: -1}, map[string]string{
			spans.AttrPoolMaxIdlePerKey: "-1", spans.AttrPoolIdleSizing: spans.IdleSizingPeak,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: tc.opts})
			h.mustCall(fixtures.ToolEcho, nil) // miss
			h.mustCall(fixtures.ToolEcho, nil) // hit, or a miss per call
			_ = h.pool.Close()
			if _, err := h.pool.Acquire(context.Background(), h.target); err == nil {
				t.Fatal("acquire on a closed pool succeeded")
			}
			acquires := h.spansNamed(spans.SpanAcquire)
			if len(acquires) != 3 {
				t.Fatalf("%d acquire spans, want 3", len(acquires))
			}
			for i, a := range acquires {
				for k, want := range tc.want {
					if got := attr(a, k); got != want {
						t.Errorf("acquire %d (hit %s): %s = %q, want %q", i, attr(a, spans.AttrCacheHit), k, got, want)
					}
				}
			}
		})
	}
}
