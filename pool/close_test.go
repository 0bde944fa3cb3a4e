package pool_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// Close ends every idle session of a revision with sessions (2025-11-25)
// with an HTTP DELETE, whatever the server answers it: a server that already
// forgot the session says 404 (the spec), 400 (some real servers) or 405 (a
// server that does not let clients end sessions), and Close still closes
// every idle session and returns nil. A sessionless revision (2026-07-28)
// has nothing to DELETE.
func TestCloseDeletesEveryIdleSession_ToleratingWhatTheServerAnswers(t *testing.T) {
	const idle = 3
	tests := []struct {
		name    string
		fixture fixtures.Options
		before  func(srv *fixtures.Server) // runs just before Close
		status  int                        // what each DELETE is answered; 0: no DELETE at all
	}{
		{"stateful: each DELETE answered 204", fixtures.Options{}, nil, http.StatusNoContent},
		{"TypeScript SDK 1.x discover: the probe's 400 does not spare the DELETE", fixtures.Options{Discover: fixtures.DiscoverTypeScriptV1}, nil, http.StatusNoContent},
		{"sessions forgotten: 404 tolerated", fixtures.Options{}, (*fixtures.Server).ForgetSessions, http.StatusNotFound},
		{"sessions forgotten, server answers 400: tolerated", fixtures.Options{UnknownSessionStatus: http.StatusBadRequest}, (*fixtures.Server).ForgetSessions, http.StatusBadRequest},
		{"DELETE refused 405: tolerated", fixtures.Options{}, func(srv *fixtures.Server) {
			for range idle {
				srv.RejectNext(fixtures.Reject{Status: http.StatusMethodNotAllowed})
			}
		}, http.StatusMethodNotAllowed},
		{"sessionless 2026-07-28: nothing to DELETE", fixtures.Options{ModernOnly: true}, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{fixture: tc.fixture, pool: pool.Options{MaxIdlePerKey: idle}})
			ctx := context.Background()
			var leases []pool.Lease
			for i := range idle {
				l, err := h.pool.Acquire(ctx, h.target)
				if err != nil {
					t.Fatalf("acquire %d: %v", i, err)
				}
				leases = append(leases, l)
			}
			for _, l := range leases {
				l.Release(nil)
			}
			want := idle
			if tc.status == 0 {
				want = 1 // one shared client
			}
			if st := h.pool.Stat(); st.IdleSessions != want {
				t.Fatalf("idle sessions before Close = %d, want %d", st.IdleSessions, want)
			}
			if tc.before != nil {
				tc.before(h.srv)
			}
			if err := h.pool.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			st := h.pool.Stat()
			if st.IdleSessions != 0 || st.Evictions[spans.EvictPoolClosed] != int64(want) {
				t.Errorf("after Close: idle %d, evictions %v; want 0 idle and %d closed", st.IdleSessions, nonZero(st.Evictions), want)
			}
			var deletes []fixtures.Request
			for _, r := range h.srv.Requests() {
				if r.HTTPMethod == http.MethodDelete {
					deletes = append(deletes, r)
				}
			}
			if tc.status == 0 {
				if len(deletes) != 0 {
					t.Errorf("DELETEs = %+v, want none on a sessionless revision", deletes)
				}
				return
			}
			ids := h.srv.SessionIDs()
			if len(ids) != idle {
				t.Fatalf("session ids = %v, want %d", ids, idle)
			}
			for _, id := range ids {
				n := 0
				for _, d := range deletes {
					if d.SessionID == id {
						n++
						if d.Status != tc.status {
							t.Errorf("DELETE of %s answered %d, want %d", id, d.Status, tc.status)
						}
					}
				}
				if n != 1 {
					t.Errorf("DELETE of %s sent %d times, want once", id, n)
				}
			}
		})
	}
}
