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
)

// errNotSent marks a call refused before anything was sent, because its
// context was already done: the session is untouched and stays pooled.
var errNotSent = errors.New("pool: request not sent")

// HTTPStatusError reports a non-2xx HTTP answer from the downstream server
// during a handshake or a call. RetryAfter carries the server's Retry-After
// header when it sent one, so callers can back off as asked.
type HTTPStatusError struct {
	// Status is the HTTP status code.
	Status int
	// RetryAfter is the delay the server asked for, or zero.
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

// redactor replaces a target's secret values in error text, so that an SDK
// error quoting a URL with a query credential, or a header echoed back by a
// server, never carries the secret to a caller, span or log.
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

// redactedError wraps an error whose text has been scrubbed of secrets. It
// keeps the chain for errors.Is and errors.As on sentinels and types.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Error returns err with secrets removed from its text, or nil.
func (r *redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := r.String(msg)
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}
