package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestBreakerCountsADialThatOutlastsTheCallersDeadline pins that a server
// which hangs its handshake opens the breaker: a dial that outlives the
// caller's deadline says the server is down for its callers, so it counts
// as a failed dial. A dial the caller cancels says nothing about the server
// and does not count (the contrast).
func TestBreakerCountsADialThatOutlastsTheCallersDeadline(t *testing.T) {
	cases := []struct {
		name    string
		ctx     func(t *testing.T, h *harness) context.Context
		wantErr error
		opens   bool
	}{
		{"the caller's deadline passes", func(t *testing.T, h *harness) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}, context.DeadlineExceeded, true},
		{"the caller cancels (contrast)", func(t *testing.T, h *harness) context.Context {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			seen := len(h.srv.Requests())
			go func() {
				// Cancel once the held initialize reached the server
				// (server/discover, then initialize), so the dial is
				// in flight.
				defer cancel()
				_ = h.srv.WaitRequests(ctx, seen+2)
			}()
			return ctx
		}, context.Canceled, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{pool: pool.Options{BreakerThreshold: 2, BreakerCooldown: time.Hour}})
			h.srv.SetMethodLatency("initialize", time.Hour)
			for i := range 2 {
				_, err := h.call(tc.ctx(t, h), fixtures.ToolSideEffect, nil)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("dial %d against a hung server: err = %v, want %v", i+1, err, tc.wantErr)
				}
			}
			st := h.pool.Stat()
			if !tc.opens {
				if st.BreakerOpens != 0 || st.OpenBreakers != 0 {
					t.Errorf("stat = %+v, want the breaker closed: cancelled dials prove nothing", st)
				}
				h.srv.SetMethodLatency("initialize", 0)
				if got := h.mustCall(fixtures.ToolSideEffect, nil); got != "count:1" {
					t.Errorf("call after the cancelled dials = %q, want count:1", got)
				}
				return
			}
			if st.BreakerOpens != 1 || st.OpenBreakers != 1 {
				t.Fatalf("stat = %+v, want the breaker opened by the two dials that outlasted their deadline", st)
			}
			// The server answers again, but the breaker fails fast.
			h.srv.SetMethodLatency("initialize", 0)
			h.wantCircuitOpen()
		})
	}
}
