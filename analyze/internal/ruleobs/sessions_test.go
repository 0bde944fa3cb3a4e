package ruleobs

import "testing"

// TestSessionSplitsLoseOnlyASessionExpiredBeforeAnother pins when a session
// counts as forgotten by the server: it failed as expired and a later call
// ran on another session. An expiry on the last call, or one followed only
// by calls on the same session (the server took it back), loses nothing.
func TestSessionSplitsLoseOnlyASessionExpiredBeforeAnother(t *testing.T) {
	type c = sessionCall
	for _, tc := range []struct {
		name         string
		calls        []sessionCall
		pooled, lost int
	}{
		{"no calls", nil, 0, 0},
		{"one session, no expiry", []c{{start: 1, session: 7, expired: false}, {start: 2, session: 7, expired: false}}, 1, 0},
		{"the last call expired: no later call to move on", []c{{start: 1, session: 7, expired: false}, {start: 2, session: 7, expired: true}}, 1, 0},
		{"a lone call expired", []c{{start: 1, session: 7, expired: true}}, 1, 0},
		{"expired, then the same session again", []c{{start: 1, session: 7, expired: true}, {start: 2, session: 7, expired: false}}, 1, 0},
		{"expired, then another session: lost", []c{{start: 1, session: 7, expired: true}, {start: 2, session: 8, expired: false}}, 1, 1},
		{"expired, the same session, then another: lost", []c{{start: 1, session: 7, expired: true}, {start: 2, session: 7, expired: false}, {start: 3, session: 8, expired: false}}, 1, 1},
		{"two sessions, neither expired", []c{{start: 1, session: 7, expired: false}, {start: 2, session: 8, expired: false}}, 2, 0},
		{"back to the first after another: only the expired one lost", []c{{start: 1, session: 7, expired: false}, {start: 2, session: 8, expired: true}, {start: 3, session: 7, expired: false}}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pooled, lost := splitSessions(tc.calls)
			if pooled != tc.pooled || lost != tc.lost {
				t.Errorf("splitSessions(%+v) = %d pooled, %d lost; want %d, %d", tc.calls, pooled, lost, tc.pooled, tc.lost)
			}
		})
	}
}
