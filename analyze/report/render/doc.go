// Package render draws the analysis value of analyze/report: a table for
// people at a terminal, Markdown for a pull request comment and the
// indented JSON of the documented contract (docs/analysis-schema.md), the
// Markdown table of measures of that document, and the escaping and size
// budgets that keep every drawing safe and bounded whatever the dump held.
//
// It sits beside analyze/report and imports it, never the other way: the
// data package holds what a report says, this one how it looks, so a
// reader of either sees only one of the two. The table and Markdown
// reports are laid out from the report's table of measures (where each
// figure is shown, how its value is drawn) and its figures' measurability
// (a bound is marked, a figure the spans cannot show is never a number).
package render
