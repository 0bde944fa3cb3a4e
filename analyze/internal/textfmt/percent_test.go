package textfmt

import "testing"

// TestPercentNeverRoundsOffZeroOrOneHundred pins Percent's boundaries: one
// decimal where it is honest, more where one decimal would read 0% for a
// ratio above 0 or 100% for one below 1, and the caps past four decimals.
func TestPercentNeverRoundsOffZeroOrOneHundred(t *testing.T) {
	for _, c := range []struct {
		ratio float64
		want  string
	}{
		{0, "0.0%"},
		{1, "100.0%"},
		{0.833333, "83.3%"},
		{0.5, "50.0%"},
		{0.99975, "99.98%"}, // a ceiling just under 1: not 100.0%
		{0.00025, "0.03%"},  // its floor: not 0.0%
		{0.9995, "99.95%"},  // one decimal would round up to 100.0%
		{0.99949, "99.9%"},  // one decimal rounds down: honest as it is
		{0.0005, "0.1%"},    // rounds up to 0.1%, away from 0
		{0.00049, "0.05%"},  // one decimal would read 0.0%
		{0.9999995, "99.9999%"},
		{0.99999999, ">99.9999%"},
		{0.0000004, "<0.0001%"},
	} {
		if got := Percent(c.ratio); got != c.want {
			t.Errorf("Percent(%v) = %q, want %q", c.ratio, got, c.want)
		}
	}
}

// TestCountGroupsThousands pins Count at the group boundaries.
func TestCountGroupsThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 999999: "999,999", 1000000: "1,000,000", -1000: "-1,000", -999: "-999"} {
		if got := Count(n); got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
