package pool

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrPoolClosed is returned by acquires on a closed pool.
	ErrPoolClosed = errors.New("pool: closed")
	// ErrSessionExpired means the server answered HTTP 404 to a request that
	// carried a session id: it no longer knows the session. A session (reused
	// or fresh) that fails this way is redialed once by CallTool; the error reaches the
	// caller only when the redial fails too or the lease was managed by hand.
	ErrSessionExpired = errors.New("pool: downstream session expired")
	// ErrSessionRejected means the server answered HTTP 400 to a request that
	// carried a session id. Some servers answer an unknown session this way
	// instead of 404; the session is dropped but the call is not retried,
	// because a 400 does not prove the tool did not run.
	ErrSessionRejected = errors.New("pool: downstream server rejected the session with HTTP 400 (dropped, not retried)")
	// ErrCircuitOpen means the key's circuit breaker is open: its last
	// dials failed (Options.BreakerThreshold in a row), so acquires that
	// would dial fail fast until Options.BreakerCooldown has passed. The
	// error is a *CircuitOpenError naming the key hash and when the next
	// trial dial may be made.
	ErrCircuitOpen = errors.New("pool: circuit open")
	// ErrAcquireTimeout means an acquire waited Options.AcquireTimeout for
	// its key to drop below Options.MaxInUsePerKey and gave up.
	ErrAcquireTimeout = errors.New("pool: timed out waiting for a session (in-use cap)")
	// ErrResponseTooLarge means the server sent a body, or one event of an
	// SSE stream, longer than Options.MaxResponseBytes once decoded. The
	// pool stops reading at the cap, so a server cannot make it buffer
	// more; the session is dropped and the call is not retried, because
	// the tool may have run.
	ErrResponseTooLarge = errors.New("pool: downstream response over Options.MaxResponseBytes (session dropped, not retried)")
	// ErrSessionIDRefused means the server issued an Mcp-Session-Id the
	// pool refuses: longer than 1024 bytes, a byte outside visible ASCII
	// (0x21-0x7E, as the MCP specification requires), or a value holding a
	// secret the pool sends (a server echoing the bearer token as its
	// session id would otherwise have the pool write the token into every
	// span). The answer carrying it is discarded, so the id is never
	// recorded; the session is dropped and the call is not retried.
	ErrSessionIDRefused = errors.New("pool: downstream Mcp-Session-Id refused (session dropped, not retried)")
)

// RedirectError reports a redirect the pool did not follow. An MCP endpoint
// that moves is a configuration change, so by default no redirect is
// followed; Options.FollowSameOriginRedirects follows those that stay on
// the endpoint's origin (scheme, host and port). A redirect to another
// origin is never followed: the target's credential and secret headers are
// for its own origin only. The session is dropped and the call is not
// retried.
type RedirectError struct {
	// Status is the HTTP status of the redirect (301, 302, 303, 307, 308);
	// 0 for a request to another origin refused before it was sent.
	Status int
	// Location is where the server pointed, as scheme://host:port/path,
	// escaped and bounded: the query and fragment are never kept (signed
	// URLs carry credentials there).
	Location string
	// CrossOrigin is true when Location is on another origin.
	CrossOrigin bool
	// reason is set for a same-origin redirect refused for another cause
	// than the option (too many hops).
	reason string
}

// Error implements error.
func (e *RedirectError) Error() string {
	what := fmt.Sprintf("downstream answered HTTP %d redirecting to %s", e.Status, e.Location)
	if e.Status == 0 {
		what = "request to " + e.Location + " refused"
	}
	switch {
	case e.CrossOrigin:
		return what + ": another origin than the endpoint's: never followed, and no credential is sent there; update the target's endpoint"
	case e.reason != "":
		return what + ": not followed: " + e.reason
	}
	return what + ": redirects are not followed (Options.FollowSameOriginRedirects is off); update the target's endpoint"
}

// errNotSent marks a call refused before anything was sent, because its
// context was already done: the session is untouched and stays pooled.
var errNotSent = errors.New("pool: request not sent")

// HTTPStatusError reports a non-2xx HTTP answer from the downstream server
// during a handshake or a call. RetryAfter carries the server's Retry-After
// header when it sent one, so callers can back off as asked.
type HTTPStatusError struct {
	// Status is the HTTP status code.
	Status int
	// RetryAfter is the delay the server asked for, or zero. It
	// saturates: a delay over 24 hours (or too large to represent) reads
	// as 24 hours, and a negative, past or unreadable one as zero, so a
	// caller backing off as asked never waits forever or not at all by
	// overflow.
	RetryAfter time.Duration
	// SessionBound is true when the failing request carried a session id.
	SessionBound bool
}

// Error implements error.
func (e *HTTPStatusError) Error() string {
	s := fmt.Sprintf("downstream answered HTTP %d", e.Status)
	if e.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	return s
}

// GoString keeps %#v, which would otherwise dump the struct with its
// headers and raw endpoint, from printing a secret: it shows what String
// does, plus the key.
func (t *Target) GoString() string {
	return fmt.Sprintf("pool.Target{Endpoint: %q, Key: %q}", t.shown, t.key)
}

// redactor holds a target's secret values and replaces them in text, so
// that an SDK error quoting a URL with a query credential, or a header
// echoed back by a server, never carries the secret to a caller, span or
// log. It is used through [scrubber], the one gate of server text.
type redactor struct {
	secrets []string
}

const redacted = "[REDACTED]"

// String returns s with every secret replaced.
func (r *redactor) String(s string) string {
	for _, sec := range r.secrets {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, redacted)
		}
	}
	return s
}

// redactedError wraps an error whose text has been scrubbed (see scrubber). It
// keeps the chain for errors.Is and errors.As on sentinels and types.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
