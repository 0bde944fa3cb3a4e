package render

import (
	"errors"
	"fmt"
	"io"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// The output formats of Write, as `mcptrace analyze --format` names them.
const (
	// FormatTable is for people at a terminal: small grouped tables that
	// fit 100 columns. It is the default.
	FormatTable = "table"
	// FormatJSON is the documented mcptrace.analysis contract, indented.
	FormatJSON = "json"
	// FormatMarkdown is for a pull request comment.
	FormatMarkdown = "markdown"
)

// Formats lists the formats Write accepts, the default first, so a flag
// that chooses one can offer exactly these.
var Formats = []string{FormatTable, FormatJSON, FormatMarkdown}

// ErrUnknownFormat is returned by Write for a format it does not know; the
// check's reports return it too, so a caller tells a bad --format from a
// failed write with errors.Is whichever report it asked for.
var ErrUnknownFormat = errors.New("unknown output format")

// Write draws r to w in format: a table for people (grouped, fits 100
// columns), indented JSON (the documented contract) or Markdown for a pull
// request; "" is the table. It is the one entry point a caller holding a
// --format flag needs.
func Write(w io.Writer, r *report.Report, format string) error {
	switch format {
	case FormatTable, "":
		return Table(w, r)
	case FormatJSON:
		return JSON(w, r)
	case FormatMarkdown:
		return Markdown(w, r)
	}
	return fmt.Errorf("%w %q: want table, json or markdown", ErrUnknownFormat, format)
}

// view is a report as the renderers for people read it: the report with
// the methods that lay it out in sections.
type view struct{ *report.Report }
