package render

import (
	"fmt"
	"io"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Markdown writes r as GitHub-flavoured Markdown for a pull request
// comment: a heading per group, its table, its notes as a list; the same
// sections as Table, so the two never disagree on content. Text from the
// dump goes through mdCell and mdNote (escape.go): escaped, links and
// autolinks inert, clipped to the cell budget, so the table's padding to
// its widest cell is bounded; a section draws at most MaxRows rows.
func Markdown(w io.Writer, r *report.Report) error {
	return view{r}.markdown(w)
}

// markdown draws the sections of r, as Markdown says.
func (r view) markdown(w io.Writer) error {
	bw := &errWriter{W: w}
	fmt.Fprintf(bw, "## mcptrace analysis\n\nSchema `%s`.\n", r.Schema)
	for _, s := range r.sections() {
		s = s.escaped(mdCell, mdNote)
		fmt.Fprintf(bw, "\n### %s\n\n", s.title)
		if bw.Err != nil {
			return bw.Err
		}
		t := tablewriter.NewTable(bw,
			tablewriter.WithRenderer(renderer.NewMarkdown()),
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithRowAutoWrap(tw.WrapNone),
		)
		t.Header(s.header)
		if err := t.Bulk(s.rows); err != nil {
			return fmt.Errorf("render %s markdown: %w", s.title, err)
		}
		if err := t.Render(); err != nil {
			return fmt.Errorf("render %s markdown: %w", s.title, err)
		}
		if len(s.notes) > 0 {
			fmt.Fprintln(bw)
		}
		for _, n := range s.notes {
			fmt.Fprintf(bw, "- %s\n", n)
		}
	}
	return bw.Err
}
