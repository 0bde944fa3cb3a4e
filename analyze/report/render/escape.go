package render

import "github.com/mcptrace/mcptrace/analyze/internal/textfmt"

// This file is the one place the analysis report's formats escape and
// clip text; each format has one function for a cell and one for a note,
// built on analyze/internal/textfmt (the gate's reports use the same).
//
// Size budgets: a table or Markdown cell shows at most MaxTableCell or
// MaxMDCell runes of its value and a note at most MaxNote, the rest
// replaced by an ellipsis (the visible mark of a clipped value); a clipped
// value is clipped before it is escaped, so an escape is never cut in
// half, and an escaped rune takes at most 10 bytes. A row is thus at most
// columns x cell budget x 10 bytes, Markdown's padding to the widest cell
// included, and a section draws at most MaxRows rows (sections.go),
// so a report for people stays under a fixed size whatever the dump
// holds: sections x MaxRows rows, plus notes. The JSON report is data: it is never clipped
// (encoding/json keeps it valid JSON, escaping U+2028 and U+2029 and
// replacing invalid UTF-8).
const (
	// MaxTableCell is the most runes of a value a table cell shows.
	MaxTableCell = 60
	// MaxMDCell is the most runes of a value a Markdown cell shows.
	MaxMDCell = 120
	// MaxNote is the most runes of a note (a finding's text) any report
	// shows, the HTML report's included.
	MaxNote = 2000
)

// termSafe makes text from a dump safe to print on a terminal
// (textfmt.TermSafe).
func termSafe(s string) string { return textfmt.TermSafe(s) }

// TermSafeLines makes multi-line text safe to print on a terminal: every
// control byte but the newline, every format character (bidi overrides,
// zero-width) and every invalid UTF-8 byte shown as an escape
// (textfmt.TermSafeLines). It is the reports' own rule, exported so the
// CLI's error messages, which quote paths, flags and input, follow it too.
func TermSafeLines(s string) string { return textfmt.TermSafeLines(s) }

// mdText makes text safe inside a Markdown table row (textfmt.MDText):
// links, images and autolinks inert, controls, bidi and zero-width
// characters escaped.
func mdText(s string) string { return textfmt.MDText(s) }

// tableCell and tableNote are a table report's cell and note: clipped to
// their budget, then escaped for a terminal.
func tableCell(s string) string { return termSafe(clipTo(s, MaxTableCell)) }
func tableNote(s string) string { return termSafe(clipTo(s, MaxNote)) }

// mdCell and mdNote are a Markdown report's cell and note: clipped to
// their budget, then escaped for Markdown.
func mdCell(s string) string { return mdText(clipTo(s, MaxMDCell)) }
func mdNote(s string) string { return mdText(clipTo(s, MaxNote)) }

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

// clipTo shortens s to n runes, the last an ellipsis.
func clipTo(s string, n int) string { return textfmt.ClipTo(s, n) }

// Heading renders text as a heading above a report in format, escaped
// and clipped as a note is: a Markdown heading, a terminal line between
// rules, nothing for JSON (whose documents name their own inputs). A
// command printing several reports in one output (analyze --split-by)
// names each with it.
func Heading(text, format string) string {
	switch format {
	case FormatJSON:
		return ""
	case FormatMarkdown:
		return "# " + mdNote(text)
	}
	return "=== " + tableNote(text) + " ==="
}
