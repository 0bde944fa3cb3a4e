package rulefmt

import (
	"strings"
	"testing"
)

// TestARuleComparingTheHitRateWithTheFloorIsWarnedOf: the cold-start floor
// is a miss rate, so a rule holding the hit rate against it reads right and
// means nothing; the file still loads, with a warning at the expectation
// saying what to write. Rules that compare each with what it means are not
// warned of.
func TestARuleComparingTheHitRateWithTheFloorIsWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		expect string
		warns  bool
	}{
		{`{of: hit_rate, op: ">=", than: cold_start_floor}`, true},
		{`{of: cold_start_floor, op: "<=", than: hit_rate}`, true},
		{`{of: hit_rate, op: ">=", than: cold_start_floor, tolerance: 0.05}`, true},
		{`{of: hit_rate, op: ">=", than: 0.8}`, false},
		{`{of: excess_misses, op: "<=", than: 0}`, false},
		{`{of: cold_start_floor, op: "<=", than: 0.2}`, false},
	} {
		t.Run(tc.expect, func(t *testing.T) {
			gc, err := ParseGateConfig("m.yaml", []byte("rules:\n  - id: floor\n    scope: dump\n    expect: "+tc.expect+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(gc.Warnings) == 1; got != tc.warns {
				t.Fatalf("warnings %v, want one: %v", gc.Warnings, tc.warns)
			}
			if tc.warns {
				w := gc.Warnings[0].String()
				for _, want := range []string{"m.yaml:4:13:", `rule "floor"`, "a miss rate", `"excess_misses <= 0"`} {
					if !strings.Contains(w, want) {
						t.Errorf("warning %q lacks %q", w, want)
					}
				}
			}
		})
	}
}
