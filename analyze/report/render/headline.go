package render

import (
	"slices"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// headline builds the headline section titled title from the table: one
// column per row of the table placed there, in Order, and one table row
// per group (Column.Row) when rowHeader names the groups' column.
func (r view) headline(title, rowHeader string) section {
	s := section{title: title, flex: -1}
	var cols []report.Measure
	for _, m := range report.Measures() {
		if m.Show.Section == title {
			cols = append(cols, m)
		}
	}
	slices.SortStableFunc(cols, func(a, b report.Measure) int { return a.Show.Order - b.Show.Order })
	if len(cols) == 0 {
		return s
	}
	var groups []string
	for _, m := range cols {
		if !slices.Contains(groups, m.Show.Row) {
			groups = append(groups, m.Show.Row)
		}
	}
	if rowHeader != "" {
		s.header = append(s.header, rowHeader)
	}
	for _, m := range cols {
		if m.Show.Row == groups[0] {
			s.header = append(s.header, m.Show.Label)
		}
	}
	for _, g := range groups {
		var row []string
		if rowHeader != "" {
			row = append(row, g)
		}
		for _, m := range cols {
			if m.Show.Row == g {
				row = append(row, r.drawFigure(m))
			}
		}
		s.rows = append(s.rows, row)
	}
	s.notes = append(s.notes, r.figureNotes(cols)...)
	return s
}

// drawFigure draws m's value as the report for people does, marked by
// what it is worth (FigureOf): "—" for a figure the spans cannot show,
// "≥ 59" for a lower bound, "≤ 6.7%" for an upper one.
func (r view) drawFigure(m report.Measure) string {
	f := r.FigureOf(m.Name)
	if !f.Known() {
		return NotMeasurableCell
	}
	v, ok := m.Value(r.Report)
	return MarkAs(f, drawValue(m, v, ok))
}

// NotMeasurableCell is what a report for people draws for a figure the
// spans cannot show: never a number.
const NotMeasurableCell = "—"

// figureNotes says, beside a headline, why its figures that are not the
// truth are not: one line per reason, naming the columns it marks.
func (r view) figureNotes(cols []report.Measure) []string {
	type note struct {
		state  report.Measurability
		why    string
		labels []string
	}
	var notes []note
	for _, m := range cols {
		f := r.FigureOf(m.Name)
		if f.Exact() {
			continue
		}
		label := m.Show.Label
		if m.Show.Row != "" {
			label = m.Show.Row // a row's columns share its reason
		}
		k := slices.IndexFunc(notes, func(n note) bool { return n.state == f.State && n.why == f.Why })
		if k < 0 {
			notes = append(notes, note{state: f.State, why: f.Why})
			k = len(notes) - 1
		}
		if !slices.Contains(notes[k].labels, label) {
			notes[k].labels = append(notes[k].labels, label)
		}
	}
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		out = append(out, strings.Join(n.labels, ", ")+": "+StateWords(n.state)+": "+n.why)
	}
	return out
}

// StateWords names what a figure that is not the truth is worth, as the
// notes under a table for people say it: "not measurable", "lower bound
// (≥)", "upper bound (≤)"; "" for the truth.
func StateWords(s report.Measurability) string {
	return map[report.Measurability]string{report.NotMeasurable: "not measurable", report.LowerBound: "lower bound (≥)", report.UpperBound: "upper bound (≤)"}[s]
}

// readsHeadline builds the reads-per-request section from the table of
// reads fields: a row per measure, its name first.
func (r view) readsHeadline() section {
	s := section{title: report.SectionReads, flex: 0, header: []string{"measure"}}
	cols := report.ReadsFields()
	slices.SortStableFunc(cols, func(a, b report.Measure) int { return a.Show.Order - b.Show.Order })
	for _, f := range cols {
		s.header = append(s.header, f.Show.Label)
	}
	for i := range r.Measures {
		m := &r.Measures[i]
		row := []string{m.Name}
		for _, f := range cols {
			v, ok := f.ReadsValue(m)
			row = append(row, drawValue(f, v, ok || f.Show.Always))
		}
		s.rows = append(s.rows, row)
	}
	return s
}

// drawValue draws a value of measure m as the reports for people do, in
// the format its row names (report.Measure.Draw): "-" when ok is false.
func drawValue(m report.Measure, v float64, ok bool) string {
	if !ok {
		return "-"
	}
	switch m.Draw {
	case report.DrawPercent:
		return textfmt.Percent(v)
	case report.DrawDecimal:
		return strconv.FormatFloat(v, 'f', 2, 64)
	case report.DrawMS:
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	return strconv.FormatInt(int64(v), 10)
}
