package render

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
)

// tableWidth is the width the table report fits in.
const tableWidth = 100

// Table writes r for people at a terminal: one small table per group,
// fitting 100 columns, with tablewriter. Text from the dump goes through
// tableCell and tableNote (escape.go): escaped for a terminal and clipped
// to the cell budget, so a hostile dump cannot drive the terminal or flood
// it; a section draws at most MaxRows rows.
func Table(w io.Writer, r *report.Report) error {
	return view{r}.table(w)
}

// table draws the sections of r, as Table says.
func (r view) table(w io.Writer) error {
	bw := &errWriter{W: w}
	fmt.Fprintf(bw, "mcptrace analysis (%s)\n", r.Schema)
	for _, s := range r.sections() {
		s = s.escaped(tableCell, tableNote)
		fmt.Fprintf(bw, "\n%s\n", strings.ToUpper(s.title))
		if bw.Err != nil {
			return bw.Err
		}
		t := tablewriter.NewTable(bw,
			tablewriter.WithRenderer(renderer.NewBlueprint()),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithHeaderAutoWrap(tw.WrapNone),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
		)
		t.Header(s.header)
		if err := t.Bulk(fitWidth(s, tableWidth)); err != nil {
			return fmt.Errorf("render %s table: %w", s.title, err)
		}
		if err := t.Render(); err != nil {
			return fmt.Errorf("render %s table: %w", s.title, err)
		}
		for _, n := range s.notes {
			for _, line := range wrap(n, tableWidth-4) {
				fmt.Fprintf(bw, "  %s\n", line)
			}
		}
	}
	return bw.Err
}

// fitWidth returns the section's rows with its flex column clipped so the
// drawn table (cells, one space of padding each side, and borders) is at most
// width columns wide.
func fitWidth(s section, width int) [][]string {
	if s.flex < 0 {
		return s.rows
	}
	widths := make([]int, len(s.header))
	for i, h := range s.header {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, row := range s.rows {
		for i, c := range row {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := 3*len(widths) + 1
	for _, w := range widths {
		total += w
	}
	if total <= width {
		return s.rows
	}
	room := max(widths[s.flex]-(total-width), utf8.RuneCountInString(s.header[s.flex]), 8)
	rows := make([][]string, len(s.rows))
	for i, row := range s.rows {
		rows[i] = slices.Clone(row)
		rows[i][s.flex] = clipTo(row[s.flex], room)
	}
	return rows
}

// wrap breaks text into lines of at most width runes (textfmt.Wrap).
func wrap(text string, width int) []string { return textfmt.Wrap(text, width) }
