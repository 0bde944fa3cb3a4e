package pool

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcptrace/mcptrace/spans"
)

// Servers are untrusted. A downstream server chooses every byte of its
// answers: their size, their headers, the text of its errors, its session
// id, the delays it asks for and where it redirects. This file holds the
// pool's one gate for each: server text is scrubbed (secrets redacted,
// then escaped and bounded) by [scrubber] before it enters an error, span
// or log; a session id is checked by [scrubber.checkSessionID]; a delay
// saturates in [parseRetryAfter]; a redirect is decided by
// [watcher.checkRedirect]. Bodies are capped in bodycap.go. A bound broken
// is a breach: the first one is kept on the session's (or the call's)
// [callFaults], the call fails with its typed error and the session is
// dropped.

// maxShownText bounds one server-controlled text (an error's message, a
// span's status) as the pool shows it: long enough for any useful
// message, short enough that a server cannot fill a span store or a log.
const maxShownText = 4096

// maxSessionIDBytes bounds an Mcp-Session-Id: real servers send UUIDs or
// signed tokens of a few hundred bytes; the specification sets no length,
// so the bound is generous, but every span of the session records the id.
const maxSessionIDBytes = 1024

// maxRetryAfter is the longest delay a Retry-After header is read as: a
// day, so a huge or far-future value saturates instead of overflowing
// time.Duration (delay-seconds has no upper bound).
const maxRetryAfter = 24 * time.Hour

// maxRedirects bounds a chain of same-origin redirects, as net/http does.
const maxRedirects = 10

// safeText returns s fit to show anywhere: every byte or rune that is not
// printable (C0 and C1 controls, DEL, invalid UTF-8, and format characters
// such as the bidi override U+202E or the zero-width space) is written as
// a Go escape (\x1b, \u202e), and the result is clipped to limit bytes
// with a marker giving the original length. Printable ASCII within the
// limit, the common case, is returned as is without allocating.
func safeText(s string, limit int) string {
	if len(s) <= limit && printableASCII(s) {
		return s
	}
	marker := fmt.Sprintf("...[clipped, %d bytes in all]", len(s))
	room := limit - len(marker)
	var b strings.Builder
	b.Grow(min(len(s), limit))
	var esc [10]byte
	cut := -1 // where the text stops if it must be clipped
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		piece := s[i : i+size]
		if (r == utf8.RuneError && size == 1) || !strconv.IsPrint(r) {
			piece = string(escapeRune(esc[:0], r, s[i], size))
		}
		if cut < 0 && b.Len()+len(piece) > room {
			cut = b.Len()
		}
		if b.Len()+len(piece) > limit {
			return b.String()[:max(cut, 0)] + marker
		}
		b.WriteString(piece)
		i += size
	}
	return b.String()
}

// printableASCII reports whether every byte of s is in 0x20-0x7E.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// escapeRune appends the Go escape of r (or of the invalid byte c when
// r is utf8.RuneError of size 1) to dst.
func escapeRune(dst []byte, r rune, c byte, size int) []byte {
	const hexDigits = "0123456789abcdef"
	switch {
	case r == utf8.RuneError && size == 1:
		r = rune(c)
		fallthrough
	case r < 0x100 && size == 1:
		return append(dst, '\\', 'x', hexDigits[r>>4], hexDigits[r&0xf])
	case r <= 0xffff:
		dst = append(dst, '\\', 'u')
		for s := 12; s >= 0; s -= 4 {
			dst = append(dst, hexDigits[r>>s&0xf])
		}
		return dst
	}
	dst = append(dst, '\\', 'U')
	for s := 28; s >= 0; s -= 4 {
		dst = append(dst, hexDigits[r>>s&0xf])
	}
	return dst
}

// scrubber is the one gate of server-controlled text on its way to an
// error, a span, a metric or a log: it replaces every secret the pool
// holds for a target (its credential, secret headers and query values,
// and the pool's OAuth tokens) with [REDACTED], then escapes and bounds
// the rest (safeText). Redaction runs first, on the raw text, so a secret
// is found whole before escaping or clipping could split it. It is a
// small value; build it with [Pool.scrubber].
type scrubber struct {
	r     *redactor
	oauth *sharedOAuth // nil without Options.OAuthHandler
}

// scrubber returns the gate of t's text on p.
func (p *Pool) scrubber(t *Target) scrubber { return scrubber{r: &t.redact, oauth: p.oauth} }

// redact returns v with every secret replaced.
func (s scrubber) redact(v string) string {
	v = s.r.String(v)
	if s.oauth != nil {
		v = s.oauth.redact(v)
	}
	return v
}

// text returns v redacted, escaped and bounded.
func (s scrubber) text(v string) string { return safeText(s.redact(v), maxShownText) }

// error returns err with its text scrubbed, keeping the chain for
// errors.Is and errors.As; nil stays nil, and a text already clean
// returns err itself.
func (s scrubber) error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := s.text(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// checkSessionID returns nil for a session id the pool may keep and
// record, else an error wrapping [ErrSessionIDRefused] that does not
// quote the id: one longer than maxSessionIDBytes, with a byte outside
// visible ASCII (0x21-0x7E, the specification's range), or holding a
// secret the pool sends.
func (s scrubber) checkSessionID(id string) error {
	if len(id) > maxSessionIDBytes {
		return fmt.Errorf("%w: %d bytes, over the %d-byte bound", ErrSessionIDRefused, len(id), maxSessionIDBytes)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return fmt.Errorf("%w: byte %d is %#02x, outside visible ASCII (0x21-0x7E)", ErrSessionIDRefused, i, c)
		}
	}
	if s.redact(id) != id {
		return fmt.Errorf("%w: it holds a secret the pool sends to the server", ErrSessionIDRefused)
	}
	return nil
}

// parseRetryAfter reads a Retry-After header (delay-seconds or an HTTP
// date) as a delay that saturates: a value past maxRetryAfter (or too
// large for any integer) is maxRetryAfter; a negative, past or unreadable
// one is 0.
func parseRetryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if strings.Trim(v, "0123456789") == "" {
		secs, err := strconv.ParseInt(v, 10, 64)
		if err != nil || secs > int64(maxRetryAfter/time.Second) { // only ErrRange: all digits
			return maxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), maxRetryAfter) // Until saturates itself
	}
	return 0
}

// breach records err as the first bound the server broke on what f
// watches; later breaches keep the first.
func (f *callFaults) breach(err error) { f.breached.CompareAndSwap(nil, &err) }

// breachErr returns the first breach recorded, or nil.
func (f *callFaults) breachErr() error {
	if p := f.breached.Load(); p != nil {
		return *p
	}
	return nil
}

// breachType is the error.type of a breach in err's chain, or "".
func breachType(err error) string {
	var re *RedirectError
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return spans.ErrTypeResponseTooLarge
	case errors.Is(err, ErrSessionIDRefused):
		return spans.ErrTypeBadSessionID
	case errors.As(err, &re):
		return spans.ErrTypeRedirect
	}
	return ""
}

// sameOrigin reports whether a and b share scheme, host and port (a
// missing port being the scheme's default): the only place a target's
// credential and secret headers may go.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

// portOf is u's port, or its scheme's default.
func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// shownLocation is a redirect's target as errors show it: scheme, host,
// port and path, escaped and bounded, never the query or fragment (signed
// URLs carry credentials there) nor user info.
func shownLocation(u *url.URL) string {
	s := u.Scheme + "://" + u.Host + u.EscapedPath()
	if u.RawQuery != "" || u.ForceQuery {
		s += "?[query not shown]"
	}
	return safeText(s, 256)
}

// checkRedirect is the pool's http.Client's CheckRedirect, the one place
// redirects are decided: one to another origin never, one within the
// endpoint's origin only under Options.FollowSameOriginRedirects and up
// to maxRedirects hops. A refused redirect is recorded as the breach of
// its request's call (or session) and its response handed to the SDK as
// is (http.ErrUseLastResponse), so the error the caller sees is the
// *RedirectError, never net/http's, which would quote the Location whole.
func (w *watcher) checkRedirect(req *http.Request, via []*http.Request) error {
	re := &RedirectError{Location: shownLocation(req.URL)}
	if req.Response != nil {
		re.Status = req.Response.StatusCode
	}
	switch {
	case !sameOrigin(req.URL, w.origin):
		re.CrossOrigin = true
	case !w.followRedirects:
	case len(via) >= maxRedirects:
		re.reason = fmt.Sprintf("stopped after %d redirects", maxRedirects)
	default:
		return nil
	}
	w.sinkFor(req.Context()).breach(re)
	return http.ErrUseLastResponse
}

// guardOrigin refuses a request to another origin than the endpoint's
// before the target's headers are added, so no credential can leave for
// another origin even if a redirect were followed by some other path.
func (w *watcher) guardOrigin(req *http.Request, sink *callFaults) error {
	if sameOrigin(req.URL, w.origin) {
		return nil
	}
	re := &RedirectError{Location: shownLocation(req.URL), CrossOrigin: true}
	if req.Response != nil { // a redirect's hop
		re.Status = req.Response.StatusCode
	}
	sink.breach(re)
	return re
}
