package vocab

import (
	"slices"
	"testing"
)

// The choice between writers reads BuiltinSignatures in order and lets a
// later entry win only within its own tier: a lower tier listed after a
// higher one would lose to it.
func TestBuiltinSignaturesAreInTierOrder(t *testing.T) {
	byTier := func(a, b signature) int { return a.tier - b.tier }
	if !slices.IsSortedFunc(BuiltinSignatures, byTier) {
		var tiers []int
		for _, s := range BuiltinSignatures {
			tiers = append(tiers, s.tier)
		}
		t.Fatalf("BuiltinSignatures tiers %v, want ascending", tiers)
	}
}

func TestOutranksWithinATierByCountAndNeverAcrossTiers(t *testing.T) {
	low, high := signature{Name: "low", tier: 0}, signature{Name: "high", tier: 1}
	cases := []struct {
		name  string
		s     signature
		n     int
		best  signature
		bestN int
		want  bool
	}{
		{"same tier, more spans", high, 3, high, 2, true},
		{"same tier, a tie keeps the earlier", high, 2, high, 2, false},
		{"same tier, fewer spans", low, 1, low, 2, false},
		{"higher tier, more spans", high, 100, low, 1, false},
	}
	for _, c := range cases {
		if got := c.s.outranks(c.n, c.best, c.bestN); got != c.want {
			t.Errorf("%s: outranks = %v, want %v", c.name, got, c.want)
		}
	}
}
