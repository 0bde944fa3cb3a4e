package htmlreport

import (
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

// htmlText makes text from a dump safe and honest in the HTML report: the
// page draws it with textContent (never as markup) from JSON that escapes
// <, > and &, so what is left is what TermSafe shows as escapes: controls,
// bidi overrides and isolates, zero-width characters, line separators.
func htmlText(s string) string { return textfmt.TermSafe(s) }

// escapeText applies htmlText to every string of h that can come from a
// dump, a path or a rule file: inputs, scope and session names, the
// rules' and offenders' texts and queries, latency and measure names. Ids (hex), URLs
// built from them and the report's own notes need none.
func (h *Report) escapeText() {
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
	for i := range h.Rules {
		r := &h.Rules[i]
		r.ID, r.Found, r.Expected = htmlText(r.ID), htmlText(r.Found), htmlText(r.Expected)
		r.Description, r.TraceQL = htmlText(r.Description), htmlText(r.TraceQL)
		// The examples are the check's own: escaped in a copy.
		ex := make([]report.RuleExample, len(r.Examples))
		for k, e := range r.Examples {
			ex[k] = report.RuleExample{TraceID: htmlText(e.TraceID), SpanID: htmlText(e.SpanID), TraceQL: htmlText(e.TraceQL)}
		}
		r.Examples = ex
	}
	for i := range h.Latency {
		h.Latency[i].Name = htmlText(h.Latency[i].Name)
	}
	for i := range h.Headline.Reads {
		h.Headline.Reads[i].Name = htmlText(h.Headline.Reads[i].Name)
		h.Headline.Reads[i].Unmatched = htmlText(textfmt.ClipTo(h.Headline.Reads[i].Unmatched, render.MaxNote))
	}
	// The runs note holds words and numbers only: escaped all the same.
	h.RunsNote = htmlText(h.RunsNote)
	h.Headline.ExecutionsWhyNot = htmlText(textfmt.ClipTo(h.Headline.ExecutionsWhyNot, render.MaxNote)) // it quotes --execution-root
}
