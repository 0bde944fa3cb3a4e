package whatif

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// MaxMarkdownRows is the most rows the Markdown table shows (the best,
// as sorted, and the as-recorded row wherever it sorts); the rest are
// counted, and the JSON report holds them all. A pull request comment
// stays readable and bounded whatever grid the flags ask for.
const MaxMarkdownRows = 25

// maxMDCell is the most runes of a text a Markdown cell shows, as the
// analysis report's Markdown cells (render.MaxMDCell).
const maxMDCell = 120

// mdSetting is a setting's text in a Markdown table cell or line: a code
// span, clipped, its '|' escaped and a backtick turned into a quote
// (textfmt.MDCode), so it stays one cell whatever it holds.
func mdSetting(s string) string { return "`" + textfmt.MDCode(textfmt.ClipTo(s, maxMDCell)) + "`" }

// mdRow writes one Markdown table row; cells are escaped by the caller.
func mdRow(w io.Writer, cells []string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// WriteMarkdown writes rows (sorted as given) as GitHub-flavoured
// Markdown for a pull request: a heading, the table (at most
// MaxMarkdownRows rows, the rest counted), the best-per-cost lines and the
// out-of-scope sentence. m.Assumed says the as-recorded settings were the
// user's, not the dump's; m.Partial puts its line in bold under the heading.
func WriteMarkdown(w io.Writer, rows []Row, m Marks) error {
	bw := &textfmt.ErrWriter{W: w}
	fmt.Fprintf(bw, "## mcptrace whatif\n\n")
	if m.Partial != "" {
		fmt.Fprintf(bw, "**%s**\n\n", textfmt.MDText(PartialLine(m.Partial)))
	}
	if m.KeysMerged != "" {
		fmt.Fprintf(bw, "**%s**\n\n", textfmt.MDText(KeysMergedLine(m.KeysMerged)))
	}
	fmt.Fprintf(bw, "Schema `%s`, %d settings replayed, %s.\n\n", Schema, len(rows), sortedBy(m))
	mdRow(bw, []string{"Settings", "Hit rate", "Acquires", "Hits", "Misses by cause", "Sessions", "Peak", "Idle s", "Pre-warm (unused)"})
	mdRow(bw, []string{"---", "---:", "---:", "---:", "---", "---:", "---:", "---:", "---:"})
	shown := 0
	for i, r := range rows {
		if i >= MaxMarkdownRows && !r.AsRecorded {
			continue
		}
		shown++
		label := mdSetting(r.Settings.String())
		if r.AsRecorded {
			label += textfmt.MDText(recordedLabel(m.Assumed))
		}
		c := cells(r, m.KeysMerged != "")
		mdRow(bw, []string{label, c[0], strconv.Itoa(r.Acquires), c[1], textfmt.MDText(c[2]), c[3], c[4], c[5], c[6]})
	}
	if n := len(rows) - shown; n > 0 {
		fmt.Fprintf(bw, "\n%d more rows not shown (`--format json` lists them all).\n", n)
	}
	if m.KeysMerged != "" {
		fmt.Fprintf(bw, "\n%s.\n", textfmt.MDText(bestNotMeasurable))
	}
	if best := bestOf(rows, m); len(best) > 0 {
		fmt.Fprintf(bw, "\n%s\n\n", textfmt.MDText(bestIntro))
		for _, b := range best {
			head, tail := bestLine(b, rows)
			fmt.Fprintf(bw, "- %s %s%s\n", textfmt.MDText(head), mdSetting(rows[b.Row].Settings.String()), textfmt.MDText(tail))
		}
	}
	fmt.Fprintf(bw, "\n%s.\n", textfmt.MDText(OutOfScope))
	return bw.Err
}

// recordedLabel marks the as-recorded row after its setting, in every
// output: whether its settings were the dump's own or assumed.
func recordedLabel(assumed bool) string {
	if assumed {
		return " (as recorded, settings assumed)"
	}
	return " (as recorded, settings recorded)"
}
