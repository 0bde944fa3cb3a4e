package render_test

import (
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestNotesFromTheDumpAreEscapedInTableAndMarkdown pins that a note built
// from a dump's text, here a sessionless revision's note naming the dump's
// mcp.protocol.version, reaches the reports for people escaped: a
// terminal escape, a bell and a bidi override in the version show as
// \x1b, \x07 and \u202e in the note itself, not only in the table's cell,
// and no raw byte of them is printed.
func TestNotesFromTheDumpAreEscapedInTableAndMarkdown(t *testing.T) {
	const version = "2026-07-28\x1bX\x07\u202eZ"
	const shown = `2026-07-28\x1bX\x07\u202eZ`
	const noteText = "is sessionless: the session rules do not apply"
	for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
		t.Run(format, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.ByProtocol = []report.ProtocolReport{{ProtocolVersion: version, Sessionless: true, ColdStart: report.Percentiles{Count: 2}}}
			out := unwrapped(draw(t, r, format))
			for _, raw := range []string{"\x1b", "\x07", "\u202e"} {
				if strings.Contains(out, raw) {
					t.Errorf("the %s report prints %q raw", format, raw)
				}
			}
			var note string
			for line := range strings.SplitSeq(out, "\n") {
				if strings.Contains(line, noteText) {
					note = line
				}
			}
			if !strings.Contains(note, shown+" "+noteText) {
				t.Errorf("the %s report's note = %q, want it to name the revision as %s", format, note, shown)
			}
		})
	}
}
