package render_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/internal/dumptest"
)

// TestEveryLatencyAndRatioColumnNamesItsUnit reads the Markdown of every
// scenario as a reader does: a column of a percentile
// says its unit in its own header or in its section's heading, and no
// header is an abbreviation a reader has to guess ("acq/hs").
func TestEveryLatencyAndRatioColumnNamesItsUnit(t *testing.T) {
	timed := regexp.MustCompile(`\bp(50|95|99)\b`)
	unit := regexp.MustCompile(`\b(ms|s|µs)\b|\((ms|s|µs)\)`)
	seen := 0
	for _, g := range dumptest.GoldenReports(t) {
		title := ""
		lines := strings.Split(draw(t, g.Report, render.FormatMarkdown), "\n")
		for i, line := range lines {
			if strings.HasPrefix(line, "### ") {
				title = line
				continue
			}
			if !strings.HasPrefix(line, "|") || i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "|:") {
				continue // not a header row
			}
			for _, cell := range strings.Split(strings.Trim(line, "|"), "|") {
				cell = strings.TrimSpace(cell)
				if strings.Contains(cell, "/") {
					t.Errorf("%s: %s: header %q abbreviates with a slash", g.Name, title, cell)
				}
				if !timed.MatchString(cell) {
					continue
				}
				seen++
				if !unit.MatchString(cell) && !unit.MatchString(title) {
					t.Errorf("%s: %s: column %q names no unit, nor does its heading", g.Name, title, cell)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no percentile or cold-start column in any scenario: the test reads nothing")
	}
}
