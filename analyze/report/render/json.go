package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
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
	raw, err := nullAt(bytes.TrimSpace(b.Bytes()), paths)
	if err != nil {
		return fmt.Errorf("render json: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	indentTo(bw, raw)
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
	var in indenter
	in.w = w
	for _, c := range src {
		in.byte(c)
	}
}

// indenter is indentTo's state between two bytes of its input.
type indenter struct {
	w     *bufio.Writer
	depth int
	open  bool // the last token opened an object or array
	inStr bool
	esc   bool // in a string, after a backslash
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

// nullAt returns the JSON object raw with the value at each path (keys
// from the top; a key ending in "[]" names an array, the rest of the path
// applying to each of its elements) replaced by null, every key kept in
// its place. A path through a value that is not an object (an array, for
// "[]"), or to a key raw lacks, changes nothing.
func nullAt(raw []byte, paths [][]string) ([]byte, error) {
	if len(paths) == 0 {
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return raw, nil // not an object: nothing to replace
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for n := 0; dec.More(); n++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		null, sub, each := pathsUnder(key, paths)
		switch {
		case null:
			val = json.RawMessage("null")
		case len(each) > 0:
			val, err = nullEach(val, each)
		default:
			val, err = nullAt(val, sub)
		}
		if err != nil {
			return nil, err
		}
		if n > 0 {
			b.WriteByte(',')
		}
		ke := json.NewEncoder(&b)
		ke.SetEscapeHTML(false)
		if err := ke.Encode(key); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // Encode's newline
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return slices.Clip(b.Bytes()), nil
}

// pathsUnder sorts the paths that start at key: whether one ends there
// (null), the rest of those going on into its object (sub), and of those
// naming it an array, "key[]", the rest for each element (each).
func pathsUnder(key string, paths [][]string) (null bool, sub, each [][]string) {
	for _, p := range paths {
		if len(p) == 0 {
			continue // a path to the elements themselves: none is drawn so
		}
		name, many := strings.CutSuffix(p[0], "[]")
		switch {
		case name != key:
		case many:
			each = append(each, p[1:])
		case len(p) == 1:
			null = true
		default:
			sub = append(sub, p[1:])
		}
	}
	return null, sub, each
}

// nullEach applies nullAt with paths to each element of the JSON array
// raw; a value that is not an array is returned as it is.
func nullEach(raw json.RawMessage, paths [][]string) (json.RawMessage, error) {
	var elems []json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || raw[0] != '[' {
		return raw, nil
	}
	if err := json.Unmarshal(raw, &elems); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('[')
	for i, e := range elems {
		out, err := nullAt(e, paths)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(out)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}
