package rulefmt

import (
	"strings"
	"testing"
)

// TestExistsReadsAsWritten pins {exists: true} as "the attribute is
// present" and {exists: false} as "absent", on span and resource
// attributes, in the selector parsed, its text and its TraceQL, so that
// reading it inverted fails here and not only in the analyzer above.
func TestExistsReadsAsWritten(t *testing.T) {
	cases := []struct {
		exists  string
		op      MatchOp
		text    string
		traceQL string
	}{
		{"true", OpExists, "exists", "!= nil"},
		{"false", OpAbsent, "absent", "= nil"},
	}
	for _, tc := range cases {
		for _, where := range []string{"attributes", "resource"} {
			t.Run(where+" exists "+tc.exists, func(t *testing.T) {
				s, err := ParseSelectorString(`{name: x, ` + where + `: {mcp.session.id: {exists: ` + tc.exists + `}}}`)
				if err != nil {
					t.Fatal(err)
				}
				ms := s.Attributes
				if where == "resource" {
					ms = s.Resource
				}
				if len(ms) != 1 || ms[0].Key != "mcp.session.id" || ms[0].Op != tc.op {
					t.Fatalf("%s = %+v, want mcp.session.id %s", where, ms, tc.op)
				}
				if got, want := s.String(), where+"[mcp.session.id] "+tc.text; !strings.Contains(got, want) {
					t.Errorf("String() = %q, want it to say %q", got, want)
				}
				if got := s.TraceQL(); !strings.Contains(got, ".mcp.session.id "+tc.traceQL) {
					t.Errorf("TraceQL() = %q, want mcp.session.id %s", got, tc.traceQL)
				}
			})
		}
	}
}
