package gate

import (
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// verdictWord renders a status for people.
func verdictWord(s Status, sev rulefmt.Severity) string {
	switch {
	case s == StatusFail && sev == rulefmt.SeverityWarning:
		return "WARN"
	case s == StatusFail:
		return "FAIL"
	case s == StatusIncomplete:
		return "INCOMPLETE"
	case s == StatusNotApplicable:
		return "n/a"
	}
	return "pass"
}

// renderTable writes the check for people: one row per rule, then the
// failing rules' expectations, findings and examples, then the regressions
// and the verdict.
func (c *CheckReport) renderTable(w io.Writer) error {
	if w == nil {
		return errNoWriter
	}
	bw := &textfmt.ErrWriter{W: w}
	t := tablewriter.NewTable(bw, tablewriter.WithHeaderAutoFormat(tw.Off), tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header([]string{"status", "severity", "rule", "found"})
	for _, r := range c.Rules {
		if err := t.Append([]string{verdictWord(r.Status, r.Severity), string(r.Severity), textfmt.ClipTo(textfmt.TermSafe(r.ID), 34), textfmt.ClipTo(textfmt.TermSafe(r.Found), 44)}); err != nil {
			return fmt.Errorf("render check table: %w", err)
		}
	}
	if err := t.Render(); err != nil {
		return fmt.Errorf("render check table: %w", err)
	}
	for _, r := range c.Rules {
		if r.Status == StatusPass {
			continue
		}
		fmt.Fprintf(bw, "\n%s %s\n", verdictWord(r.Status, r.Severity), textfmt.TermSafe(r.ID))
		for _, line := range textfmt.Wrap("expected: "+textfmt.TermSafe(r.Expected), tableWidth-4) {
			fmt.Fprintf(bw, "  %s\n", line)
		}
		for _, line := range textfmt.Wrap("found: "+textfmt.TermSafe(r.Found), tableWidth-4) {
			fmt.Fprintf(bw, "  %s\n", line)
		}
		for _, ex := range r.Examples {
			fmt.Fprintf(bw, "  - %s\n", textfmt.TermSafe(ex.TraceQL))
		}
		if r.TraceQL != "" {
			fmt.Fprintf(bw, "  Tempo: %s\n", textfmt.TermSafe(r.TraceQL))
		}
	}
	if err := c.renderComparison(bw); err != nil {
		return err
	}
	if c.Partial {
		fmt.Fprintln(bw, "\nPARTIAL: an input was damaged; rules saw what was read before the damage.")
	}
	for _, why := range c.IncompleteReasons {
		fmt.Fprintf(bw, "\nINCOMPLETE: %s\n", textfmt.TermSafe(why))
	}
	fmt.Fprintf(bw, "\n%s\n", c.verdictLine())
	return bw.Err
}

// verdictLine sums the check up in one line.
func (c *CheckReport) verdictLine() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d passed", c.Counts.Pass))
	if n := c.Counts.Fail - c.Counts.Warnings; n > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", n))
	}
	if c.Counts.Warnings > 0 {
		parts = append(parts, fmt.Sprintf("%d warning(s)", c.Counts.Warnings))
	}
	if c.Counts.NotApplicable > 0 {
		parts = append(parts, fmt.Sprintf("%d not applicable", c.Counts.NotApplicable))
	}
	if c.Counts.Incomplete > 0 {
		parts = append(parts, fmt.Sprintf("%d incomplete", c.Counts.Incomplete))
	}
	if c.Baseline != "" {
		parts = append(parts, fmt.Sprintf("%d regression(s)", c.Counts.Regressions))
	}
	return fmt.Sprintf("verdict: %s (%s)", strings.ToUpper(string(c.Verdict)), strings.Join(parts, ", "))
}

// renderComparison writes the check's comparison with its baseline, if
// any: the rows diff prints (renderRows), then whether anything regressed.
// A report read back without rows lists its regressions alone.
func (c *CheckReport) renderComparison(bw *textfmt.ErrWriter) error {
	if c.Baseline == "" {
		return nil
	}
	fmt.Fprintf(bw, "\nAgainst the baseline %s:\n", pathLine(c.Baseline))
	if len(c.Comparison) > 0 {
		if err := renderRows(bw, c.Comparison); err != nil {
			return err
		}
	}
	switch {
	case len(c.Regressions) == 0:
		fmt.Fprintf(bw, "No regression against %s.\n", pathLine(c.Baseline))
	case len(c.Comparison) == 0:
		for _, r := range c.Regressions {
			fmt.Fprintf(bw, "  FAIL %s: %s (allowed %s)\n", textfmt.TermSafe(r.Measure), textfmt.TermSafe(r.Message), textfmt.TermSafe(r.Allowed))
		}
	}
	return bw.Err
}
