package analyze

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// termSafe makes text that came from a dump (span names, attribute values,
// ids, paths) safe to print on a terminal: every control character (C0, DEL
// and C1, which carry ESC, BEL and OSC sequences that retitle, recolour or
// hijack a terminal) and every invalid UTF-8 byte is written as a visible
// \xNN or \u00NN escape. Newlines and tabs are escaped too, so one value
// stays on one line of a table.
func termSafe(s string) string {
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

// needsEscape reports whether termSafe would change s.
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

// mdText makes text safe inside a Markdown table row or line: control bytes
// escaped as termSafe does (a newline would end the row), '|' escaped so it
// does not split a cell, and '<' as an entity so a value cannot open HTML.
func mdText(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;").Replace(termSafe(s))
}

// mdCode makes text safe inside a Markdown code span in a table row or
// line: control bytes escaped, '|' escaped (GitHub splits cells on it even
// in code), and a backtick, which would end the span, replaced by a quote.
// '<' stays: a code span shows it as is.
func mdCode(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(termSafe(s))
}

// escaped returns the section with esc applied to every piece of text (its
// title, header, cells and notes), so no renderer prints a dump's bytes raw.
func (s section) escaped(esc func(string) string) section {
	out := section{title: esc(s.title), flex: s.flex}
	for _, h := range s.header {
		out.header = append(out.header, esc(h))
	}
	for _, row := range s.rows {
		r := make([]string, len(row))
		for i, c := range row {
			r[i] = esc(c)
		}
		out.rows = append(out.rows, r)
	}
	for _, n := range s.notes {
		out.notes = append(out.notes, esc(n))
	}
	return out
}
