package gate

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

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
func Regressions(base, cur *report.Report, tol rulefmt.Tolerances) []Regression {
	out := []Regression{}
	for _, m := range report.Measures() {
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
			for _, f := range report.ReadsFields() {
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

// maxNamedMeasures bounds the measure names one side of MeasuresDiffer
// lists, so a file of thousands of measures makes one readable line.
const maxNamedMeasures = 10

// MeasuresDiffer says why a baseline was made under another configuration
// than the current report: its reads-per-request measures (named by the
// configuration's measures:) are not the current ones by name. Regressions
// compares a reads measure only under one name on both sides, so a
// renamed, added or dropped measure would go uncompared and the gate pass
// on a comparison it never made; the check is then incomplete (exit 3),
// with this reason. It returns "" when both sides hold the same names
// (in any order) and for a nil baseline.
func MeasuresDiffer(base, cur *report.Report) string {
	if base == nil || cur == nil {
		return ""
	}
	names := func(r *report.Report) []string {
		out := make([]string, 0, len(r.Measures))
		for _, m := range r.Measures {
			out = append(out, m.Name)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	b, c := names(base), names(cur)
	if slices.Equal(b, c) {
		return ""
	}
	return fmt.Sprintf("the baseline was made under another configuration: its reads measures are %s, the current configuration's are %s; a measure under one name only is not compared (make the baseline again under the current configuration)",
		measureList(b), measureList(c))
}

// measureList renders measure names for MeasuresDiffer: quoted and escaped,
// at most maxNamedMeasures of them, "none" for none.
func measureList(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	q := make([]string, 0, min(len(names), maxNamedMeasures))
	for _, n := range names[:min(len(names), maxNamedMeasures)] {
		q = append(q, textfmt.QuoteInput(n))
	}
	out := "[" + strings.Join(q, ", ") + "]"
	if len(names) > maxNamedMeasures {
		out += fmt.Sprintf(" and %d more", len(names)-maxNamedMeasures)
	}
	return out
}

// regression compares one measure's baseline value b with its current
// value c as m.Baseline says; both says whether both sides have data.
func regression(m report.Measure, name string, b, c float64, both bool, tol rulefmt.Tolerances) (Regression, bool) {
	g := Regression{Measure: name, Baseline: b, Current: c}
	switch m.Baseline {
	case report.BaselineDrop:
		drop := m.Tolerance(tol)
		if !both || c >= b-drop-1e-9 {
			return g, false
		}
		g.Allowed = ">= " + textfmt.Figure(textfmt.Round4(b-drop))
		g.Message = fmt.Sprintf("%s fell from %.1f%% to %.1f%% (more than %.1f points)", m.Noun, b*100, c*100, drop*100)
	case report.BaselineGrowth:
		allow := m.Tolerance(tol)
		if c <= b+allow {
			return g, false
		}
		g.Allowed = "<= " + textfmt.Figure(b+allow)
		g.Message = fmt.Sprintf("%s rose from %s to %s", m.Noun, textfmt.Figure(b), textfmt.Figure(c))
	case report.BaselineAppear:
		if b != 0 || c <= 0 {
			return g, false
		}
		g.Allowed = "0"
		g.Message = fmt.Sprintf("%s %s where the baseline had none", textfmt.Figure(c), m.Noun)
	case report.BaselineLatency:
		if !both || b <= 0 || c <= b*tol.LatencyRatio || c-b <= tol.LatencyMinDeltaMS {
			return g, false
		}
		g.Allowed = "<= " + textfmt.Figure(textfmt.Round4(b*tol.LatencyRatio)) + " ms"
		g.Message = fmt.Sprintf("%s rose from %s ms to %s ms (x%.2f, more than x%s)", m.Noun, textfmt.Figure(b), textfmt.Figure(c), c/b, textfmt.Figure(tol.LatencyRatio))
	default:
		return g, false
	}
	return g, true
}

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
func Diff(base, cur *report.Report, tol rulefmt.Tolerances) []DiffRow {
	names := rulefmt.MeasureNames(nil)
	seen := map[string]bool{}
	for _, r := range []*report.Report{base, cur} {
		for _, m := range r.Measures {
			for _, n := range rulefmt.MeasureNames([]rulefmt.ReadMeasure{{Name: m.Name}}) {
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
		if v, ok := report.MeasureValue(base, n); ok {
			row.Baseline = &v
		}
		if v, ok := report.MeasureValue(cur, n); ok {
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
		return textfmt.Figure(textfmt.Round4(*p))
	}
	if r.Baseline != nil && r.Current != nil {
		d := textfmt.Round4(*r.Current - *r.Baseline)
		switch {
		case d > 0:
			change = "+" + textfmt.Figure(d)
		case d < 0:
			change = textfmt.Figure(d)
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
	bw := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(bw, "## mcptrace diff: `%s` → `%s`\n\n", textfmt.MDCode(baseName), textfmt.MDCode(curName))
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
		fmt.Fprintf(bw, "| `%s` | %s | %s | %s | %s |\n", textfmt.MDCode(r.Measure), base, cur, change, flag)
	}
	if len(regs) > 0 {
		fmt.Fprintln(bw)
		for _, g := range regs {
			fmt.Fprintf(bw, "- `%s`: %s (allowed %s)\n", textfmt.MDCode(g.Measure), textfmt.MDText(g.Message), textfmt.MDText(g.Allowed))
		}
	}
	return bw.Err
}

// RenderDiff writes rows side by side as a table: measure, baseline,
// current, change, and REGRESSED where the gate would fail.
func RenderDiff(w io.Writer, rows []DiffRow, baseName, curName string) error {
	bw := &textfmt.ErrWriter{W: w}
	t := tablewriter.NewTable(bw,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
	)
	t.Header([]string{"measure", textfmt.ClipTo(textfmt.TermSafe(baseName), maxCell), textfmt.ClipTo(textfmt.TermSafe(curName), maxCell), "change", ""})
	for _, r := range rows {
		base, cur, change := diffCells(r)
		flag := ""
		if r.Regressed {
			flag = "REGRESSED"
		}
		if err := t.Append([]string{textfmt.TermSafe(r.Measure), base, cur, change, flag}); err != nil {
			return fmt.Errorf("render diff: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render diff: %w", err)
	}
	return bw.Err
}

// readsPrefix starts the rule name of a reads-per-request field:
// measures.NAME.FIELD.
const readsPrefix = "measures."

// maxCell bounds a free-text cell (a file name) so a table stays readable.
const maxCell = 40

// tableWidth is the width the reports for people fit in.
const tableWidth = 100
