package engine

import (
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TestACallWithoutASessionIDIsNotASession pins that the executions measure
// counts the distinct sessions an execution's calls carry, and a call
// carrying no mcp.session.id carries none: it neither adds a session to an
// execution that has one (which would make it multi-session) nor makes one
// of an execution that has none. The last case is the control.
func TestACallWithoutASessionIDIsNotASession(t *testing.T) {
	cases := []struct {
		name          string
		sessions      []string // one call each, in one trace; "" carries no id
		max, multiple int
	}{
		{"one session and a call without one", []string{"s1", ""}, 1, 0},
		{"a call without one first", []string{"", "s1", "s1"}, 1, 0},
		{"only calls without one", []string{"", ""}, 0, 0},
		{"two sessions (control)", []string{"s1", "", "s2"}, 2, 1},
		{"a session left and come back to is one", []string{"s1", "s2", "s1"}, 2, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "do-1")
			for i, s := range tc.sessions {
				at := time.Duration(i) * 10 * time.Second
				d.invocation(ss, lease{trace: 1, start: at, end: at + time.Second, key: "k", hit: true, session: s})
			}
			r := analyzeTD(t, rulefmt.Config{}, d.td)
			e := r.Executions
			if e.Count != 1 || e.MaxSessions != tc.max || e.MultiSession != tc.multiple {
				t.Errorf("executions = %d, max sessions %d, multi-session %d; want 1, %d, %d", e.Count, e.MaxSessions, e.MultiSession, tc.max, tc.multiple)
			}
		})
	}
}
