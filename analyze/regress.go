package analyze

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"go.yaml.in/yaml/v3"
)

// Tolerances say how much worse than its baseline a dump may be before the
// gate calls it a regression. The zero value tolerates nothing; start from
// DefaultTolerances.
type Tolerances struct {
	// HitRateDrop is how far the hit rate may fall (absolute, 0.02 = two
	// points) before it regresses.
	HitRateDrop float64
	// LatencyRatio is how many times its baseline a latency percentile may
	// grow to (1.5 = 50% slower).
	LatencyRatio float64
	// LatencyMinDeltaMS ignores latency growth smaller than this many
	// milliseconds: a 0.1 ms acquire that takes 0.2 ms is noise, not a
	// regression.
	LatencyMinDeltaMS float64
	// ExcessMisses, UnexplainedMisses and Unexpected are how many more
	// misses above the floor, unexplained misses and unexpected requests of
	// a reads measure the dump may have than its baseline.
	ExcessMisses      int
	UnexplainedMisses int
	Unexpected        int
}

// DefaultTolerances are the gate's defaults: the hit rate may drop 2
// points, a latency percentile may grow 50% (or by less than 5 ms), and no
// count of misses, unexplained misses or unexpected reads may grow.
func DefaultTolerances() Tolerances {
	return Tolerances{HitRateDrop: 0.02, LatencyRatio: 1.5, LatencyMinDeltaMS: 5}
}

// Validate reports a tolerance that makes no sense.
func (t Tolerances) Validate() error {
	switch {
	case t.HitRateDrop < 0 || t.HitRateDrop > 1 || math.IsNaN(t.HitRateDrop):
		return fmt.Errorf("hit rate drop %v: want 0 to 1", t.HitRateDrop)
	case t.LatencyRatio < 1 || math.IsNaN(t.LatencyRatio) || math.IsInf(t.LatencyRatio, 0):
		return fmt.Errorf("latency ratio %v: want 1 or more (1.5 = 50%% slower)", t.LatencyRatio)
	case t.LatencyMinDeltaMS < 0 || math.IsNaN(t.LatencyMinDeltaMS):
		return fmt.Errorf("latency minimum delta %v ms: want 0 or more", t.LatencyMinDeltaMS)
	case t.ExcessMisses < 0 || t.UnexplainedMisses < 0 || t.Unexpected < 0:
		return fmt.Errorf("miss and read tolerances must be 0 or more")
	}
	return nil
}

// parseTolerances reads the regressions: mapping of a configuration file
// over the values already in t.
func parseTolerances(n *yaml.Node, t *Tolerances) error {
	err := eachKey(n, []string{"hit_rate_drop", "latency_ratio", "latency_min_delta_ms", "excess_misses", "unexplained_misses", "unexpected"}, func(key string, _, v *yaml.Node) error {
		var f float64
		var i int
		bad := func(want string) error { return nodeErrorf(v, "%s must be %s", key, want) }
		switch key {
		case "hit_rate_drop", "latency_ratio", "latency_min_delta_ms":
			if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil {
				return bad("a number")
			}
		default:
			if v.Kind != yaml.ScalarNode || v.Decode(&i) != nil || i < 0 {
				return bad("a whole number, 0 or more")
			}
		}
		switch key {
		case "hit_rate_drop":
			if f < 0 || f > 1 {
				return bad("between 0 and 1")
			}
			t.HitRateDrop = f
		case "latency_ratio":
			if f < 1 {
				return bad("1 or more (1.5 = 50% slower)")
			}
			t.LatencyRatio = f
		case "latency_min_delta_ms":
			if f < 0 {
				return bad("0 or more")
			}
			t.LatencyMinDeltaMS = f
		case "excess_misses":
			t.ExcessMisses = i
		case "unexplained_misses":
			t.UnexplainedMisses = i
		case "unexpected":
			t.Unexpected = i
		}
		return nil
	})
	return err
}

// Regression is one measure that got worse than its baseline allows.
type Regression struct {
	// Measure is the measure's rule name (hit_rate, call.p99,
	// measures.NAME.unexpected, ...).
	Measure  string  `json:"measure"`
	Baseline float64 `json:"baseline"`
	Current  float64 `json:"current"`
	// Allowed says what the tolerance permitted.
	Allowed string `json:"allowed"`
	// Message says it in a sentence.
	Message string `json:"message"`
}

// Regressions compares a dump's report with its baseline's and returns what
// got worse beyond tol, in the order of the table of measures (hit rate,
// excess and unexplained misses, multi-session executions, latency
// percentiles), then the reads measures in the baseline's order. Each
// measure is compared as its row's BaselineCheck says; one without data on
// a side that needs it is not compared.
func Regressions(base, cur *Report, tol Tolerances) []Regression {
	out := []Regression{}
	for _, m := range Measures() {
		b, okB := m.Value(base)
		c, okC := m.Value(cur)
		if g, ok := regression(m, m.Name, b, c, okB && okC, tol); ok {
			out = append(out, g)
		}
	}
	for _, bm := range base.Measures {
		for _, cm := range cur.Measures {
			if cm.Name != bm.Name {
				continue
			}
			for _, f := range ReadsFields() {
				b, okB := f.ReadsValue(&bm)
				c, okC := f.ReadsValue(&cm)
				f.Noun = "measure " + bm.Name + ": " + f.Noun
				if g, ok := regression(f, readsPrefix+bm.Name+"."+f.Name, b, c, okB && okC, tol); ok {
					out = append(out, g)
				}
			}
		}
	}
	return out
}

// regression compares one measure's baseline value b with its current
// value c as m.Baseline says; both says whether both sides have data.
func regression(m Measure, name string, b, c float64, both bool, tol Tolerances) (Regression, bool) {
	g := Regression{Measure: name, Baseline: b, Current: c}
	switch m.Baseline {
	case BaselineDrop:
		drop := m.Tolerance(tol)
		if !both || c >= b-drop-1e-9 {
			return g, false
		}
		g.Allowed = ">= " + formatFigure(round4(b-drop))
		g.Message = fmt.Sprintf("%s fell from %.1f%% to %.1f%% (more than %.1f points)", m.Noun, b*100, c*100, drop*100)
	case BaselineGrowth:
		allow := m.Tolerance(tol)
		if c <= b+allow {
			return g, false
		}
		g.Allowed = "<= " + formatFigure(b+allow)
		g.Message = fmt.Sprintf("%s rose from %s to %s", m.Noun, formatFigure(b), formatFigure(c))
	case BaselineAppear:
		if b != 0 || c <= 0 {
			return g, false
		}
		g.Allowed = "0"
		g.Message = fmt.Sprintf("%s %s where the baseline had none", formatFigure(c), m.Noun)
	case BaselineLatency:
		if !both || b <= 0 || c <= b*tol.LatencyRatio || c-b <= tol.LatencyMinDeltaMS {
			return g, false
		}
		g.Allowed = "<= " + formatFigure(round4(b*tol.LatencyRatio)) + " ms"
		g.Message = fmt.Sprintf("%s rose from %s ms to %s ms (x%.2f, more than x%s)", m.Noun, formatFigure(b), formatFigure(c), c/b, formatFigure(tol.LatencyRatio))
	default:
		return g, false
	}
	return g, true
}

func round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// DiffRow is one line of `mcptrace diff`: a measure on both sides.
type DiffRow struct {
	Measure  string   `json:"measure"`
	Baseline *float64 `json:"baseline"`
	Current  *float64 `json:"current"`
	// Regressed is true when the row is one of Regressions.
	Regressed bool `json:"regressed"`
}

// Diff lines up every dump-level measure of two reports (the reads
// measures of either side included), marking the regressions tol finds.
func Diff(base, cur *Report, tol Tolerances) []DiffRow {
	names := MeasureNames(nil)
	seen := map[string]bool{}
	for _, r := range []*Report{base, cur} {
		for _, m := range r.Measures {
			for _, n := range MeasureNames([]ReadMeasure{{Name: m.Name}}) {
				if strings.HasPrefix(n, readsPrefix) && !seen[n] {
					seen[n] = true
					names = append(names, n)
				}
			}
		}
	}
	regressed := map[string]bool{}
	for _, r := range Regressions(base, cur, tol) {
		regressed[r.Measure] = true
	}
	rows := make([]DiffRow, 0, len(names))
	for _, n := range names {
		row := DiffRow{Measure: n, Regressed: regressed[n]}
		if v, ok := MeasureValue(base, n); ok {
			row.Baseline = &v
		}
		if v, ok := MeasureValue(cur, n); ok {
			row.Current = &v
		}
		if row.Baseline == nil && row.Current == nil {
			continue
		}
		rows = append(rows, row)
	}
	return rows
}

// DiffSchema identifies the JSON contract of `mcptrace diff --format json`
// (docs/ci.md). It changes only when a key changes meaning or disappears.
const DiffSchema = "mcptrace.diff/v1"

// diffCells renders a row's baseline, current value and change for people.
func diffCells(r DiffRow) (base, cur, change string) {
	cell := func(p *float64) string {
		if p == nil {
			return "-"
		}
		return formatFigure(round4(*p))
	}
	if r.Baseline != nil && r.Current != nil {
		d := round4(*r.Current - *r.Baseline)
		switch {
		case d > 0:
			change = "+" + formatFigure(d)
		case d < 0:
			change = formatFigure(d)
		default:
			change = "="
		}
	}
	return cell(r.Baseline), cell(r.Current), change
}

// RenderDiffMarkdown writes the rows as a GitHub-flavoured Markdown table
// for a pull request comment, regressions marked, then the regressions'
// messages.
func RenderDiffMarkdown(w io.Writer, rows []DiffRow, regs []Regression, baseName, curName string) error {
	bw := &errWriter{w: w}
	fmt.Fprintf(bw, "## mcptrace diff: `%s` → `%s`\n\n", mdCode(baseName), mdCode(curName))
	if len(regs) == 0 {
		fmt.Fprintln(bw, "✅ No regression.")
	} else {
		fmt.Fprintf(bw, "❌ %d regression(s).\n", len(regs))
	}
	fmt.Fprintln(bw, "\n| measure | base | current | change | |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|---|")
	for _, r := range rows {
		base, cur, change := diffCells(r)
		flag := ""
		if r.Regressed {
			flag = "❌ regressed"
		}
		fmt.Fprintf(bw, "| `%s` | %s | %s | %s | %s |\n", mdCode(r.Measure), base, cur, change, flag)
	}
	if len(regs) > 0 {
		fmt.Fprintln(bw)
		for _, g := range regs {
			fmt.Fprintf(bw, "- `%s`: %s (allowed %s)\n", mdCode(g.Measure), mdText(g.Message), mdText(g.Allowed))
		}
	}
	return bw.err
}

// RenderDiff writes rows side by side as a table: measure, baseline,
// current, change, and REGRESSED where the gate would fail.
func RenderDiff(w io.Writer, rows []DiffRow, baseName, curName string) error {
	bw := &errWriter{w: w}
	t := tablewriter.NewTable(bw,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header([]string{"measure", clip(termSafe(baseName)), clip(termSafe(curName)), "change", ""})
	for _, r := range rows {
		base, cur, change := diffCells(r)
		flag := ""
		if r.Regressed {
			flag = "REGRESSED"
		}
		if err := t.Append([]string{termSafe(r.Measure), base, cur, change, flag}); err != nil {
			return fmt.Errorf("render diff: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return bw.err
}
