package rulefmt

import (
	"math"
	"testing"
)

// holdsNoise is Holds's allowance for float noise (rules.go's eps): each
// operator's bound, loosened by the tolerance, moves by it once more.
const holdsNoise = 1e-9

// TestHoldsIsExactAtTheLoosenedBound pins each operator's edge: the bound
// loosened by the tolerance and the float noise is inclusive for ==, <=
// and >= and exclusive for !=, < and >, and the next float past it is on
// the other side. The edge is computed as Holds computes it (bound, then
// tolerance, then noise, in float64 at run time), so the comparison meets
// exactly the value the operator is about.
func TestHoldsIsExactAtTheLoosenedBound(t *testing.T) {
	up, down := math.Inf(1), math.Inf(-1)
	for _, tc := range []struct {
		name       string
		op         Op
		tol, bound float64
		edge       func(bound, tol float64) float64
		// past is the direction of the first float on the other side.
		past        float64
		atEdge, off bool
	}{
		{"<= holds at bound+tolerance+noise", OpLe, 0.25, 1, func(b, t float64) float64 { return b + t + holdsNoise }, up, true, false},
		{"<= with no tolerance", OpLe, 0, 3, func(b, t float64) float64 { return b + t + holdsNoise }, up, true, false},
		{"< fails at bound+tolerance-noise", OpLt, 0.25, 1, func(b, t float64) float64 { return b + t - holdsNoise }, down, false, true},
		{">= holds at bound-tolerance-noise", OpGe, 0.25, 1, func(b, t float64) float64 { return b - t - holdsNoise }, down, true, false},
		{"> fails at bound-tolerance+noise", OpGt, 0.25, 1, func(b, t float64) float64 { return b - t + holdsNoise }, up, false, true},
		{"== holds at tolerance+noise above", OpEq, 0.25, 0, func(_, t float64) float64 { return t + holdsNoise }, up, true, false},
		{"== holds at tolerance+noise below", OpEq, 0.25, 0, func(_, t float64) float64 { return -(t + holdsNoise) }, down, true, false},
		{"!= fails at tolerance+noise above", OpNe, 0.25, 0, func(_, t float64) float64 { return t + holdsNoise }, up, false, true},
		{"!= fails at tolerance+noise below", OpNe, 0.25, 0, func(_, t float64) float64 { return -(t + holdsNoise) }, down, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Expectation{Op: tc.op, Tolerance: tc.tol}
			edge := tc.edge(tc.bound, tc.tol)
			if got := e.Holds(edge, tc.bound); got != tc.atEdge {
				t.Errorf("%v %s %v ±%v = %v at the edge, want %v", edge, tc.op, tc.bound, tc.tol, got, tc.atEdge)
			}
			next := math.Nextafter(edge, tc.past)
			if got := e.Holds(next, tc.bound); got != tc.off {
				t.Errorf("%v %s %v ±%v = %v one float past the edge, want %v", next, tc.op, tc.bound, tc.tol, got, tc.off)
			}
		})
	}
}
