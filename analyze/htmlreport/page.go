package htmlreport

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/report/render"
)

// htmlAssets are the report page, its style and its script. The pictures
// are drawn by hand in SVG by report.js (no charting library): the session
// timeline is a custom picture no general library draws, the other charts
// are a few lines each, and a page without a library stays small, needs no
// licence notice and has no third-party code to keep up to date.
//
//go:embed page.html report.css report.js
var htmlAssets embed.FS

// Render writes the report as one self-contained HTML page: the style, the
// script and the data (this value's JSON, in a script element with id
// mcptrace-data) are inline, and a Content-Security-Policy forbids every
// network fetch, so the page opens from a file URL, offline, and follows the
// viewer's light or dark mode.
func (h *Report) Render(w io.Writer) error {
	data, err := json.Marshal(h) // escapes <, > and &: safe inside <script>
	if err != nil {
		return fmt.Errorf("render html: encode data: %w", err)
	}
	read := func(name string) (string, error) {
		b, err := htmlAssets.ReadFile(name)
		if err != nil {
			return "", fmt.Errorf("render html: %w", err)
		}
		return string(b), nil
	}
	page, err := read("page.html")
	if err != nil {
		return err
	}
	css, err := read("report.css")
	if err != nil {
		return err
	}
	js, err := read("report.js")
	if err != nil {
		return err
	}
	title := "mcptrace report"
	if len(h.Inputs) > 0 {
		title += ": " + strings.Join(h.Inputs, ", ")
	}
	if h.Verdict != nil {
		title = strings.ToUpper(string(h.Verdict.Verdict)) + " · " + title
	}
	// One pass over the page with fixed markers: the data never goes
	// through a replacement that could read markers inside it.
	// The title names every input: clipped, so 100k inputs do not make a
	// megabyte title.
	r := strings.NewReplacer("{{TITLE}}", html.EscapeString(textfmt.ClipTo(title, render.MaxNote)), "{{CSS}}", css, "{{JS}}", js, "{{DATA}}", string(data), "{{WHATIF}}", h.whatIf)
	var b bytes.Buffer
	if _, err := r.WriteString(&b, page); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("render html: %w", err)
	}
	return nil
}

// ExtractData returns the JSON data embedded in a report page written
// by [Report.Render]: what golden tests compare and tools can read back.
func ExtractData(page []byte) ([]byte, error) {
	const open = `<script id="mcptrace-data" type="application/json">`
	i := bytes.Index(page, []byte(open))
	if i < 0 {
		return nil, fmt.Errorf("no mcptrace-data script in the page")
	}
	rest := page[i+len(open):]
	j := bytes.Index(rest, []byte("</script>"))
	if j < 0 {
		return nil, fmt.Errorf("mcptrace-data script not closed")
	}
	return rest[:j], nil
}
