package render

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestDrawValueDrawsEachFormat pins how a value is drawn for people, in
// each format a row of the table of measures may name.
func TestDrawValueDrawsEachFormat(t *testing.T) {
	for _, tc := range []struct {
		draw report.Draw
		v    float64
		ok   bool
		want string
	}{
		{report.DrawInt, 12, true, "12"},
		{report.DrawInt, 12, false, "-"},
		{report.DrawPercent, 0.8333333, true, "83.3%"},
		{report.DrawPercent, 0, false, "-"},
		{report.DrawDecimal, 6, true, "6.00"},
		{report.DrawMS, 899.3154, true, "899.315"},
	} {
		if got := drawValue(report.Measure{Draw: tc.draw}, tc.v, tc.ok); got != tc.want {
			t.Errorf("Draw %d drawValue(%v, %v) = %q, want %q", tc.draw, tc.v, tc.ok, got, tc.want)
		}
	}
}
