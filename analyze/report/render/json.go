package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// JSON writes r as indented JSON: the contract documented in
// docs/analysis-schema.md, which tools and baselines read back. A figure
// that is not measurable (Report.Figures) is null there, never a number,
// so no reader mistakes a figure the spans cannot show for a zero. It is
// data: never clipped, and encoding/json keeps it valid whatever the dump
// held.
func JSON(w io.Writer, r *report.Report) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	var paths [][]string
	for _, m := range report.Measures() {
		if f, ok := r.Figures[m.Name]; ok && !f.Known() {
			paths = append(paths, strings.Split(m.JSON, "."))
		}
	}
	for _, b := range report.Breakdowns() {
		if !r.BreakdownOf(b).Known() {
			paths = append(paths, strings.Split(b.JSON, "."))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	in := indenter{w: bw}
	nullTo(&in, bytes.TrimSpace(b.Bytes()), paths)
	bw.WriteByte('\n')
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	return nil
}

// indentTo writes the valid JSON src to w as json.Indent(dst, src, "",
// "  ") would, byte for byte, but as it goes: a report of many scopes is
// tens of megabytes of JSON, and indenting it whole into a buffer first
// would hold it three times over. Whitespace outside strings is dropped.
// w's error, if any, is its Flush's.
func indentTo(w *bufio.Writer, src []byte) {
	in := indenter{w: w}
	in.write(src)
}

// indenter is indentTo's state between two bytes of its input.
type indenter struct {
	w     *bufio.Writer
	depth int
	open  bool // the last token opened an object or array
	inStr bool
	esc   bool // in a string, after a backslash
}

// write writes the input b, indented.
func (in *indenter) write(b []byte) {
	for _, c := range b {
		in.byte(c)
	}
}

// byte writes one byte of the input, indented.
func (in *indenter) byte(c byte) {
	if in.inStr {
		in.w.WriteByte(c)
		in.inStr, in.esc = in.esc || c != '"', !in.esc && c == '\\'
		return
	}
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return
	}
	closing := c == '}' || c == ']'
	if in.open && !closing {
		in.newline()
	}
	in.token(c, closing)
	in.open = c == '{' || c == '['
	if in.open {
		in.depth++
	}
	in.inStr = c == '"'
}

// token writes c, a byte outside strings, with the line break or space
// json.Indent puts around it.
func (in *indenter) token(c byte, closing bool) {
	switch {
	case closing:
		in.depth--
		if !in.open {
			in.newline()
		}
		in.w.WriteByte(c)
	case c == ',':
		in.w.WriteByte(c)
		in.newline()
	case c == ':':
		in.w.WriteString(": ")
	default:
		in.w.WriteByte(c)
	}
}

// newline starts a line at the current depth.
func (in *indenter) newline() {
	in.w.WriteByte('\n')
	for range in.depth {
		in.w.WriteString("  ")
	}
}
