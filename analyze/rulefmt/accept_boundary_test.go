package rulefmt

import (
	"strings"
	"testing"
)

// TestBoundsAcceptedAtTheirEdge pins what a configuration accepts and
// rejects at each bound's edge, by acceptance alone (the error texts are
// config_boundary_test.go's): a tolerance or a hit-rate drop of exactly 0
// is accepted, a negative count tolerance or a non-scalar one is not, and
// an attribute match needs a non-empty key.
func TestBoundsAcceptedAtTheirEdge(t *testing.T) {
	rule := func(expect string) string {
		return "rules:\n  - id: a\n    scope: trace\n    select: db.query\n    expect: " + expect + "\n"
	}
	for _, tc := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"hit_rate_drop 0", "regressions: {hit_rate_drop: 0}\n", true},
		{"hit_rate_drop 1", "regressions: {hit_rate_drop: 1}\n", true},
		{"excess_misses 0", "regressions: {excess_misses: 0}\n", true},
		{"excess_misses -1", "regressions: {excess_misses: -1}\n", false},
		{"excess_misses a fraction", "regressions: {excess_misses: 0.5}\n", false}, // yaml.v3 would decode it as 0
		{"unexpected 1.0", "regressions: {unexpected: 1.0}\n", false},
		{"excess_misses a list", "regressions: {excess_misses: [1]}\n", false},
		{"a tolerance of 0", rule(`{of: count, op: "==", than: 1, tolerance: 0}`), true},
		{"a tolerance of 0.5", rule(`{of: count, op: "==", than: 1, tolerance: 0.5}`), true},
		{"a negative tolerance", rule(`{of: count, op: "==", than: 1, tolerance: -0.5}`), false},
		{"an attribute key", "rules:\n  - id: a\n    select: {name: db.query, attributes: {db.sql.table: orgs}}\n    expect: {of: count, op: \"==\", than: 1}\n", true},
		{"an empty attribute key", "rules:\n  - id: a\n    select: {name: db.query, attributes: {\"\": orgs}}\n    expect: {of: count, op: \"==\", than: 1}\n", false},
	} {
		_, err := ParseGateConfig("f.yaml", []byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want accepted %v", tc.name, err, tc.ok)
		}
	}
}

// TestRegressionTolerancesAcceptedAtTheirEdge pins the edges of the
// fractional tolerances: a latency ratio of exactly 1 (no slowdown
// allowed), a minimum delta of 0 and a hit-rate drop of 0 or 1 are
// accepted; just past each is refused.
func TestRegressionTolerancesAcceptedAtTheirEdge(t *testing.T) {
	for _, tc := range []struct {
		doc string
		ok  bool
	}{
		{"regressions: {latency_ratio: 1}\n", true},
		{"regressions: {latency_ratio: 0.999}\n", false},
		{"regressions: {latency_min_delta_ms: 0}\n", true},
		{"regressions: {latency_min_delta_ms: -0.001}\n", false},
		{"regressions: {hit_rate_drop: 0}\n", true},
		{"regressions: {hit_rate_drop: -0.001}\n", false},
		{"regressions: {hit_rate_drop: 1}\n", true},
		{"regressions: {hit_rate_drop: 1.001}\n", false},
	} {
		gc, err := ParseGateConfig("f.yaml", []byte(tc.doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s: error %v, want accepted %v", strings.TrimSpace(tc.doc), err, tc.ok)
		}
		if tc.doc == "regressions: {latency_ratio: 1}\n" && err == nil && gc.Tolerances.LatencyRatio != 1 {
			t.Errorf("latency_ratio: 1 read as %v", gc.Tolerances.LatencyRatio)
		}
	}
}
