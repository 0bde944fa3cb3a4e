package pool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestAbandonedBreakersArePrunedAtTheirBoundaries pins when an open breaker
// of a key nobody calls any more is forgotten: untouched for more than
// twice the idle TTL (exactly twice: kept) and its cooldown over (a
// nanosecond before its end: kept; exactly at its end: forgotten). Pruning
// runs when a key without a breaker fails a dial; a probe key's first
// failure triggers it (its own breaker stays closed: threshold 2), and the
// open-breaker count says whether the abandoned key's breaker is still held.
func TestAbandonedBreakersArePrunedAtTheirBoundaries(t *testing.T) {
	const ttl = 10 * time.Second
	for _, c := range []struct {
		name     string
		cooldown time.Duration
		probeAt  time.Duration // after the abandoned key's breaker opened
		pruned   bool
	}{
		{"cooldown over, untouched exactly twice the TTL: kept", 5 * time.Second, 2 * ttl, false},
		{"cooldown over, untouched a nanosecond past twice the TTL: pruned", 5 * time.Second, 2*ttl + time.Nanosecond, true},
		{"untouched long enough, a nanosecond before the cooldown ends: kept", 30 * time.Second, 30*time.Second - time.Nanosecond, false},
		{"untouched long enough, exactly at the cooldown's end: pruned", 30 * time.Second, 30 * time.Second, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{clock: true, pool: pool.Options{BreakerThreshold: 2, BreakerCooldown: c.cooldown, IdleTTL: ttl}})
			tenant := func(name string) *pool.Target {
				tg, err := pool.NewTarget(pool.TargetConfig{Endpoint: h.srv.URL(), Header: http.Header{"X-Tenant": {name}}})
				if err != nil {
					t.Fatal(err)
				}
				return tg
			}
			failDial := func(tg *pool.Target) {
				t.Helper()
				h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, Method: "notifications/initialized"})
				_, err := h.pool.CallTool(context.Background(), tg, &mcp.CallToolParams{Name: fixtures.ToolEcho})
				var hs *pool.HTTPStatusError
				if !errors.As(err, &hs) {
					t.Fatalf("dial against a 503: err = %v, want an HTTP 503 dial failure", err)
				}
			}
			abandoned := tenant("abandoned")
			failDial(abandoned)
			failDial(abandoned)
			if st := h.pool.Stat(); st.OpenBreakers != 1 {
				t.Fatalf("stat = %+v, want the abandoned key's breaker open", st)
			}
			h.clock.Advance(c.probeAt)
			failDial(tenant("probe"))
			want := 1
			if c.pruned {
				want = 0
			}
			if st := h.pool.Stat(); st.OpenBreakers != want {
				t.Errorf("open breakers = %d %s after the abandoned key's opened, want %d (pruned %v)",
					st.OpenBreakers, fmt.Sprint(c.probeAt), want, c.pruned)
			}
		})
	}
}
