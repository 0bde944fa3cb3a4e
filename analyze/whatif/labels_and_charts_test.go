package whatif

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"
)

// TestEachCostHasItsOwnLabelAndFigure pins Cost.Label and Cost.Of cost by
// cost: each reads its own column of a row.
func TestEachCostHasItsOwnLabelAndFigure(t *testing.T) {
	r := Row{SessionsOpened: 11, PeakSessions: 22, IdleSessionSeconds: 33.5, PrewarmUnused: 44}
	for _, tc := range []struct {
		c     Cost
		label string
		of    float64
	}{
		{CostSessionsOpened, "sessions opened", 11},
		{CostPeakSessions, "peak sessions", 22},
		{CostIdleSessionSeconds, "idle session-seconds", 33.5},
		{CostPrewarmUnused, "unused pre-warm handshakes", 44},
		{Cost("other"), "other", 0},
	} {
		if got := tc.c.Label(); got != tc.label {
			t.Errorf("%s label %q, want %q", tc.c, got, tc.label)
		}
		if got := tc.c.Of(r); got != tc.of {
			t.Errorf("%s of the row %v, want %v", tc.c, got, tc.of)
		}
	}
}

// TestAGridProductSaturatesOnlyPastTheIntegers pins satMul and what
// CheckGrid makes of an empty list: a product that fits is exact, even
// the largest; one past MaxInt is MaxInt; a zero factor anywhere makes
// zero combinations, accepted.
func TestAGridProductSaturatesOnlyPastTheIntegers(t *testing.T) {
	for _, tc := range []struct{ a, b, want int }{
		{2, math.MaxInt / 2, math.MaxInt - 1},
		{2, math.MaxInt/2 + 1, math.MaxInt},
		{0, math.MaxInt, 0},
		{math.MaxInt, 0, 0},
		{-1, 3, math.MaxInt},
		{3, -1, math.MaxInt},
	} {
		if got := satMul(tc.a, tc.b); got != tc.want {
			t.Errorf("satMul(%d, %d) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	if err := CheckGrid(GridList{"--idle-ttl", 0}, GridList{"--idle-per-key", 5}); err != nil {
		t.Errorf("an empty list refused: %v", err)
	}
	if err := CheckWork(2, 0); err != nil {
		t.Errorf("a dump of no acquires refused: %v", err)
	}
}

// TestANoteNamesThreeScopesAndCountsTheRest pins names: up to maxNamed
// scopes named, quoted; past that, how many more.
func TestANoteNamesThreeScopesAndCountsTheRest(t *testing.T) {
	for _, tc := range []struct {
		scopes []string
		want   string
	}{
		{[]string{"a"}, `"a"`},
		{[]string{"a", "b", "c"}, `"a", "b", "c"`},
		{[]string{"a", "b", "c", "d"}, `"a", "b", "c", and 1 more`},
	} {
		if got := names(tc.scopes); got != tc.want {
			t.Errorf("names(%q) = %q, want %q", tc.scopes, got, tc.want)
		}
	}
}

// TestTheTableShowsEachCountInItsColumn pins WriteTable's columns: the
// acquires under ACQUIRES, the hits under HITS, the sessions, the peak,
// the idle seconds and the pre-warm dials with the unused ones.
func TestTheTableShowsEachCountInItsColumn(t *testing.T) {
	r := Row{Settings: Settings{IdleTTL: time.Minute, IdlePerKey: 1, MaxIdle: 64}, Acquires: 10, Hits: 4,
		MissesByCause: map[string]int{"cold": 6}, SessionsOpened: 7, PeakSessions: 3, IdleSessionSeconds: 2.25, PrewarmDials: 5, PrewarmUnused: 2}
	var b bytes.Buffer
	if err := WriteTable(&b, []Row{r}, Marks{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	if got, want := strings.Fields(lines[1]), []string{"idle-ttl=1m0s", "idle-per-key=1", "max-idle=64", "prewarm=none", "40.0%", "10", "4", "cold=6", "7", "3", "2.2", "5", "(2)"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("row %q, want %q", got, want)
	}
}

// TestSeriesAreOrderedByTheirBestHitRate pins chartSeries' order: a
// series ranks by its best row's hit rate, wherever that row is in it.
func TestSeriesAreOrderedByTheirBestHitRate(t *testing.T) {
	at := func(ttl time.Duration, perKey, hits int) Row {
		return Row{Settings: Settings{IdleTTL: ttl, IdlePerKey: perKey, MaxIdle: 64}, Acquires: 100, Hits: hits}
	}
	rows := []Row{
		at(time.Second, 1, 90), at(time.Minute, 1, 10), // best 90%, its last row 10%
		at(time.Second, 2, 50), at(time.Minute, 2, 60), // best 60%
	}
	ss, _, _ := chartSeries(rows)
	if len(ss) != 2 || !strings.HasPrefix(ss[0].label, "idle-per-key=1") {
		t.Errorf("series %v, want idle-per-key=1 (best 90%%) first", ss)
	}
}

// TestAChartSpansItsPlotArea pins drawChart's scales: the shortest TTL at
// the plot's left edge and the longest at its right, on a log scale (the
// middle of a decade's two ends is its geometric mean); a figure of 0 at
// the bottom and the top figure at the top.
func TestAChartSpansItsPlotArea(t *testing.T) {
	rows := []Row{
		{Settings: Settings{IdleTTL: time.Second, IdlePerKey: 1}, Acquires: 10, Hits: 0},
		{Settings: Settings{IdleTTL: 10 * time.Second, IdlePerKey: 1}, Acquires: 10, Hits: 5},
		{Settings: Settings{IdleTTL: 100 * time.Second, IdlePerKey: 1}, Acquires: 10, Hits: 10},
	}
	ss, _, _ := chartSeries(rows)
	c := drawChart(ss, "Hit rate", "hit rate", Row.HitRate, 1, func(f float64) string { return "" })
	var xs, ys []string
	for _, p := range c.Lines[0].Points {
		xs, ys = append(xs, p.X), append(ys, p.Y)
	}
	if want := []string{coord(padL), coord(padL + plotW/2), coord(padL + plotW)}; strings.Join(xs, " ") != strings.Join(want, " ") {
		t.Errorf("x %v, want %v", xs, want)
	}
	if want := []string{coord(padT + plotH), coord(padT + plotH/2), coord(padT)}; strings.Join(ys, " ") != strings.Join(want, " ") {
		t.Errorf("y %v, want %v", ys, want)
	}
}
