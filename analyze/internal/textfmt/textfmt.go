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
	"unicode"
	"unicode/utf8"
)

// TermSafe makes text that came from a dump (span names, attribute values,
// ids, paths) safe to print on a terminal and honest to read anywhere: it
// is the one rule every human-readable format builds on (table, Markdown,
// HTML, JUnit XML, GitHub annotations). Shown as visible escapes are:
//
//   - every invalid UTF-8 byte, as \xNN;
//   - every control character: C0 and DEL as \xNN, C1 as \u00NN (ESC, BEL
//     and OSC sequences retitle, recolour or hijack a terminal); newlines and
//     tabs too, so one value stays on one line of a table;
//   - every format character (Unicode category Cf: the bidi embeddings,
//     overrides and isolates U+202A–202E and U+2066–2069, the zero-width
//     characters U+200B–200F and U+2060–2064, the byte order mark U+FEFF,
//     the soft hyphen, the Arabic letter mark...), which reorder or hide
//     text so what a reader sees is not what the dump holds;
//   - the line and paragraph separators U+2028 and U+2029 (categories Zl
//     and Zp), which break a line where no newline shows;
//
// as \uNNNN (or \UNNNNNNNN past the BMP). The rule is by category, not a
// list of known-bad characters, so a format character added to Unicode
// later is escaped too.
func TermSafe(s string) string { return visible(s, false) }

// TermSafeLines is TermSafe keeping newlines: for multi-line text whose
// format carries line breaks itself (a JUnit body, an annotation message
// the caller escapes for its runner).
func TermSafeLines(s string) string { return visible(s, true) }

func visible(s string, keepNewlines bool) string {
	if !needsEscape(s, keepNewlines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r) && r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// hidden reports whether r, a rune past ASCII, is a control, format or
// separator character TermSafe shows as an escape.
func hidden(r rune) bool {
	return r >= 0x80 && (unicode.Is(unicode.Cc, r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r))
}

// needsEscape reports whether TermSafe (TermSafeLines with keepNewlines)
// would change s.
func needsEscape(s string, keepNewlines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\n' && keepNewlines {
			i++
			continue
		}
		if c < 0x20 || c == 0x7f {
			return true
		}
		if c < utf8.RuneSelf {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || hidden(r) {
			return true
		}
		i += size
	}
	return false
}

// mdInert backslash-escapes, in one pass, what Markdown (GitHub's
// included) would turn into live markup in a line of text (mdEscapes
// decides each byte). A backslash before ASCII punctuation is
// CommonMark's escape: the character shows and does nothing.
func mdInert(s string) string {
	if !strings.ContainsAny(s, "[]@:.*~`_\\") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		if mdEscapes(s, i) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdEscapes reports whether s[i] needs a backslash before it:
//   - '[' and ']' (links, images, footnotes, reference links) and '@'
//     (email autolinks);
//   - the ':' of "://" (every bare-URL autolink) and of "mailto:" and
//     "xmpp:", and the '.' of "www." (GitHub's www autolinks);
//   - '*', '~' and a backtick (emphasis, strikethrough, code spans), and
//     '_' where it starts or ends a word (GitHub does not emphasise inside
//     a word, so cache_key stays as it is);
//   - a backslash before ASCII punctuation, which would otherwise escape
//     the character after it or pair with the escape added before it,
//     leaving that one raw. A backslash before anything else is shown as
//     it is (TermSafe's \x1b among them).
func mdEscapes(s string, i int) bool {
	switch c := s[i]; c {
	case '[', ']', '@', '*', '~', '`':
		return true
	case ':':
		return strings.HasPrefix(s[i+1:], "//") || hasSuffixFold(s[:i], "mailto") || hasSuffixFold(s[:i], "xmpp")
	case '.':
		return hasSuffixFold(s[:i], "www")
	case '_':
		return i == 0 || i == len(s)-1 || !isWordByte(s[i-1]) || !isWordByte(s[i+1])
	case '\\':
		return i+1 < len(s) && isASCIIPunct(s[i+1])
	}
	return false
}

// hasSuffixFold reports whether s ends with the ASCII word suffix, ignoring
// case.
func hasSuffixFold(s, suffix string) bool {
	return len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix)
}

// mdReplacer escapes what would end a table cell ('|'), open HTML ('<',
// also every <https://...> autolink) or spell an entity ('&', so
// "&#x202E;" from a dump cannot become the character it names).
var mdReplacer = strings.NewReplacer("|", `\|`, "<", "&lt;", "&", "&amp;")

// MDText makes text safe inside a Markdown table row or line: control,
// format and separator characters shown as TermSafe shows them (a newline
// would end the row), '|' escaped so it does not split a cell, '<' and '&'
// as entities so a value cannot open HTML or name a character, and links,
// images and autolinks made inert (mdInert): text from a dump renders as
// the text it is, never as a link, a picture or a tracking pixel.
func MDText(s string) string {
	return mdReplacer.Replace(mdInert(TermSafe(s)))
}

// isWordByte reports whether c is an ASCII letter or digit, or a byte of
// a multi-byte rune (taken as a letter).
func isWordByte(c byte) bool {
	return c >= 0x80 || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// isASCIIPunct reports whether a backslash before c is a Markdown escape:
// CommonMark escapes ASCII punctuation only.
func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// MDCode makes text safe inside a Markdown code span in a table row or
// line: control bytes escaped, '|' escaped (GitHub splits cells on it even
// in code), and a backtick, which would end the span, replaced by a quote.
// '<' stays: a code span shows it as is.
func MDCode(s string) string {
	return strings.NewReplacer("|", `\|`, "`", "'").Replace(TermSafe(s))
}

// ClipTo shortens s to n runes, the last an ellipsis: the visible mark of
// a clipped cell. It reads at most n runes of s, so clipping a value of
// megabytes costs nothing.
func ClipTo(s string, n int) string {
	if n < 1 {
		n = 1
	}
	cut, runes := 0, 0
	for cut < len(s) && runes < n-1 {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
		runes++
	}
	// s fits when at most one rune is left after the first n-1.
	if _, size := utf8.DecodeRuneInString(s[cut:]); cut+size >= len(s) {
		return s
	}
	return s[:cut] + "…"
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

// maxPercentDecimals bounds the decimals Percent adds to keep a ratio off
// 0% and 100%: past it the figure says "<0.0001%" or ">99.9999%".
const maxPercentDecimals = 4

// Percent draws a ratio as a percentage with one decimal (83.3%), or with
// as many more (up to four) as it takes never to round a ratio above 0 to
// "0.0%" or one below 1 to "100.0%": a ceiling of 99.975% reads "99.98%",
// a floor of 0.025% "0.03%" (a cold start in 4000 acquires is not none).
// Past four decimals it reads "<0.0001%" or ">99.9999%". The HTML report's
// script draws percentages by the same rule (pct in report.js).
func Percent(ratio float64) string {
	v := ratio * 100
	for d := 1; d <= maxPercentDecimals; d++ {
		s := strconv.FormatFloat(v, 'f', d, 64)
		f, _ := strconv.ParseFloat(s, 64)
		if (f == 0 && v > 0) || (f == 100 && v < 100) {
			continue
		}
		return s + "%"
	}
	if v < 50 {
		return "<0." + strings.Repeat("0", maxPercentDecimals-1) + "1%"
	}
	return ">99." + strings.Repeat("9", maxPercentDecimals) + "%"
}

// Count draws a whole number with a comma between groups of three digits
// (3,584; -1,000), as the HTML report draws counts (num in report.js).
func Count(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
