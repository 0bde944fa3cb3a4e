package render_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestDumpTextIsEscapedInEveryCellAndNote pins render_escape.go's promise
// for the reports for people: text from the dump (a pool scope's name in a
// cell, the reason executions measure nothing in a note) reaches neither
// the table nor the Markdown report with a control or format character
// (an ANSI escape, a bidi override) raw; each is shown as an escape.
func TestDumpTextIsEscapedInEveryCellAndNote(t *testing.T) {
	const hostile = "x\x1b[2Jy\u202ez"
	r := dumptest.Scenario(t, "pooled")
	r.Pool.ByScope = []report.ScopeReport{{Scope: hostile, Acquires: 1, Hits: 1, MissReasons: map[string]int{}}}
	r.Executions.Measurable = false
	r.Executions.WhyNot = "why " + hostile
	for format, escaped := range map[string]string{
		render.FormatTable:    `x\x1b[2Jy\u202ez`,
		render.FormatMarkdown: `x\x1b\[2Jy\u202ez`, // and Markdown's [ made inert
	} {
		t.Run(format, func(t *testing.T) {
			var b strings.Builder
			if err := render.Write(&b, r, format); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, r := range out {
				if (unicode.IsControl(r) && r != '\n') || unicode.Is(unicode.Cf, r) {
					t.Fatalf("raw %U in the %s report:\n%s", r, format, out)
				}
			}
			for _, want := range []string{" " + escaped + " ", "why " + escaped} {
				if !strings.Contains(unwrapped(out), want) {
					t.Errorf("the %s report lacks %s escaped:\n%s", format, want, out)
				}
			}
		})
	}
}
