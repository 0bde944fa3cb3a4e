package analyze

import "github.com/mcptrace/mcptrace/analyze/internal/textfmt"

// This file is the one place the analysis report's formats escape and
// clip text; each format has one function for a cell and one for a note,
// built on analyze/internal/textfmt (the gate's reports use the same).
//
// Size budgets: a table or Markdown cell shows at most maxTableCell or
// maxMDCell runes of its value and a note at most maxNote, the rest
// replaced by an ellipsis (the visible mark of a clipped value); a clipped
// value is clipped before it is escaped, so an escape is never cut in
// half, and an escaped rune takes at most 10 bytes. A row is thus at most
// columns x cell budget x 10 bytes, Markdown's padding to the widest cell
// included, and a section draws at most maxRows rows (render_table.go),
// so a report for people stays under a fixed size whatever the dump
// holds: sections x maxRows rows, plus notes. The JSON report is data: it is never clipped
// (encoding/json keeps it valid JSON, escaping U+2028 and U+2029 and
// replacing invalid UTF-8).
const (
	maxTableCell = 60
	maxMDCell    = 120
	maxNote      = 2000
)

// termSafe makes text from a dump safe to print on a terminal
// (textfmt.TermSafe).
func termSafe(s string) string { return textfmt.TermSafe(s) }

// mdText makes text safe inside a Markdown table row (textfmt.MDText):
// links, images and autolinks inert, controls, bidi and zero-width
// characters escaped.
func mdText(s string) string { return textfmt.MDText(s) }

// tableCell and tableNote are a table report's cell and note: clipped to
// their budget, then escaped for a terminal.
func tableCell(s string) string { return termSafe(clipTo(s, maxTableCell)) }
func tableNote(s string) string { return termSafe(clipTo(s, maxNote)) }

// mdCell and mdNote are a Markdown report's cell and note: clipped to
// their budget, then escaped for Markdown.
func mdCell(s string) string { return mdText(clipTo(s, maxMDCell)) }
func mdNote(s string) string { return mdText(clipTo(s, maxNote)) }

// escaped returns the section with cell applied to its title, header and
// cells and note to its notes, so no renderer prints a dump's bytes raw or
// unbounded.
func (s section) escaped(cell, note func(string) string) section {
	out := section{title: cell(s.title), flex: s.flex}
	for _, h := range s.header {
		out.header = append(out.header, cell(h))
	}
	for _, row := range s.rows {
		r := make([]string, len(row))
		for i, c := range row {
			r[i] = cell(c)
		}
		out.rows = append(out.rows, r)
	}
	for _, n := range s.notes {
		out.notes = append(out.notes, note(n))
	}
	return out
}

// htmlText makes text from a dump safe and honest in the HTML report: the
// page draws it with textContent (never as markup) from JSON that escapes
// <, > and &, so what is left is what TermSafe shows as escapes: controls,
// bidi overrides and isolates, zero-width characters, line separators.
func htmlText(s string) string { return textfmt.TermSafe(s) }

// escapeText applies htmlText to every string of h that can come from a
// dump, a path or a rule file: inputs, scope and session names, the
// offenders' texts and queries, latency and measure names. Ids (hex), URLs
// built from them and the report's own notes need none.
func (h *HTMLReport) escapeText() {
	for i := range h.Inputs {
		h.Inputs[i] = htmlText(h.Inputs[i])
	}
	for i := range h.Scopes {
		sc := &h.Scopes[i]
		sc.Scope = htmlText(sc.Scope)
		for k := range sc.Lanes {
			sc.Lanes[k].Session = htmlText(sc.Lanes[k].Session)
		}
	}
	for i := range h.Offenders {
		o := &h.Offenders[i]
		o.ID, o.Expected, o.Found, o.TraceQL = htmlText(o.ID), htmlText(o.Expected), htmlText(o.Found), htmlText(o.TraceQL)
		for k := range o.Examples {
			o.Examples[k].TraceQL = htmlText(o.Examples[k].TraceQL)
		}
	}
	for i := range h.Latency {
		h.Latency[i].Name = htmlText(h.Latency[i].Name)
	}
	for i := range h.Headline.Reads {
		h.Headline.Reads[i].Name = htmlText(h.Headline.Reads[i].Name)
	}
	h.Headline.ExecutionsWhyNot = htmlText(clipTo(h.Headline.ExecutionsWhyNot, maxNote)) // it quotes --execution-root
}
