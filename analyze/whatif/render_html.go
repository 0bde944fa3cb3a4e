package whatif

import (
	"cmp"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/analyze/htmlreport"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// The HTML section's bounds: at most MaxHTMLRows table rows (the as-recorded
// row always among them), MaxSeries lines per chart (the series with the
// best hit rates) and MaxPoints idle TTLs per line (the shortest); what is
// left out is counted under the chart, and the JSON report holds it all.
const (
	MaxHTMLRows = 100
	MaxSeries   = 8
	MaxPoints   = 40
)

// Chart geometry, in SVG user units.
const (
	chartW, chartH         = 480.0, 220.0
	padL, padR, padT, padB = 68.0, 12.0, 10.0, 34.0
	plotW, plotH           = chartW - padL - padR, chartH - padT - padB
	maxTicks               = 6
	asRecordedR, pointR    = 5.0, 3.0
)

// palette are the report.css colours the series take, in order.
var palette = []string{"hit", "cum", "ttl", "concurrent", "redial", "handshake", "after_failure", "health_check"}

// series is one line of the charts: every row that differs only in its
// idle TTL, in TTL order.
type series struct {
	label string
	rows  []Row
}

// chartSeries groups rows into series (the settings but the TTL), best
// hit rate first then by label, and bounds them: at most MaxSeries series
// of at most MaxPoints points; a second row at a series' TTL (a duplicate
// setting) is not drawn. It returns the series and how many series and
// points were left out.
func chartSeries(rows []Row) (out []series, droppedSeries, droppedPoints int) {
	idx := map[string]int{}
	for _, r := range rows {
		k := r.Settings
		k.IdleTTL = 0
		label := strings.TrimPrefix(k.String(), "idle-ttl=0s ")
		i, ok := idx[label]
		if !ok {
			i = len(out)
			idx[label] = i
			out = append(out, series{label: label})
		}
		out[i].rows = append(out[i].rows, r)
	}
	best := func(s series) float64 {
		m := 0.0
		for _, r := range s.rows {
			m = max(m, r.HitRate())
		}
		return m
	}
	slices.SortStableFunc(out, func(a, b series) int { return cmp.Or(cmp.Compare(best(b), best(a)), cmp.Compare(a.label, b.label)) })
	if len(out) > MaxSeries {
		for _, s := range out[MaxSeries:] {
			droppedPoints += len(s.rows)
		}
		droppedSeries, out = len(out)-MaxSeries, out[:MaxSeries]
	}
	for i := range out {
		rs := out[i].rows
		slices.SortStableFunc(rs, func(a, b Row) int { return cmp.Compare(a.Settings.IdleTTL, b.Settings.IdleTTL) })
		rs = slices.CompactFunc(rs, func(a, b Row) bool {
			if a.Settings.IdleTTL == b.Settings.IdleTTL {
				droppedPoints++
				return true
			}
			return false
		})
		if len(rs) > MaxPoints {
			droppedPoints += len(rs) - MaxPoints
			rs = rs[:MaxPoints]
		}
		out[i].rows = rs
	}
	return out, droppedSeries, droppedPoints
}

// point, line, tick and chart are a chart drawn in numbers and text,
// ready for sectionTmpl (which escapes every text it writes).
type point struct {
	X, Y, R string
	Title   string
}

type line struct {
	Class  string
	D      string
	Points []point
}

// tick is an axis label; Anchor is its SVG text-anchor, so the first and
// last x labels sit inside the chart instead of centred on its edges.
type tick struct {
	At, Label, Anchor string
}

type chart struct {
	Title, YLabel  string
	W, H           float64
	X0, X1, Y0, Y1 float64
	XTicks, YTicks []tick
	Lines          []line
}

func coord(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// xScale maps an idle TTL to x: log scale over the drawn TTLs (the TTLs a
// user asks for are 30s, 5m, 15m: orders of magnitude apart), the middle
// when there is one.
func xScale(ss []series) func(time.Duration) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		for _, r := range s.rows {
			v := math.Log10(max(r.Settings.IdleTTL.Seconds(), 1e-3))
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return func(d time.Duration) float64 {
		if !(hi > lo) {
			return padL + plotW/2
		}
		return padL + plotW*(math.Log10(max(d.Seconds(), 1e-3))-lo)/(hi-lo)
	}
}

// drawChart draws one figure of the rows (y: its value, from 0 to top)
// against idle TTL, one line per series.
func drawChart(ss []series, title, ylabel string, y func(Row) float64, top float64, yfmt func(float64) string) chart {
	if !(top > 0) {
		top = 1
	}
	x := xScale(ss)
	yAt := func(v float64) float64 { return padT + plotH*(1-v/top) }
	c := chart{Title: title, YLabel: ylabel, W: chartW, H: chartH, X0: padL, X1: padL + plotW, Y0: padT + plotH, Y1: padT}
	var ttls []time.Duration
	for i, s := range ss {
		l := line{Class: "s" + strconv.Itoa(i)}
		var d strings.Builder
		for k, r := range s.rows {
			px, py := x(r.Settings.IdleTTL), yAt(y(r))
			cmd := " L"
			if k == 0 {
				cmd = "M"
			}
			d.WriteString(cmd + coord(px) + " " + coord(py))
			rad := pointR
			if r.AsRecorded {
				rad = asRecordedR
			}
			l.Points = append(l.Points, point{X: coord(px), Y: coord(py), R: coord(rad), Title: pointTitle(r, y, yfmt)})
			ttls = append(ttls, r.Settings.IdleTTL)
		}
		l.D = d.String()
		c.Lines = append(c.Lines, l)
	}
	slices.Sort(ttls)
	ttls = slices.Compact(ttls)
	step := (len(ttls) + maxTicks - 1) / maxTicks
	for i := 0; i < len(ttls); i += max(step, 1) {
		c.XTicks = append(c.XTicks, tick{At: coord(x(ttls[i])), Label: ttls[i].String(), Anchor: xAnchor(x(ttls[i]))})
	}
	for _, f := range []float64{0, 0.5, 1} {
		c.YTicks = append(c.YTicks, tick{At: coord(yAt(f * top)), Label: yfmt(f * top)})
	}
	return c
}

// xAnchor anchors an x label at px: a label near the plot's left edge
// starts there and one near its right edge ends there, so neither is cut
// by the chart's border; the others are centred.
func xAnchor(px float64) string {
	switch {
	case px <= padL+plotW/8:
		return "start"
	case px >= padL+plotW*7/8:
		return "end"
	}
	return "middle"
}

// pointTitle is a point's tooltip: the row's setting and figure.
func pointTitle(r Row, y func(Row) float64, yfmt func(float64) string) string {
	t := r.Settings.String() + ": " + yfmt(y(r))
	if r.AsRecorded {
		t += " (as recorded)"
	}
	return t
}

// seriesCSS colours series i with palette[i] (report.css's variables, so
// the section follows the report's light and dark modes).
func seriesCSS() template.CSS {
	var b strings.Builder
	b.WriteString(".whatif path.line { fill: none; stroke-width: 1.5; } .whatif circle { stroke: var(--bg); stroke-width: 1; } .whatif svg { max-width: 100%; height: auto; } .whatif td.n { text-align: right; } .whatif td { white-space: nowrap; } .whatif .charts { grid-template-columns: repeat(auto-fill, minmax(min(480px, 100%), 1fr)); } .whatif tr.rec { font-weight: 600; }\n")
	for i, c := range palette {
		fmt.Fprintf(&b, ".whatif .s%d { stroke: var(--%s); fill: var(--%s); --c: var(--%s); }\n", i, c, c, c)
	}
	return template.CSS(b.String())
}

// tableRow is one row of the section's table, every cell text.
type tableRow struct {
	Setting, Label, HitRate, Acquires, Hits, Causes, Sessions, Peak, Idle, Prewarm string
	AsRecorded                                                                     bool
}

type bestItem struct{ Head, Setting, Tail string }

type legendItem struct{ Class, Label string }

type sectionView struct {
	CSS                          template.CSS
	Partial, KeysMerged, Sorted  string
	BestNotMeasurable            string
	Rows                         []tableRow
	MoreRows                     int
	Heading, Intro, OutOfScope   string
	Best                         []bestItem
	Charts                       []chart
	Legend                       []legendItem
	DroppedSeries, DroppedPoints int
	MaxSeries, MaxPoints         int
}

var sectionTmpl = template.Must(template.New("whatif").Parse(`<section class="whatif" id="whatif">
<style>{{.CSS}}</style>
<h2>What-if replay</h2>
{{if .Partial}}<div class="note warn"><strong>{{.Partial}}</strong></div>
{{end}}{{if .KeysMerged}}<div class="note warn"><strong>{{.KeysMerged}}</strong></div>
{{end}}<p class="muted">{{len .Rows}} settings shown{{if .MoreRows}}, {{.MoreRows}} more not shown (<code>--format json</code> lists them all){{end}}, {{.Sorted}}.</p>
<div class="scroll"><table>
<thead><tr><th>Settings</th><th>Hit rate</th><th>Acquires</th><th>Hits</th><th>Misses by cause</th><th>Sessions</th><th>Peak</th><th>Idle s</th><th>Pre-warm (unused)</th></tr></thead>
<tbody>
{{range .Rows}}<tr{{if .AsRecorded}} class="rec"{{end}}><td><code>{{.Setting}}</code>{{.Label}}</td><td class="n">{{.HitRate}}</td><td class="n">{{.Acquires}}</td><td class="n">{{.Hits}}</td><td>{{.Causes}}</td><td class="n">{{.Sessions}}</td><td class="n">{{.Peak}}</td><td class="n">{{.Idle}}</td><td class="n">{{.Prewarm}}</td></tr>
{{end}}</tbody>
</table></div>
{{if .Best}}<h3>{{.Heading}}</h3>
<p class="muted">{{.Intro}}</p>
<ul>
{{range .Best}}<li>{{.Head}} <code>{{.Setting}}</code>{{.Tail}}</li>
{{end}}</ul>
{{end}}{{if .BestNotMeasurable}}<p class="muted">{{.BestNotMeasurable}}.</p>
{{end}}{{if .Charts}}<h3>Hit rate and idle cost against idle TTL</h3>
<div class="legend">{{range .Legend}}<span class="{{.Class}}">{{.Label}}</span>{{end}}</div>
<div class="charts">
{{range .Charts}}<div class="chart"><h4>{{.Title}}</h4>
<svg viewBox="0 0 {{.W}} {{.H}}" width="{{.W}}" height="{{.H}}" role="img" aria-label="{{.Title}}">
<line class="axis" x1="{{.X0}}" y1="{{.Y0}}" x2="{{.X1}}" y2="{{.Y0}}"></line>
<line class="axis" x1="{{.X0}}" y1="{{.Y0}}" x2="{{.X0}}" y2="{{.Y1}}"></line>
{{$c := .}}{{range .XTicks}}<text x="{{.At}}" y="{{$c.H}}" dy="-18" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{end}}{{range .YTicks}}<text x="{{$c.X0}}" y="{{.At}}" dx="-4" dy="3" text-anchor="end">{{.Label}}</text>
{{end}}<text x="{{$c.X1}}" y="{{$c.H}}" dy="-4" text-anchor="end">idle TTL (log scale)</text>
{{range .Lines}}<path class="line {{.Class}}" d="{{.D}}"></path>
{{$l := .}}{{range .Points}}<circle class="{{$l.Class}}" cx="{{.X}}" cy="{{.Y}}" r="{{.R}}"><title>{{.Title}}</title></circle>
{{end}}{{end}}</svg>
</div>
{{end}}</div>
<p class="muted">Each line is one setting but the idle TTL; the larger dot is the as-recorded row.{{if .DroppedSeries}} {{.DroppedSeries}} more lines not drawn (at most {{.MaxSeries}}, the best hit rates).{{end}}{{if .DroppedPoints}} {{.DroppedPoints}} points not drawn (repeated settings, or past {{.MaxPoints}} TTLs a line).{{end}}</p>
{{end}}<p class="muted">{{.OutOfScope}}.</p>
</section>
`))

// WriteHTMLSection writes the what-if section of an HTML page: the table
// (sorted as given, at most MaxHTMLRows rows), the best-per-cost lines and
// two SVG charts, hit rate and idle session-seconds against idle TTL, one
// line per setting but the TTL (idle per key, max idle, pre-warm), at most
// MaxSeries lines of MaxPoints points, the rest counted. It is a fragment
// (a section element with its own small style on report.css's colour
// variables): the analysis report can carry it as it is. html/template
// escapes every text; no script. m.Partial's line heads the section, then
// m.KeysMerged's: its figures are not measurable, so its cells say so and
// it draws no best-per-cost line and no chart.
func WriteHTMLSection(w io.Writer, rows []Row, m Marks) error {
	v := sectionView{CSS: seriesCSS(), Heading: bestHeading, Intro: bestRule, OutOfScope: OutOfScope, MaxSeries: MaxSeries, MaxPoints: MaxPoints,
		Sorted: sortedBy(m)}
	if m.Partial != "" {
		v.Partial = textfmt.TermSafe(PartialLine(m.Partial))
	}
	if m.KeysMerged != "" {
		v.KeysMerged, v.BestNotMeasurable = textfmt.TermSafe(KeysMergedLine(m.KeysMerged)), bestNotMeasurable
	}
	for i, r := range rows {
		if i >= MaxHTMLRows && !r.AsRecorded {
			v.MoreRows++
			continue
		}
		c := cells(r, m.KeysMerged != "")
		tr := tableRow{Setting: textfmt.TermSafe(r.Settings.String()), HitRate: c[0], Acquires: strconv.Itoa(r.Acquires), Hits: c[1], Causes: c[2],
			Sessions: c[3], Peak: c[4], Idle: c[5], Prewarm: c[6], AsRecorded: r.AsRecorded}
		if r.AsRecorded {
			tr.Label = recordedLabel(m.Assumed)
		}
		v.Rows = append(v.Rows, tr)
	}
	for _, b := range bestOf(rows, m) {
		head, tail := bestLine(b, rows)
		v.Best = append(v.Best, bestItem{Head: head, Setting: textfmt.TermSafe(rows[b.Row].Settings.String()), Tail: tail})
	}
	if m.KeysMerged == "" {
		v.charts(rows)
	}
	if err := sectionTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("whatif: render html: %w", err)
	}
	return nil
}

// charts draws v's charts, legend and what they leave out from rows.
func (v *sectionView) charts(rows []Row) {
	ss, ds, dp := chartSeries(rows)
	v.DroppedSeries, v.DroppedPoints = ds, dp
	for i, s := range ss {
		v.Legend = append(v.Legend, legendItem{Class: "s" + strconv.Itoa(i), Label: textfmt.TermSafe(s.label)})
	}
	topIdle := 0.0
	for _, s := range ss {
		for _, r := range s.rows {
			topIdle = max(topIdle, r.IdleSessionSeconds)
		}
	}
	v.Charts = []chart{
		drawChart(ss, "Hit rate", "hit rate", Row.HitRate, 1, func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) }),
		drawChart(ss, "Idle session-seconds (what the servers hold for nothing)", "idle s", func(r Row) float64 { return r.IdleSessionSeconds }, topIdle,
			func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }),
	}
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="generator" content="mcptrace">
<title>mcptrace whatif</title>
<style>{{.CSS}}</style>
</head>
<body>
<main>
<h1>mcptrace whatif</h1>
{{.Section}}
</main>
</body>
</html>
`))

// WriteHTMLPage writes a self-contained page (the HTML report's style
// inline, no script, a Content-Security-Policy forbidding every fetch)
// holding WriteHTMLSection's section: it opens offline from a file.
func WriteHTMLPage(w io.Writer, rows []Row, m Marks) error {
	css, err := htmlreport.CSS()
	if err != nil {
		return fmt.Errorf("whatif: render html: %w", err)
	}
	var sec strings.Builder
	if err := WriteHTMLSection(&sec, rows, m); err != nil {
		return err
	}
	// The section is html/template's own escaped output: trusted here.
	v := struct {
		CSS     template.CSS
		Section template.HTML
	}{template.CSS(css), template.HTML(sec.String())}
	if err := pageTmpl.Execute(w, v); err != nil {
		return fmt.Errorf("whatif: render html: %w", err)
	}
	return nil
}
