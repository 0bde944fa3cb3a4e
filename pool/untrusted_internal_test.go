package pool

import (
	"errors"
	"strings"
	"testing"
)

// safeText escapes what is not printable and clips at its limit: text of
// exactly the limit is kept whole, one byte more is clipped to at most
// the limit with a marker giving the original length; escapes count
// toward the limit as written.
func TestSafeTextEscapesAndClipsAtItsLimit(t *testing.T) {
	const limit = 64
	exact := strings.Repeat("a", limit)
	for _, c := range []struct {
		name, in, want string
	}{
		{"printable ASCII is kept", "plain text: ok", "plain text: ok"},
		{"ESC, NUL and DEL are escaped", "a\x1b[2Jb\x00c\x7f", `a\x1b[2Jb\x00c\x7f`},
		{"a line break is escaped", "a\nb\r", `a\x0ab\x0d`},
		{"a C1 control is escaped", "a\u0085b", `a\u0085b`},
		{"a bidi override and a zero-width space are escaped", "a\u202eb\u200b", `a\u202eb\u200b`},
		{"an invalid UTF-8 byte is escaped", "a\x9bb\xff", `a\x9bb\xff`},
		{"printable non-ASCII is kept", "café ✓", "café ✓"},
		{"exactly the limit is kept whole", exact, exact},
		{"one byte over the limit is clipped", exact + "b", strings.Repeat("a", limit-len("...[clipped, 65 bytes in all]")) + "...[clipped, 65 bytes in all]"},
		{"an escape that would pass the limit is clipped whole", strings.Repeat("a", limit-2) + "\x1b", strings.Repeat("a", limit-len("...[clipped, 63 bytes in all]")) + "...[clipped, 63 bytes in all]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := safeText(c.in, limit)
			if got != c.want {
				t.Fatalf("safeText(%q) = %q, want %q", c.in, got, c.want)
			}
			if len(got) > limit {
				t.Fatalf("%d bytes, over the limit %d", len(got), limit)
			}
		})
	}
}

// The scrubber redacts before it escapes and clips: a secret is found
// whole however the text around it is escaped, and a secret at the
// clipping point never shows in part.
func TestScrubberRedactsBeforeItEscapesAndClips(t *testing.T) {
	const secret = "tok-s3cr3t-9"
	s := scrubber{r: &redactor{secrets: []string{secret}}}
	for _, in := range []string{
		"\x1b" + secret + "\x1b",
		// The clipping point (the limit less the marker's 31 bytes for a
		// 4-digit length) falls 6 bytes into the secret.
		strings.Repeat("x", maxShownText-31-6) + secret + strings.Repeat("y", 100),
	} {
		got := s.text(in)
		if strings.Contains(got, secret[:6]) {
			t.Errorf("text(%.40q...) = ...%q: shows the secret or part of it", in, got[max(0, len(got)-80):])
		}
	}
}

// checkSessionID accepts visible ASCII up to maxSessionIDBytes and
// refuses one byte more, any byte outside 0x21-0x7E, and a secret, with
// an error that never quotes the id.
func TestCheckSessionIDBounds(t *testing.T) {
	s := scrubber{r: &redactor{secrets: []string{"bearer-s3cr3t"}}}
	for _, c := range []struct {
		name, id string
		ok       bool
	}{
		{"exactly the bound", strings.Repeat("!", maxSessionIDBytes), true},
		{"one byte over the bound", strings.Repeat("~", maxSessionIDBytes+1), false},
		{"the lowest visible byte", "\x21", true},
		{"a space", "a b", false},
		{"DEL", "a\x7f", false},
		{"a byte over 0x7E", "a\x80", false},
		{"a secret inside", "x-bearer-s3cr3t-y", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := s.checkSessionID(c.id)
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrSessionIDRefused)) {
				t.Fatalf("checkSessionID = %v, want ok %v", err, c.ok)
			}
			if err != nil && len(c.id) > 2 && strings.Contains(err.Error(), c.id) {
				t.Fatalf("the error quotes the id: %v", err)
			}
		})
	}
}
