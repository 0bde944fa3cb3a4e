// Package textfmt holds the text helpers the analysis report and the
// gate's reports share: escaping text that came from a dump for a terminal
// or for Markdown, clipping and wrapping it, and drawing figures. It is
// internal so both can use one copy of the escaping without making it part
// of analyze's API.
package textfmt

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// TermSafe makes text that came from a dump (span names, attribute values,
// ids, paths) safe to print on a terminal: every control character (C0, DEL
// and C1, which carry ESC, BEL and OSC sequences that retitle, recolour or
// hijack a terminal) and every invalid UTF-8 byte is written as a visible
// \xNN or \u00NN escape. Newlines and tabs are escaped too, so one value
// stays on one line of a table.
func TermSafe(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r >= 0x80 && r <= 0x9f:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether TermSafe would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) {
			return true
		}
		i += size
	}
	return false
}

// MDText makes text safe inside a Markdown table row or line: control bytes
// escaped as TermSafe does (a newline would end the row), '|' escaped so it
// does not split a cell, and '<' as an entity so a value cannot open HTML.
func MDText(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;").Replace(TermSafe(s))
}

// MDCode makes text safe inside a Markdown code span in a table row or
// line: control bytes escaped, '|' escaped (GitHub splits cells on it even
// in code), and a backtick, which would end the span, replaced by a quote.
// '<' stays: a code span shows it as is.
func MDCode(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(TermSafe(s))
}

// ClipTo shortens s to n runes, the last an ellipsis.
func ClipTo(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Wrap breaks text into lines of at most width runes at spaces; a word
// longer than width gets a line of its own. Continuation lines are indented.
func Wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = "  " + word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// ErrWriter remembers the first write error of W so rendering can check
// once, at the end, instead of after every line.
type ErrWriter struct {
	W   io.Writer
	Err error
}

// Write writes p unless an earlier write failed.
func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.Err != nil {
		return 0, e.Err
	}
	n, err := e.W.Write(p)
	e.Err = err
	return n, err
}

// Figure renders a measured value: integers as such, other numbers with
// as many decimals as they need.
func Figure(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// Round4 rounds to four decimals, as figures are shown to people.
func Round4(f float64) float64 { return math.Round(f*1e4) / 1e4 }

// maxQuotedInput caps a piece of the user's input quoted back in an error:
// a 50 MB rule id must not become a 50 MB message.
const maxQuotedInput = 80

// ClipInput shortens user input for an error message, on a rune boundary,
// saying how long it was.
func ClipInput(s string) string {
	if len(s) <= maxQuotedInput {
		return s
	}
	cut := maxQuotedInput
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
