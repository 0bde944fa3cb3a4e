package gate

import (
	"strings"
	"testing"
)

// TestAScopeThatBreaksAnExpectationFailsEvenWhenAnotherHasNoData pins that
// a scope breaking one expectation is failed (exit 1) even when another of
// its expectations could not be judged for want of data: a failure seen is
// a failure, whatever else is missing, and never incomplete (exit 3). The
// dump (cold-init-two-reads) has three reads in each of its three traces
// and no pool spans, so every pool measure has no data.
func TestAScopeThatBreaksAnExpectationFailsEvenWhenAnotherHasNoData(t *testing.T) {
	const fails = `{of: count, op: "<=", than: 1}`
	cases := []struct {
		name, scope, noData string
		noDataFirst         bool
		found               string
	}{
		{"trace scope, a bound with no data", "trace", `{of: count, op: ">=", than: hit_rate}`, false, "count = 3 in 3 of 3 traces"},
		{"trace scope, a bound with no data first", "trace", `{of: count, op: ">=", than: hit_rate}`, true, "count = 3 in 3 of 3 traces"},
		{"dump scope, a measure with no data", "dump", `{of: hit_rate, op: ">=", than: 0.5}`, false, "count = 9"},
		{"dump scope, a measure with no data first", "dump", `{of: hit_rate, op: ">=", than: 0.5}`, true, "count = 9"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			expect := []string{fails, tc.noData}
			if tc.noDataFirst {
				expect[0], expect[1] = expect[1], expect[0]
			}
			c, res := checkOf(t, "cold-init-two-reads", `
rules:
  - id: both
    scope: `+tc.scope+`
    select: db.query
    expect:
      - `+expect[0]+`
      - `+expect[1]+`
`)
			r := res["both"]
			if r.Status != StatusFail || r.Failed == 0 {
				t.Errorf("rule = %s (failed %d, incomplete %d of %d scopes: %s), want fail", r.Status, r.Failed, r.Incomplete, r.Scopes, r.Found)
			}
			if !strings.Contains(r.Found, tc.found) {
				t.Errorf("found = %q, want it to name the broken expectation (%s)", r.Found, tc.found)
			}
			if c.Verdict != StatusFail || c.ExitCode != ExitFail {
				t.Errorf("check verdict %s exit %d, want fail %d", c.Verdict, c.ExitCode, ExitFail)
			}
		})
	}
}
