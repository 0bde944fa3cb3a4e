package gate

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

// The comparison of two runs (Compare's rows) drawn for people: the one
// table `mcptrace diff` prints and `mcptrace check --baseline` prints
// under its rules, in text and in Markdown. The columns are named base
// and current, the files said above them, so two paths alike up to the
// clip never make two columns of the same name.

// maxVerdictCell bounds the verdict cell of the text table; a longer
// reason (not measurable) is written whole below the table.
const maxVerdictCell = 60

// maxPath bounds a file name said above a comparison.
const maxPath = 300

// figureCell renders a side's figure marked by what it is worth, f
// (render.MarkAs, as the analysis draws it: "≥ 0.25" for a lower bound);
// "-" for none.
func figureCell(p *float64, f report.FigureState) string {
	if p == nil {
		return "-"
	}
	return render.MarkAs(f, textfmt.Figure(textfmt.Round4(*p)))
}

// changeCell renders a row's change marked by what it is worth
// (Row.ChangeFigure): "=" for none, a signed figure, "≥ +6" for a lower
// bound of the change, "—" for a change between bounds that may be off
// either way; "" when a side has no figure.
func changeCell(r Row) string {
	if r.Baseline == nil || r.Current == nil {
		return ""
	}
	text := "0"
	switch d := textfmt.Round4(*r.Current - *r.Baseline); {
	case d > 0:
		text = "+" + textfmt.Figure(d)
	case d < 0:
		text = textfmt.Figure(d)
	case r.ChangeFigure.Exact():
		return "="
	}
	return render.MarkAs(r.ChangeFigure, text)
}

// boundNotes say, under a comparison, why its marked figures are not the
// truth: for each row whose two sides have figures and are not both the
// truth, what each side and the change are worth and why (the change's
// reasons, which name every side that is a bound), said once for every
// measure it applies to.
func boundNotes(rows []Row) []string {
	var notes []string
	measures := map[string][]string{}
	for _, r := range rows {
		if r.Baseline == nil || r.Current == nil || r.ChangeFigure.Exact() {
			continue
		}
		var parts []string
		for _, s := range []struct {
			name string
			f    report.FigureState
		}{{"base", r.BaselineFigure}, {"current", r.CurrentFigure}, {"change", r.ChangeFigure}} {
			if !s.f.Exact() {
				parts = append(parts, s.name+" "+render.StateWords(s.f.State))
			}
		}
		note := strings.Join(parts, ", ") + ": " + r.ChangeFigure.Why
		if measures[note] == nil {
			notes = append(notes, note)
		}
		measures[note] = append(measures[note], r.Measure)
	}
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		out = append(out, "bound: "+strings.Join(measures[n], ", ")+": "+n)
	}
	return out
}

// verdictText says a row's verdict and what it rests on: "~ (p=0.400,
// n=3 vs 3 samples)", "REGRESSION (p=0.001, ...)", "not measurable
// (current: no acquires)"; "" for a row the gate does not judge.
func verdictText(r Row) string {
	word := string(r.Verdict)
	switch r.Verdict {
	case VerdictNotJudged:
		return ""
	case VerdictRegression:
		word = "REGRESSION"
	}
	if r.Why == "" {
		return word
	}
	return word + " (" + r.Why + ")"
}

// unitNote names the unit of a measure drawn in milliseconds (" (ms)"),
// "" for rates and counts, whose figures say what they are: a latency
// figure without its unit is a number to guess.
func unitNote(measure string) string {
	if m, _, ok := report.LookupMeasure(measure); ok && m.Unit == report.UnitMS {
		return " (" + string(report.UnitMS) + ")"
	}
	return ""
}

// pathLine renders a file name for a line of text.
func pathLine(p string) string { return textfmt.TermSafe(textfmt.ClipTo(p, maxPath)) }

// renderRows writes rows as a text table (measure, base, current, change,
// verdict), then each regression's message and each not measurable
// row's reason in full.
func renderRows(bw *textfmt.ErrWriter, rows []Row) error {
	t := tablewriter.NewTable(bw, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header([]string{"measure", "base", "current", "change", "verdict"})
	for _, r := range rows {
		cell := textfmt.ClipTo(textfmt.TermSafe(verdictText(r)), maxVerdictCell)
		if err := t.Append([]string{textfmt.TermSafe(r.Measure) + unitNote(r.Measure), figureCell(r.Baseline, r.BaselineFigure), figureCell(r.Current, r.CurrentFigure), changeCell(r), cell}); err != nil {
			return fmt.Errorf("render comparison: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render comparison: %w", err)
	}
	for _, line := range rowNotes(rows) {
		for i, l := range textfmt.Wrap(textfmt.TermSafe(line), tableWidth-4) {
			if i > 0 {
				l = "  " + l
			}
			fmt.Fprintf(bw, "  %s\n", l)
		}
	}
	return bw.Err
}

// rowNotes are the lines under a comparison table: each regression's
// message, then each reason a measure is not measurable, said once for
// every measure it applies to, then why each marked figure is only a
// bound (boundNotes).
func rowNotes(rows []Row) []string {
	var lines, whys []string
	measures := map[string][]string{}
	for _, r := range rows {
		switch r.Verdict {
		case VerdictRegression:
			lines = append(lines, "REGRESSION "+r.Measure+": "+r.Message+" (allowed "+r.Allowed+")")
		case VerdictNotMeasurable:
			if measures[r.Why] == nil {
				whys = append(whys, r.Why)
			}
			measures[r.Why] = append(measures[r.Why], r.Measure)
		}
	}
	for _, why := range whys {
		lines = append(lines, "not measurable: "+strings.Join(measures[why], ", ")+": "+why)
	}
	return append(lines, boundNotes(rows)...)
}

// regressionCount counts the rows that regressed.
func regressionCount(rows []Row) int {
	n := 0
	for _, r := range rows {
		if r.Verdict == VerdictRegression {
			n++
		}
	}
	return n
}

// RenderDiff writes the comparison of two runs for people: the files
// compared, then rows as a table with each row's verdict, then whether
// anything regressed.
func RenderDiff(w io.Writer, rows []Row, baseName, curName string) error {
	bw := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(bw, "base:    %s\ncurrent: %s\n\n", pathLine(baseName), pathLine(curName))
	if err := renderRows(bw, rows); err != nil {
		return err
	}
	if n := regressionCount(rows); n > 0 {
		fmt.Fprintf(bw, "\n%d regression(s).\n", n)
	} else {
		fmt.Fprintln(bw, "\nNo regression.")
	}
	return bw.Err
}

// renderRowsMarkdown writes rows as a GitHub-flavoured Markdown table, the
// same columns, marks and verdicts as renderRows, then the regressions'
// messages and why each marked figure is only a bound.
func renderRowsMarkdown(bw *textfmt.ErrWriter, rows []Row) {
	fmt.Fprintln(bw, "| measure | base | current | change | verdict |")
	fmt.Fprintln(bw, "|---|---:|---:|---:|---|")
	icon := map[Verdict]string{VerdictRegression: "❌ ", VerdictImprovement: "✅ ", VerdictNotMeasurable: "⏳ "}
	for _, r := range rows {
		v := verdictText(r)
		if v != "" {
			v = icon[r.Verdict] + mdCell(v)
		}
		fmt.Fprintf(bw, "| `%s`%s | %s | %s | %s | %s |\n", textfmt.MDCode(r.Measure), unitNote(r.Measure), figureCell(r.Baseline, r.BaselineFigure), figureCell(r.Current, r.CurrentFigure), changeCell(r), v)
	}
	first := true
	for _, r := range rows {
		if r.Verdict != VerdictRegression {
			continue
		}
		if first {
			fmt.Fprintln(bw)
			first = false
		}
		fmt.Fprintf(bw, "- `%s`: %s (allowed %s)\n", textfmt.MDCode(r.Measure), mdCell(r.Message), mdCell(r.Allowed))
	}
	for _, note := range boundNotes(rows) {
		if first {
			fmt.Fprintln(bw)
			first = false
		}
		fmt.Fprintf(bw, "- %s\n", mdCell(note))
	}
}

// RenderDiffMarkdown writes the comparison of two runs as Markdown for a
// pull request comment: the files, whether anything regressed, the rows
// and the regressions' messages.
func RenderDiffMarkdown(w io.Writer, rows []Row, baseName, curName string) error {
	bw := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(bw, "## mcptrace diff: `%s` → `%s`\n\n", textfmt.MDCode(baseName), textfmt.MDCode(curName))
	if n := regressionCount(rows); n == 0 {
		fmt.Fprintln(bw, "✅ No regression.")
	} else {
		fmt.Fprintf(bw, "❌ %d regression(s).\n", n)
	}
	fmt.Fprintln(bw)
	renderRowsMarkdown(bw, rows)
	return bw.Err
}
