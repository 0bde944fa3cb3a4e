package textfmt

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// QuoteInput quotes a piece of the input (a key, a token, a flag's value)
// for an error message: clipped as ClipInput clips it, so a megabyte of
// junk stays a line, and escaped so no byte of it acts on the terminal or
// the log that shows the error. Control characters and invalid UTF-8 are
// escaped as TermSafe escapes them; so are the characters that reorder or
// hide text (bidi overrides and isolates, zero-width characters, the byte
// order mark) and the Unicode line and paragraph separators, which would
// make one error look like another. A double quote or backslash inside is
// escaped, so the quotes always show where the input starts and ends.
func QuoteInput(s string) string {
	clipped, long := s, ""
	if len(s) > maxQuotedInput {
		cut := maxQuotedInput
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		clipped, long = s[:cut], fmt.Sprintf("… (%d bytes)", len(s))
	}
	return `"` + SafeText(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(clipped)) + `"` + long
}

// SafeText escapes text for an error message or a log line as QuoteInput
// does, without quoting or clipping it: for text that is mostly the
// program's own (an error's message, a path) but may carry bytes from the
// input or the file system. Text with nothing to escape is returned as is.
func SafeText(s string) string {
	s = TermSafe(s)
	if !strings.ContainsFunc(s, hidesText) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidesText(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// hidesText reports whether r changes how the text around it reads without
// showing itself: bidi controls, zero-width characters, the BOM, and the
// line and paragraph separators.
func hidesText(r rune) bool {
	switch {
	case r >= 0x200b && r <= 0x200f, // zero-width space, joiners, LRM, RLM
		r >= 0x2028 && r <= 0x202e, // line/paragraph separators, bidi embeddings and overrides
		r >= 0x2060 && r <= 0x2069, // word joiner, invisible operators, bidi isolates
		r == 0x061c, r == 0xfeff:
		return true
	}
	return false
}
