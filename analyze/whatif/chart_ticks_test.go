package whatif

import (
	"strings"
	"testing"
	"time"
)

// TestAChartsXTicksAreItsDistinctTTLs pins drawChart's x labels: one per
// distinct TTL over every series (a TTL two series share is one label),
// at most maxTicks, the first anchored at its start and the last at its
// end; the y labels are the figure's 0, half and top.
func TestAChartsXTicksAreItsDistinctTTLs(t *testing.T) {
	var rows []Row
	for _, perKey := range []int{1, 2} {
		for _, ttl := range []time.Duration{time.Second, 10 * time.Second, 100 * time.Second} {
			rows = append(rows, Row{Settings: Settings{IdleTTL: ttl, IdlePerKey: perKey, MaxIdle: 64}, Acquires: 10, Hits: perKey})
		}
	}
	ss, _, _ := chartSeries(rows)
	c := drawChart(ss, "Hit rate", "hit rate", Row.HitRate, 1, func(f float64) string { return coord(f) })
	var xs, anchors, ys []string
	for _, tk := range c.XTicks {
		xs, anchors = append(xs, tk.Label), append(anchors, tk.Anchor)
	}
	for _, tk := range c.YTicks {
		ys = append(ys, tk.Label)
	}
	if got, want := strings.Join(xs, " "), "1s 10s 1m40s"; got != want {
		t.Errorf("x labels %q, want %q", got, want)
	}
	if got, want := strings.Join(anchors, " "), "start middle end"; got != want {
		t.Errorf("x anchors %q, want %q", got, want)
	}
	if got, want := strings.Join(ys, " "), "0.0 0.5 1.0"; got != want {
		t.Errorf("y labels %q, want %q", got, want)
	}
}

// TestAnXLabelIsAnchoredInsideTheChart pins xAnchor at its bounds: up to
// an eighth of the plot from its left edge a label starts there, from
// seven eighths on it ends there, centred between.
func TestAnXLabelIsAnchoredInsideTheChart(t *testing.T) {
	for _, tc := range []struct {
		px   float64
		want string
	}{
		{padL, "start"},
		{padL + plotW/8, "start"},
		{padL + plotW/8 + 0.1, "middle"},
		{padL + plotW*7/8 - 0.1, "middle"},
		{padL + plotW*7/8, "end"},
		{padL + plotW, "end"},
	} {
		if got := xAnchor(tc.px); got != tc.want {
			t.Errorf("xAnchor(%v) = %q, want %q", tc.px, got, tc.want)
		}
	}
}
