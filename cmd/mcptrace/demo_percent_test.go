package main

import "testing"

// TestDemoPercentKeepsTheReportsDigits pins the demo's own figures to the
// reports' rule: a hit rate of 99.975% is not "100.0%", 0.025% not
// "0.0%", and a rate the analysis left null reads n/a.
func TestDemoPercentKeepsTheReportsDigits(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		in   *float64
		want string
	}{
		{f(0.99975), "99.98%"}, {f(0.00025), "0.03%"}, {f(1), "100.0%"}, {f(0), "0.0%"}, {f(0.5), "50.0%"}, {nil, "n/a"},
	} {
		if got := demoPercent(tc.in); got != tc.want {
			t.Errorf("demoPercent(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
