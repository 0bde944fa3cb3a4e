package textfmt

import (
	"errors"
	"strings"
	"testing"
)

// TestTermSafeEscapesEachClassAtItsEdge pins every class TermSafe and
// TermSafeLines show as an escape, at the edge of the class: the last byte
// before and the first byte of each range (0x1f and 0x20, DEL, a lone 0x80,
// the last BMP rune and the first astral one), and each Unicode category of
// the rule (Cc past ASCII, Cf, Zl, Zp) on its own, so dropping one category
// or one bound from the rule shows. Each input runs through both the escape
// and its fast path (needsEscape), since a fast path that says "nothing to
// escape" wrongly returns the raw text.
func TestTermSafeEscapesEachClassAtItsEdge(t *testing.T) {
	for _, c := range []struct {
		name       string
		in         string
		want       string // TermSafe
		wantLines  string // TermSafeLines
		unchanged  bool   // TermSafe returns in as is
		lnUnchange bool   // TermSafeLines returns in as is
	}{
		{name: "a space is printable", in: "a b", want: "a b", wantLines: "a b", unchanged: true, lnUnchange: true},
		{name: "0x1f is a control", in: "a\x1fb", want: `a\x1fb`, wantLines: `a\x1fb`},
		{name: "DEL alone is a control", in: "a\x7fb", want: `a\x7fb`, wantLines: `a\x7fb`},
		{name: "a tab is shown", in: "\t", want: `\x09`, wantLines: `\x09`},
		{name: "a newline is kept by TermSafeLines only", in: "a\nb", want: `a\x0ab`, wantLines: "a\nb", lnUnchange: true},
		{name: "a control after a kept newline is still shown", in: "a\n\x1b", want: `a\x0a\x1b`, wantLines: "a\n\\x1b"},
		{name: "a lone continuation byte 0x80 is invalid", in: "a\x80b", want: `a\x80b`, wantLines: `a\x80b`},
		{name: "a lone 0xff is invalid", in: "\xff", want: `\xff`, wantLines: `\xff`},
		{name: "a real U+FFFD is text, not an invalid byte", in: "a\uFFFDb", want: "a\uFFFDb", wantLines: "a\uFFFDb", unchanged: true, lnUnchange: true},
		{name: "a printable non-ASCII letter is kept", in: "é ü", want: "é ü", wantLines: "é ü", unchanged: true, lnUnchange: true},
		{name: "a C1 control (Cc past ASCII) is shown", in: "\u0085", want: `\u0085`, wantLines: `\u0085`},
		{name: "U+0080, the first rune past ASCII, is a C1 control", in: "a\u0080b", want: `a\u0080b`, wantLines: `a\u0080b`},
		{name: "a printable astral rune beside an escape is kept", in: "\x1b😀", want: `\x1b😀`, wantLines: `\x1b😀`},
		{name: "a bidi override (Cf) is shown", in: "a\u202Eb", want: `a\u202eb`, wantLines: `a\u202eb`},
		{name: "a zero-width space (Cf) is shown", in: "\u200B", want: `\u200b`, wantLines: `\u200b`},
		{name: "the line separator (Zl) is shown", in: "a\u2028b", want: `a\u2028b`, wantLines: `a\u2028b`},
		{name: "the paragraph separator (Zp) is shown", in: "a\u2029b", want: `a\u2029b`, wantLines: `a\u2029b`},
		{name: "the last BMP rune U+FFFF is not hidden", in: "\uFFFF", want: "\uFFFF", wantLines: "\uFFFF", unchanged: true, lnUnchange: true},
		{name: "a printable astral rune is kept", in: "a😀b", want: "a😀b", wantLines: "a😀b", unchanged: true, lnUnchange: true},
		{name: "an astral format character is shown with \\U", in: "a\U000E0001b", want: `a\U000e0001b`, wantLines: `a\U000e0001b`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := TermSafe(c.in); got != c.want {
				t.Errorf("TermSafe(%q) = %q, want %q", c.in, got, c.want)
			}
			if got := TermSafeLines(c.in); got != c.wantLines {
				t.Errorf("TermSafeLines(%q) = %q, want %q", c.in, got, c.wantLines)
			}
			if got := needsEscape(c.in, false); got == c.unchanged {
				t.Errorf("needsEscape(%q, false) = %v, want %v", c.in, got, !c.unchanged)
			}
			if got := needsEscape(c.in, true); got == c.lnUnchange {
				t.Errorf("needsEscape(%q, true) = %v, want %v", c.in, got, !c.lnUnchange)
			}
			if got := SafeText(c.in); got != c.want {
				t.Errorf("SafeText(%q) = %q, want %q (SafeText is TermSafe)", c.in, got, c.want)
			}
		})
	}
}

// TestMarkdownEscapesMakeLinksInert pins each piece of markup MDText makes
// inert, and the text just short of it that must stay as it is: a scheme
// without "//", a word ending in "mailto" shorter than it, "www" without
// its dot.
func TestMarkdownEscapesMakeLinksInert(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"text with no markup is kept", "pool-1 ok", "pool-1 ok"},
		{"brackets and at are escaped", "[x](y) a@b", `\[x\](y) a\@b`},
		{"a closing bracket alone is escaped", "a]b", `a\]b`},
		{"an at alone is escaped", "a@b", `a\@b`},
		{"the colon of :// is escaped", "http://x", `http\://x`},
		{"a colon without // is kept", "key: value", "key: value"},
		{"a colon followed by one slash is kept", "a:/b", "a:/b"},
		{"mailto: is escaped", "mailto:x", `mailto\:x`},
		{"MAILTO: in any case is escaped", "MailTo:x", `MailTo\:x`},
		{"xmpp: is escaped", "xmpp:x", `xmpp\:x`},
		{"a colon after a word shorter than mailto is kept", "to:x", "to:x"},
		{"a colon after ailto is kept", "ailto:x", "ailto:x"},
		{"www. is escaped", "www.example", `www\.example`},
		{"a dot after ww is kept", "ww.x", "ww.x"},
		{"a dot elsewhere is kept", "a.b", "a.b"},
		{"a pipe, a tag and an entity", "a|<b>&#x202E;", `a\|&lt;b>&amp;#x202E;`},
		{"a control is shown before Markdown escaping", "a\x1b[b", `a\x1b\[b`},
	} {
		if got := MDText(c.in); got != c.want {
			t.Errorf("%s: MDText(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
	for _, c := range []struct{ suffix, s string }{{"mailto", "mailto"}, {"mailto", "xmailto"}, {"www", "WWW"}} {
		if !hasSuffixFold(c.s, c.suffix) {
			t.Errorf("hasSuffixFold(%q, %q) = false, want true", c.s, c.suffix)
		}
	}
	for _, c := range []struct{ suffix, s string }{{"mailto", "ailto"}, {"mailto", ""}, {"www", "wwx"}} {
		if hasSuffixFold(c.s, c.suffix) {
			t.Errorf("hasSuffixFold(%q, %q) = true, want false", c.s, c.suffix)
		}
	}
}

// TestClipToCutsOnlyWhatDoesNotFit pins ClipTo at the exact fit (n runes
// kept whole), one rune over (clipped to n-1 and the ellipsis), multi-byte
// runes, and n below 1.
func TestClipToCutsOnlyWhatDoesNotFit(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"abcd", 4, "abcd"},
		{"abcde", 4, "abc…"},
		{"abc", 4, "abc"},
		{"", 4, ""},
		{"éééé", 4, "éééé"},
		{"ééééé", 4, "ééé…"},
		{"ab", 1, "…"},
		{"a", 1, "a"},
		{"ab", 0, "…"},
		{"ab", -3, "…"},
		{"ab", 2, "ab"},
		{"abc", 2, "a…"},
	} {
		if got := ClipTo(c.in, c.n); got != c.want {
			t.Errorf("ClipTo(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

// TestWrapBreaksAtTheWidth pins Wrap at the exact width (a line of exactly
// width runes stays one line), one over, runes counted (not bytes), a word
// longer than the width, and empty text (no lines).
func TestWrapBreaksAtTheWidth(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  []string
	}{
		{"aaa bbb", 7, []string{"aaa bbb"}},
		{"aaa bbbb", 7, []string{"aaa", "  bbbb"}},
		{"ééé ééé", 7, []string{"ééé ééé"}},
		{"aaaaaaaaaa b", 4, []string{"aaaaaaaaaa", "  b"}},
		{"a b c", 3, []string{"a b", "  c"}},
		{"", 7, nil},
		{"   ", 7, nil},
	} {
		got := Wrap(c.in, c.width)
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") || len(got) != len(c.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// failingWriter fails every write after the first ok writes.
type failingWriter struct {
	ok     int
	writes int
	got    strings.Builder
}

var errDiskFull = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.writes > w.ok {
		return 0, errDiskFull
	}
	return w.got.Write(p)
}

// TestErrWriterStopsAtTheFirstError pins that ErrWriter passes writes
// through until one fails, keeps that error, and writes nothing after it.
func TestErrWriterStopsAtTheFirstError(t *testing.T) {
	w := &failingWriter{ok: 1}
	e := &ErrWriter{W: w}
	if n, err := e.Write([]byte("one")); n != 3 || err != nil {
		t.Fatalf("first write = %d, %v; want 3, nil", n, err)
	}
	if e.Err != nil {
		t.Fatalf("Err after a good write = %v", e.Err)
	}
	if _, err := e.Write([]byte("two")); !errors.Is(err, errDiskFull) {
		t.Fatalf("second write err = %v, want disk full", err)
	}
	if n, err := e.Write([]byte("three")); n != 0 || !errors.Is(err, errDiskFull) {
		t.Fatalf("write after the failure = %d, %v; want 0, disk full", n, err)
	}
	if w.writes != 2 || w.got.String() != "one" || !errors.Is(e.Err, errDiskFull) {
		t.Errorf("writes %d, written %q, Err %v: want 2 writes, %q, disk full", w.writes, w.got.String(), e.Err, "one")
	}
}

// TestFigureShowsIntegersWithoutDecimals pins Figure on integers, fractions
// and values next to an integer.
func TestFigureShowsIntegersWithoutDecimals(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 1: "1", 1.5: "1.5", 0.999: "0.999", -0.5: "-0.5", 1e6: "1000000"} {
		if got := Figure(in); got != want {
			t.Errorf("Figure(%v) = %q, want %q", in, got, want)
		}
	}
}

// TestQuotedInputIsClippedAtItsLimit pins ClipInput and QuoteInput at the
// limit: exactly maxQuotedInput bytes kept whole, one more clipped; the cut
// moved back to a rune start; and input with no rune start at all (only
// continuation bytes), which must clip to nothing rather than index before
// the start.
func TestQuotedInputIsClippedAtItsLimit(t *testing.T) {
	exact := strings.Repeat("a", maxQuotedInput)
	over := exact + "b"
	cont := strings.Repeat("\x80", maxQuotedInput+20)
	// 79 ASCII bytes then a 2-byte rune straddling the limit.
	straddle := strings.Repeat("a", maxQuotedInput-1) + "é" + "zz"
	for _, c := range []struct {
		name, in, clip, quote string
	}{
		{"exactly the limit is kept", exact, exact, `"` + exact + `"`},
		{"one byte over is clipped", over, exact + "… (81 bytes)", `"` + exact + `"… (81 bytes)`},
		{"a rune across the limit is cut before it", straddle, strings.Repeat("a", maxQuotedInput-1) + "… (83 bytes)", `"` + strings.Repeat("a", maxQuotedInput-1) + `"… (83 bytes)`},
		{"only continuation bytes clip to nothing", cont, "… (100 bytes)", `""… (100 bytes)`},
		{"quotes and backslashes are escaped", `a"b\c`, `a"b\c`, `"a\"b\\c"`},
		{"a control is shown", "a\x1b", "a\x1b", `"a\x1b"`},
	} {
		if got := ClipInput(c.in); got != c.clip {
			t.Errorf("%s: ClipInput = %q, want %q", c.name, got, c.clip)
		}
		if got := QuoteInput(c.in); got != c.quote {
			t.Errorf("%s: QuoteInput = %q, want %q", c.name, got, c.quote)
		}
	}
}

// TestMarkdownEscapesEmphasisCodeAndBackslashes pins the markup MDText
// escapes besides links: what would open emphasis, strikethrough or a
// code span, '_' only at a word's edge (GitHub does not emphasise inside
// a word), and a backslash before ASCII punctuation, which would escape
// the next character or pair with an escape MDText adds and leave that
// one raw; a backslash before anything else is kept.
func TestMarkdownEscapesEmphasisCodeAndBackslashes(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"stars are escaped", "**bold**", `\*\*bold\*\*`},
		{"a backtick is escaped", "a`b`", "a\\`b\\`"},
		{"a tilde is escaped", "~~gone~~", `\~\~gone\~\~`},
		{"an underscore inside a word is kept", "cache_key", "cache_key"},
		{"an underscore at a word's start is escaped", "_x", `\_x`},
		{"an underscore at a word's end is escaped", "x_", `x\_`},
		{"an underscore before a space is escaped", "a_ b", `a\_ b`},
		{"an underscore between runes is kept", "é_é", "é_é"},
		{"a backslash before a letter is kept", `a\x`, `a\x`},
		{"a backslash at the end is kept", `a\`, `a\`},
		{"a backslash before a bracket cannot unescape it", `\[x\](y)`, `\\\[x\\\](y)`},
		{"a backslash before a star is escaped too", `\*`, `\\\*`},
		{"a backslash before a pipe is escaped", `a\|b`, `a\\\|b`},
		{"two backslashes render as two", `\\`, `\\\`},
	} {
		if got := MDText(c.in); got != c.want {
			t.Errorf("%s: MDText(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}
