package backend

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// ClientOptions configures a Client. Credentials come from the
// environment or a file, never from a value on the command line, where
// any user of the machine reads them in ps.
type ClientOptions struct {
	// URL is the backend's base URL, e.g. http://127.0.0.1:16686. It must
	// carry no user or password: see Credentials.
	URL string
	// Header is a request header sent with every request (an API key's
	// "X-Api-Key: ..." or "Authorization: Bearer ..."), or "" for none;
	// read it with [ReadCredential].
	Header string
	// CAFile names a PEM file of the certificate authorities an https
	// backend's certificate must chain to; "" trusts the system's.
	CAFile string
	// Timeout bounds each request, retries aside; 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times a request answered 429 or 5xx is tried
	// again; 0 means DefaultRetries, a negative value none.
	Retries int
	// UserAgent names the client in the backend's logs.
	UserAgent string
}

// Defaults of ClientOptions.
const (
	DefaultTimeout = 30 * time.Second
	DefaultRetries = 4
)

// Backoff bounds: the first retry waits about minBackoff, each later one
// twice as long, at most maxBackoff (a Retry-After above it is honoured
// up to maxRetryAfter).
const (
	minBackoff    = 200 * time.Millisecond
	maxBackoff    = 5 * time.Second
	maxRetryAfter = 30 * time.Second
)

// Client makes bounded GET requests to one backend: every answer read to
// at most a limit, retried with backoff on 429 and 5xx only and never
// past the context's deadline, its credential sent to that backend only
// (a redirect to another origin is refused, not followed), and every
// error naming the URL without credentials and the status.
type Client struct {
	base    *url.URL
	header  [2]string // name, value; name "" for none
	http    *http.Client
	retries int
	agent   string
	sleep   func(ctx context.Context, d time.Duration) error // the clock, replaced by tests
}

// NewClient checks opts and returns a Client. A URL with credentials in
// it, a header that is not "Name: value", or a CA file that holds no
// certificate is an error.
func NewClient(opts ClientOptions) (*Client, error) {
	base, err := parseBase(opts.URL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base, retries: opts.Retries, agent: opts.UserAgent, sleep: sleepCtx}
	if c.retries == 0 {
		c.retries = DefaultRetries
	}
	if opts.Header != "" {
		name, value, ok := strings.Cut(opts.Header, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return nil, errors.New("credential header: want one line \"Name: value\", e.g. \"Authorization: Bearer TOKEN\"")
		}
		c.header = [2]string{name, value}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // a proxy from the environment would see the credential
	if opts.CAFile != "" {
		pool, err := readCAFile(opts.CAFile)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c.http = &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: c.sameOrigin}
	return c, nil
}

// parseBase parses a backend's base URL: http or https, a host, no
// credentials, no query or fragment.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(raw, "/"))
	if err != nil {
		if strings.Contains(raw, "@") {
			return nil, fmt.Errorf("backend URL %s: %s", Redact(raw), credentialsInURL)
		}
		return nil, fmt.Errorf("backend URL %s: %w", Redact(raw), errors.Unwrap(err))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("backend URL %s: want http:// or https://", Redact(raw))
	case u.Host == "":
		return nil, fmt.Errorf("backend URL %s: no host", Redact(raw))
	case u.User != nil, strings.Contains(u.Path, "@"):
		return nil, fmt.Errorf("backend URL %s: %s", Redact(raw), credentialsInURL)
	case u.RawQuery != "" || u.ForceQuery:
		return nil, fmt.Errorf("backend URL %s: give the base URL, without a query (a token in it would show in ps and in logs: put it in the environment or a file instead)", Redact(raw))
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return nil, fmt.Errorf("backend URL %s: give the base URL, without a fragment (#...)", Redact(raw))
	}
	return u, nil
}

// credentialsInURL is the refusal of a URL with user information in it:
// an "@" anywhere before its query reads as such, in the path too (where
// a password with a "/" in it puts it).
const credentialsInURL = "credentials in a URL show in ps and in logs: put them in the environment or a file instead (an @ anywhere before the query reads as credentials)"

// Redact returns raw fit for a message or a report: without user
// information, query or fragment, any of which may hold a secret. It is
// the one way a backend's URL is shown. It works on the text, whether
// or not it parses, and drops everything after the scheme up to the last
// "@" before the query: a password with a "/" in it ends there.
func Redact(raw string) string {
	shown := redactText(raw)
	if _, err := url.Parse(raw); err != nil {
		return textfmt.QuoteInput(shown)
	}
	return textfmt.TermSafe(shown)
}

// redactURL is Redact of a parsed URL.
func redactURL(u *url.URL) string { return Redact(u.String()) }

// redactText strips a URL's text of its query and fragment, and of
// everything after the scheme up to the last "@" left.
func redactText(s string) string {
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	prefix, rest := "", s
	if i := strings.Index(s, "://"); i >= 0 {
		prefix, rest = s[:i+3], s[i+3:]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return prefix + rest
}

// readCAFile reads a PEM bundle of certificate authorities.
func readCAFile(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("CA file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("CA file %s: no PEM certificate in it", textfmt.QuoteInput(path))
	}
	return pool, nil
}

// sameOrigin refuses a redirect to another scheme, host or port: the
// credential header would go with it (net/http drops Authorization
// across hosts, but not an API key's own header).
func (c *Client) sameOrigin(req *http.Request, via []*http.Request) error {
	if req.URL.Scheme != c.base.Scheme || req.URL.Host != c.base.Host {
		return fmt.Errorf("%w: %s redirected to %s, another origin: not followed, so the credential stays with the backend",
			ErrRedirect, redactURL(c.base), Redact(req.URL.String()))
	}
	if len(via) >= 5 {
		return fmt.Errorf("%w: more than 5 redirects from %s", ErrRedirect, redactURL(c.base))
	}
	return nil
}

// ErrRedirect is wrapped by the error of a request redirected off the
// backend's origin, or too many times.
var ErrRedirect = errors.New("redirect refused")

// StatusError is a backend's answer other than 200 that a retry cannot
// mend (or that retries did not): its URL as Redact shows it, the status
// and the start of the body, made safe for a terminal.
type StatusError struct {
	URL    string
	Status int
	Body   string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s answered %d %s", e.URL, e.Status, http.StatusText(e.Status))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// retryable reports whether a status is worth another try: the backend
// is busy (429) or failed (5xx); anything else would fail the same way.
func retryable(status int) bool { return status == http.StatusTooManyRequests || status >= 500 }

// get requests path with query q and returns the body of a 200, at most
// limit bytes long (a longer one is ErrTooLarge). A 429 or 5xx is tried
// again after a backoff, while the context's deadline allows the wait.
func (c *Client) get(ctx context.Context, path string, q url.Values, limit int64) ([]byte, error) {
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + path
	u.RawQuery = q.Encode()
	for attempt := 0; ; attempt++ {
		body, status, wait, err := c.once(ctx, &u, limit)
		if err == nil || status == 0 || !retryable(status) || attempt >= c.retries {
			return body, err
		}
		if wait == 0 {
			wait = backoff(attempt)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fmt.Errorf("%w (no retry: the next would wait %v, past the deadline)", err, wait.Round(time.Millisecond))
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("%s: %w", redactURL(&u), err)
		}
	}
}

// once makes one request: the body of a 200, or the error with the
// status (0 for no answer) and the wait a Retry-After asked for.
func (c *Client) once(ctx context.Context, u *url.URL, limit int64) ([]byte, int, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", redactURL(u), err)
	}
	req.Header.Set("Accept", "application/json")
	if c.agent != "" {
		req.Header.Set("User-Agent", c.agent)
	}
	if c.header[0] != "" {
		req.Header.Set(c.header[0], c.header[1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: %w", redactURL(u), unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		head, _ := io.ReadAll(io.LimitReader(resp.Body, 512+int64(len(c.header[1])))) // a credential echoed across the cut is still whole
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))                 // let the connection be reused
		return nil, resp.StatusCode, retryAfter(resp.Header.Get("Retry-After")),
			&StatusError{URL: redactURL(u), Status: resp.StatusCode, Body: c.scrub(head)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s: reading the answer: %w", redactURL(u), err)
	}
	if int64(len(body)) > limit {
		return nil, 0, 0, fmt.Errorf("%s: %w (%d bytes)", redactURL(u), ErrTooLarge, limit)
	}
	return body, resp.StatusCode, 0, nil
}

// scrub makes the start of an error's body fit for a message: the
// credential removed wherever the backend echoed it, made safe for a
// terminal, clipped.
func (c *Client) scrub(body []byte) string {
	s := strings.TrimSpace(string(body))
	if v := c.header[1]; v != "" {
		s = strings.ReplaceAll(s, v, "[credential]")
		if _, tok, ok := strings.Cut(v, " "); ok && len(tok) >= 8 {
			s = strings.ReplaceAll(s, tok, "[credential]") // a bearer token echoed alone
		}
	}
	return textfmt.ClipTo(textfmt.TermSafe(s), 200)
}

// ErrTooLarge is wrapped by the error of an answer longer than the limit
// a request was given.
var ErrTooLarge = errors.New("answer longer than the limit")

// unwrapURLError drops *url.Error's wrapper, whose message repeats the
// URL, credentials and all, that the caller names redacted.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// backoff is the wait before retry attempt+1: minBackoff doubled per
// attempt, at most maxBackoff, with up to a quarter of jitter so many
// clients do not retry in step.
func backoff(attempt int) time.Duration {
	d := maxBackoff
	if attempt < 8 {
		d = min(minBackoff<<attempt, maxBackoff)
	}
	return d + time.Duration(rand.Int64N(int64(d/4)+1))
}

// retryAfter reads a Retry-After in seconds (the HTTP date form is not
// worth its parsing here), at most maxRetryAfter; 0 for none.
func retryAfter(v string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n <= 0 {
		return 0
	}
	return min(time.Duration(n)*time.Second, maxRetryAfter)
}

// sleepCtx waits d, or returns ctx's error when it is done first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ReadCredential returns the credential header a user gave: the file
// named by file (its first line), else the environment variable env,
// else "". A value of only a token ("abc123", no colon) is sent as
// "Authorization: Bearer abc123".
func ReadCredential(file, env string) (string, error) {
	var v string
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("credential file: %w", err)
		}
		v, _, _ = strings.Cut(string(b), "\n")
	case env != "":
		v = os.Getenv(env)
	}
	v = strings.TrimSpace(v)
	if v != "" && !strings.Contains(v, ":") {
		v = "Authorization: Bearer " + v
	}
	return v, nil
}
