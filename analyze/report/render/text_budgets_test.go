package render_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// longRuns returns the length of every run of at least 20 'v's in out
// and whether each ends in the clip's ellipsis, as "N" or "N…", sorted.
func longRuns(out string) []string {
	var runs []string
	for _, m := range regexp.MustCompile(`v{20,}…?`).FindAllString(out, -1) {
		n := strings.Count(m, "v")
		if strings.HasSuffix(m, "…") {
			runs = append(runs, fmt.Sprintf("%d…", n))
		} else {
			runs = append(runs, fmt.Sprint(n))
		}
	}
	slices.Sort(runs)
	return slices.Compact(runs)
}

// TestEachFormatClipsACellAndANoteToItsBudget pins the size budgets of
// the reports for people: a value from the dump (here a protocol
// revision, drawn in a cell of its section and named in its note) shows
// at most MaxTableCell runes in a table's cell, MaxMDCell in a Markdown
// cell and MaxNote in a note of either, the last rune of each an ellipsis.
func TestEachFormatClipsACellAndANoteToItsBudget(t *testing.T) {
	for _, tc := range []struct {
		format string
		cell   int
	}{
		{render.FormatTable, render.MaxTableCell},
		{render.FormatMarkdown, render.MaxMDCell},
	} {
		t.Run(tc.format, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.ByProtocol = []report.ProtocolReport{{ProtocolVersion: strings.Repeat("v", 3*render.MaxNote), Sessionless: true}}
			got := longRuns(draw(t, r, tc.format))
			want := []string{fmt.Sprintf("%d…", render.MaxNote-1), fmt.Sprintf("%d…", tc.cell-1)}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("the revision is drawn as runs %v, want %v (the cell's budget and the note's, each clipped)", got, want)
			}
		})
	}
}

// TestTheExecutionRootIsClippedInTheDumpNote pins that the dump's note
// names the execution root clipped to MaxCell runes, in both formats.
func TestTheExecutionRootIsClippedInTheDumpNote(t *testing.T) {
	for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
		t.Run(format, func(t *testing.T) {
			r := dumptest.Scenario(t, "pooled")
			r.Executions.Root = strings.Repeat("v", 3*report.MaxCell)
			out := unwrapped(draw(t, r, format))
			want := "executions by " + strings.Repeat("v", report.MaxCell-1) + "…"
			if !strings.Contains(out, want) || len(longRuns(out)) != 1 {
				t.Errorf("the %s report lacks %q, or names the root at another length (%v):\n%s", format, want, longRuns(out), out)
			}
		})
	}
}

// TestTheFlexColumnKeepsAtLeastEightRunes pins the floor of the table's
// free-text column: when the other columns alone are wider than the
// table, the scope name still shows 8 runes (7 and the ellipsis) rather
// than vanishing.
func TestTheFlexColumnKeepsAtLeastEightRunes(t *testing.T) {
	r := dumptest.Scenario(t, "pooled")
	const big = 1_000_000_000_000_000_000
	r.Pool.ByScope = []report.ScopeReport{{Scope: strings.Repeat("s", 30), Acquires: big, Hits: big, Misses: big, Keys: big, ExcessMisses: big, MissReasons: map[string]int{}}}
	out := draw(t, r, render.FormatTable)
	if !strings.Contains(out, "│ sssssss… │") {
		t.Errorf("the scope is not drawn as its first 7 runes and an ellipsis:\n%s", out)
	}
}
