package whatif

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"
)

// grid is one row per (TTL, idle per key, prewarm), hits falling with the
// idle per key so the series' order is known: per key 1 best.
func grid(ttls, perKeys, prewarms int) []Row {
	var rows []Row
	for p := range prewarms {
		for k := range perKeys {
			for i := range ttls {
				rows = append(rows, Row{Settings: Settings{IdleTTL: time.Duration(ttls-i) * time.Second, IdlePerKey: k + 1, MaxIdle: 64, Prewarm: p},
					Acquires: 1000, Hits: 900 - 10*k - p, IdleSessionSeconds: float64(i)})
			}
		}
	}
	return rows
}

// TestChartSeriesAreBoundedAndOrdered: one line per setting but the TTL,
// its points in TTL order; at most MaxSeries lines (the best hit rates)
// and MaxPoints points a line (the shortest TTLs); a repeated setting is
// drawn once; everything left out is counted.
func TestChartSeriesAreBoundedAndOrdered(t *testing.T) {
	dup := grid(3, 1, 1)
	dup = append(dup, dup[1])
	for _, tc := range []struct {
		name               string
		rows               []Row
		series, points     int // drawn: lines, points on each
		droppedS, droppedP int
		firstLabel         string
	}{
		{"one line per idle-per-key", grid(3, 2, 1), 2, 3, 0, 0, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"one line per idle-per-key and pre-warm", grid(2, 2, 2), 4, 2, 0, 0, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"exactly MaxSeries lines: all drawn", grid(2, MaxSeries, 1), MaxSeries, 2, 0, 0, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"one line over: the worst left out, counted", grid(2, MaxSeries+1, 1), MaxSeries, 2, 1, 2, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"exactly MaxPoints TTLs: all drawn", grid(MaxPoints, 1, 1), 1, MaxPoints, 0, 0, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"one TTL over: the longest left out, counted", grid(MaxPoints+1, 1, 1), 1, MaxPoints, 0, 1, "idle-per-key=1 max-idle=64 prewarm=none"},
		{"a repeated setting drawn once, counted", dup, 1, 3, 0, 1, "idle-per-key=1 max-idle=64 prewarm=none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss, ds, dp := chartSeries(tc.rows)
			if len(ss) != tc.series || ds != tc.droppedS || dp != tc.droppedP {
				t.Fatalf("%d lines, %d lines and %d points left out; want %d, %d, %d", len(ss), ds, dp, tc.series, tc.droppedS, tc.droppedP)
			}
			if ss[0].label != tc.firstLabel {
				t.Errorf("first line %q, want %q (the best hit rate)", ss[0].label, tc.firstLabel)
			}
			for _, s := range ss {
				if len(s.rows) != tc.points {
					t.Errorf("%s: %d points, want %d", s.label, len(s.rows), tc.points)
				}
				for i := 1; i < len(s.rows); i++ {
					if s.rows[i-1].Settings.IdleTTL >= s.rows[i].Settings.IdleTTL {
						t.Errorf("%s: TTL %s before %s: want strictly increasing", s.label, s.rows[i-1].Settings.IdleTTL, s.rows[i].Settings.IdleTTL)
					}
				}
			}
		})
	}
}

// TestHTMLSectionDrawsWhatItCounts: the section holds the table, the
// best-per-cost lines, two charts with one path per drawn line and one dot
// per drawn point, the as-recorded dot larger, and the counts of what it
// left out.
func TestHTMLSectionDrawsWhatItCounts(t *testing.T) {
	rows := grid(3, MaxSeries+2, 1)
	rows[0].AsRecorded = true
	Sort(rows)
	var b bytes.Buffer
	if err := WriteHTMLSection(&b, rows, Marks{Assumed: true}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []struct {
		what string
		n    int
	}{
		{"<svg ", 2},
		{`<path class="line `, 2 * MaxSeries},
		{"<circle ", 2 * MaxSeries * 3},
		{fmt.Sprintf(`r="%s"`, coord(asRecordedR)), 2},
		{"<tr", 1 + len(rows)},
		{"<li>at most ", len(Costs)},
		{"2 more lines not drawn", 1},
		{"6 points not drawn", 1},
		{"(as recorded, settings assumed)", 1},
		{"<script", 0},
	} {
		if got := strings.Count(out, want.what); got != want.n {
			t.Errorf("%q %d times, want %d", want.what, got, want.n)
		}
	}
}

// TestHTMLPageIsSelfContained: the page carries the report's stylesheet
// and the section inline, forbids every fetch, and runs no script.
func TestHTMLPageIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	rows := grid(2, 1, 1)
	rows[0].AsRecorded = true
	if err := WriteHTMLPage(&b, rows, Marks{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`content="default-src 'none'; style-src 'unsafe-inline'"`, "--hit:", `<section class="whatif"`, "(as recorded, settings recorded)"} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "src=", "href=", "&lt;section", "(as recorded, settings assumed)"} {
		if strings.Contains(out, bad) {
			t.Errorf("page holds %q", bad)
		}
	}
}

// TestHTMLSectionNamesBestPerCostOnce pins one heading per block: the page
// heads the best-per-cost lines once and explains the rule under it,
// where it once repeated the heading in the sentence below.
func TestHTMLSectionNamesBestPerCostOnce(t *testing.T) {
	rows := grid(3, 2, 1)
	rows[0].AsRecorded = true
	var b bytes.Buffer
	if err := WriteHTMLSection(&b, rows, Marks{}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "Best per cost"); n != 1 {
		t.Errorf("\"Best per cost\" appears %d times, want once", n)
	}
	if !strings.Contains(b.String(), html.EscapeString(bestRuleBody)) {
		t.Errorf("the section does not say how the best rows are chosen")
	}
}

// TestHTMLSectionFitsAPhone pins what keeps the section inside a 390 px
// screen: its table scrolls inside its own box (the report's .scroll)
// instead of being cut at the card's edge, and a chart's column never
// asks for more than the width there is.
func TestHTMLSectionFitsAPhone(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTMLSection(&b, grid(2, 1, 1), Marks{}); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, `<div class="scroll"><table>`) || !strings.Contains(s, `</table></div>`) {
		t.Error("the table is not inside a scroll box")
	}
	if !strings.Contains(s, "minmax(min(480px, 100%), 1fr)") {
		t.Error("a chart's column may be wider than the screen")
	}
}
