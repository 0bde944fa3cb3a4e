package analyze

import "github.com/mcptrace/mcptrace/analyze/internal/textfmt"

// termSafe makes text from a dump safe to print on a terminal
// (textfmt.TermSafe).
func termSafe(s string) string { return textfmt.TermSafe(s) }

// mdText makes text safe inside a Markdown table row (textfmt.MDText).
func mdText(s string) string { return textfmt.MDText(s) }

// escaped returns the section with esc applied to every piece of text (its
// title, header, cells and notes), so no renderer prints a dump's bytes raw.
func (s section) escaped(esc func(string) string) section {
	out := section{title: esc(s.title), flex: s.flex}
	for _, h := range s.header {
		out.header = append(out.header, esc(h))
	}
	for _, row := range s.rows {
		r := make([]string, len(row))
		for i, c := range row {
			r[i] = esc(c)
		}
		out.rows = append(out.rows, r)
	}
	for _, n := range s.notes {
		out.notes = append(out.notes, esc(n))
	}
	return out
}
