package pool

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// TargetConfig describes one downstream MCP server and the identity used to
// reach it. Everything in it is part of the identity: two configs that differ
// in any header, query parameter or credential never share a session.
type TargetConfig struct {
	// Endpoint is the streamable HTTP URL of the server. Query parameters
	// are part of the identity; values of secret-looking parameters (token,
	// key, secret, password, signature, auth) are redacted wherever the
	// endpoint is shown.
	Endpoint string
	// Header is sent on every request of the session. Values of
	// Authorization, Cookie, Proxy-Authorization and of names containing
	// token, key, secret, password or auth are treated as secrets: the
	// whole value, the credential after an auth scheme, and each
	// name=value parameter's value (each cookie) are redacted wherever
	// they would show.
	Header http.Header
	// SecretHeaders names further headers whose values are secrets.
	SecretHeaders []string
	// BearerToken, if set, is sent as "Authorization: Bearer <token>".
	BearerToken string
	// ProtocolVersion pins the MCP protocol revision of the handshake; a
	// pinned revision is never renegotiated. Empty means the pool's
	// Options.ProtocolVersion, whose zero value negotiates (2026-07-28
	// first, falling back to 2025-11-25) and remembers the result per key,
	// so the probe's extra round trip is paid once per key.
	ProtocolVersion string
}

// Target is a prepared, immutable downstream identity: its key is computed
// once, so the pool's hit path does no hashing. Build it with [NewTarget] and
// reuse it for every call to the same server with the same credentials. A
// Target is safe for concurrent use and may be used with several pools.
type Target struct {
	endpoint        string // raw, used only for HTTP
	shown           string // redacted, for spans, errors and logs
	header          http.Header
	protocolVersion string
	key             string
	address         string
	port            int
	origin          *url.URL // scheme and host of the endpoint: where its headers may go
	redact          redactor
}

// processKey is the per-process HMAC key of identities: a key never leaves
// the process, so a cache key in a trace cannot be brute-forced back into a
// credential, and keys of two processes are not comparable.
var processKey = func() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("pool: no randomness for the identity key: %v", err))
	}
	return b
}()

var secretNameParts = []string{"token", "key", "secret", "password", "passwd", "auth", "signature", "sig", "credential", "cookie", "session"}

// isSecretName reports whether a header or query parameter name looks like it
// carries a credential.
func isSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, p := range secretNameParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// minSecretPart is the shortest piece of a secret header's value redacted
// on its own: shorter pieces ("1", "en") are too common in error text to
// replace, and too short to be a credential.
const minSecretPart = 4

// secretParts returns the spellings of a secret header's value that a
// server may echo on its own, for the redactor: the whole value; the
// credential after an auth scheme ("Bearer x", "Basic x": x); and the
// value of each name=value parameter of a list (a Cookie header's
// "sid=x; csrf=y": x and y; Digest's response="x": x), since a server
// quoting one cookie or one parameter back would otherwise carry it to an
// error, a span or a log.
func secretParts(v string) []string {
	parts := []string{v}
	add := func(p string) {
		if len(p) >= minSecretPart {
			parts = append(parts, p)
		}
	}
	if _, tok, ok := strings.Cut(v, " "); ok {
		add(tok)
	}
	for _, param := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		if _, val, ok := strings.Cut(param, "="); ok {
			add(strings.Trim(strings.TrimSpace(val), `"`))
		}
	}
	return parts
}

// rawSecretValues returns the values of secret-looking parameters of a
// raw query as the endpoint spells them (a space as %20, a lower-case
// escape), which need not be the canonical escape of the decoded value:
// net/http quotes the URL as given in its errors, so that spelling must
// be redacted too.
func rawSecretValues(raw string) []string {
	var vals []string
	for _, param := range strings.Split(raw, "&") {
		name, val, ok := strings.Cut(param, "=")
		if n, err := url.QueryUnescape(name); err == nil {
			name = n
		}
		if ok && val != "" && isSecretName(name) {
			vals = append(vals, val)
		}
	}
	return vals
}

// NewTarget validates cfg and prepares its identity key. The error never
// quotes a secret.
func NewTarget(cfg TargetConfig) (*Target, error) {
	u, err := parseEndpoint(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	t := &Target{endpoint: u.String(), header: http.Header{}, protocolVersion: cfg.ProtocolVersion, origin: &url.URL{Scheme: u.Scheme, Host: u.Host}}
	t.addHeaders(cfg)
	t.shown = t.redactQuery(u)
	// Longest first, so a secret that contains another is replaced whole.
	slices.SortFunc(t.redact.secrets, func(a, b string) int { return len(b) - len(a) })

	t.address = u.Hostname()
	t.port = endpointPort(u)
	t.key = identityKey(spans.TransportStreamableHTTP, u, t.header, cfg.ProtocolVersion)
	return t, nil
}

// parseEndpoint parses the endpoint and refuses one the pool cannot dial
// or should not: not http(s), no host, or credentials in the URL, which
// belong in headers where they are redacted. Its errors never quote the
// endpoint, which may hold a secret.
func parseEndpoint(endpoint string) (*url.URL, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("pool: target endpoint is not a URL (expected http://host[:port]/path)")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("pool: target endpoint scheme %q: expected http or https", u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("pool: target endpoint has no host: expected http://host[:port]/path")
	}
	if u.User != nil {
		return nil, fmt.Errorf("pool: target endpoint carries user info: pass credentials in Header or BearerToken")
	}
	return u, nil
}

// addHeaders copies cfg's headers and bearer token into t's under their
// canonical names, and records every value of a secret header (a known
// one, one cfg names, or one whose name says secret) for redaction.
func (t *Target) addHeaders(cfg TargetConfig) {
	secretHeader := map[string]bool{"Authorization": true, "Cookie": true, "Proxy-Authorization": true}
	for _, h := range cfg.SecretHeaders {
		secretHeader[http.CanonicalHeaderKey(h)] = true
	}
	for name, vals := range cfg.Header {
		cn := http.CanonicalHeaderKey(name)
		t.header[cn] = append(t.header[cn], vals...)
	}
	if cfg.BearerToken != "" {
		t.header.Set("Authorization", "Bearer "+cfg.BearerToken)
		t.redact.secrets = append(t.redact.secrets, cfg.BearerToken)
	}
	for name, vals := range t.header {
		if secretHeader[name] || isSecretName(name) {
			for _, v := range vals {
				t.redact.secrets = append(t.redact.secrets, secretParts(v)...)
			}
		}
	}
}

// redactQuery records the values of u's secret query parameters for
// redaction, as parsed, as escaped and as written, and returns u as it may
// be shown: those values replaced.
func (t *Target) redactQuery(u *url.URL) string {
	q := u.Query()
	shownURL := *u
	shownQ := url.Values{}
	for name, vals := range q {
		for _, v := range vals {
			if isSecretName(name) {
				t.redact.secrets = append(t.redact.secrets, v)
				if esc := url.QueryEscape(v); esc != v {
					t.redact.secrets = append(t.redact.secrets, esc)
				}
				shownQ.Add(name, redacted)
			} else {
				shownQ.Add(name, v)
			}
		}
	}
	t.redact.secrets = append(t.redact.secrets, rawSecretValues(u.RawQuery)...)
	shownURL.RawQuery = shownQ.Encode()
	return shownURL.String()
}

// endpointPort is u's port: the one it names, else its scheme's default.
func endpointPort(u *url.URL) int {
	if p := u.Port(); p != "" {
		var port int
		_, _ = fmt.Sscan(p, &port)
		return port
	}
	if u.Scheme == "https" {
		return 443
	}
	return 80
}

// identityKey is the HMAC of the canonical identity: transport, scheme, host,
// path, sorted query, sorted headers (names lower-cased, values in order) and
// the pinned protocol version.
func identityKey(transport string, u *url.URL, header http.Header, protocolVersion string) string {
	var b strings.Builder
	b.WriteString(transport)
	b.WriteByte('\n')
	b.WriteString(strings.ToLower(u.Scheme))
	b.WriteString("://")
	b.WriteString(strings.ToLower(u.Host))
	b.WriteString(u.EscapedPath())
	b.WriteByte('\n')
	b.WriteString(u.Query().Encode()) // Encode sorts by name.
	b.WriteByte('\n')
	names := make([]string, 0, len(header))
	for name := range header {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range header[name] {
			b.WriteString(strings.ToLower(name))
			b.WriteByte(':')
			b.WriteString(v)
			b.WriteByte('\n')
		}
	}
	b.WriteString(protocolVersion)
	m := hmac.New(sha256.New, processKey)
	m.Write([]byte(b.String()))
	return hex.EncodeToString(m.Sum(nil)[:16])
}

// Key returns the target's pool key: a keyed hash of the identity, safe to
// show anywhere.
func (t *Target) Key() string { return t.key }

// Endpoint returns the endpoint with secret query values redacted, safe to
// show anywhere.
func (t *Target) Endpoint() string { return t.shown }

// String returns the redacted endpoint.
func (t *Target) String() string { return t.shown }
