package textfmt

import (
	"strings"
	"testing"
)

// TestEscapingKeepsDumpTextInert pins what the reports print of text from
// a dump: no control byte reaches a terminal, a Markdown cell stays one
// cell, and a code span cannot be closed early.
func TestEscapingKeepsDumpTextInert(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
		esc            func(string) string
	}{
		{"plain text is kept", "pool-1", "pool-1", TermSafe},
		{"ESC and BEL are shown, not sent", "a\x1b]0;x\x07b", `a\x1b]0;x\x07b`, TermSafe},
		{"C1 controls are shown", "a\u009bb", `a\u009bb`, TermSafe},
		{"invalid UTF-8 is shown", "a\xffb", `a\xffb`, TermSafe},
		{"a newline stays on the line", "a\nb", `a\x0ab`, TermSafe},
		{"a pipe does not split a Markdown cell", "a|b<c", `a\|b&lt;c`, MDText},
		{"a backtick does not end a code span", "a`b|c", `a'b\|c`, MDCode},
	} {
		if got := c.esc(c.in); got != c.want {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// TestClippingAndFigures pins the small renderings the reports share.
func TestClippingAndFigures(t *testing.T) {
	if got := ClipTo("abcdef", 4); got != "abc…" {
		t.Errorf("ClipTo = %q", got)
	}
	if got := ClipTo("abc", 4); got != "abc" {
		t.Errorf("ClipTo of a short text = %q", got)
	}
	long := strings.Repeat("é", 100)
	if got := ClipInput(long); !strings.HasSuffix(got, "… (200 bytes)") || len(got) > 100 {
		t.Errorf("ClipInput = %q", got)
	}
	for in, want := range map[float64]string{3: "3", 0.25: "0.25", -2: "-2"} {
		if got := Figure(in); got != want {
			t.Errorf("Figure(%v) = %q, want %q", in, got, want)
		}
	}
	if got := Round4(0.123456); got != 0.1235 {
		t.Errorf("Round4 = %v", got)
	}
	if got := Wrap("aaa bbb ccc", 7); len(got) != 2 || got[1] != "  ccc" {
		t.Errorf("Wrap = %q", got)
	}
}
