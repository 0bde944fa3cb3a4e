package pool

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// OAuth. Options.OAuthHandler takes the Go SDK's own OAuth clients
// (auth.NewAuthorizationCodeHandler, or any auth.OAuthHandler) and runs them
// under every session's HTTP requests, the way the SDK's
// StreamableClientTransport runs its OAuthHandler field: each request
// carries the handler's current token, and a request answered 401 or 403 runs
// the handler's flow (discovery, registration, authorization, token) once and
// is sent again. The pool does it one layer below its status watcher, so a
// 401 healed by the handler is never recorded as the session's fault: the
// watcher sees the retried request's answer, and a session re-authorized in
// the middle of a lease (a step-up to more scopes) is still released clean.

// oauthTransport authorizes every request through handler; see the section
// comment above.
type oauthTransport struct {
	handler auth.OAuthHandler
	base    http.RoundTripper
}

// withOAuth returns base with h's authorization under it, or base itself when
// h is nil, so a pool without OAuth pays nothing.
func withOAuth(base http.RoundTripper, h auth.OAuthHandler) http.RoundTripper {
	if h == nil {
		return base
	}
	return &oauthTransport{handler: h, base: base}
}

// RoundTrip implements http.RoundTripper. It follows auth.OAuthHandler's
// contract: the token on every request, Authorize after a 401 or 403 and one
// retry, never a second Authorize for the same request. A request whose body
// cannot be read again (no GetBody) gets its first answer.
func (t *oauthTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	first, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(first)
	if err != nil || (resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden) {
		return resp, err
	}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return resp, nil
	}
	// Authorize reads the challenge (WWW-Authenticate) and closes the body.
	if err := t.handler.Authorize(req.Context(), first, resp); err != nil {
		return nil, fmt.Errorf("oauth: authorize after HTTP %d: %w", resp.StatusCode, err)
	}
	retry, err := t.authorized(req)
	if err != nil {
		return nil, err
	}
	if req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("oauth: rewind the request body for the retry: %w", err)
		}
		retry.Body = body
	}
	return t.base.RoundTrip(retry)
}

// authorized returns a copy of req carrying the handler's current access
// token, if it has one. A token source whose refresh was refused as
// invalid_grant (RFC 6749 §5.2: the refresh token is dead) sends the request
// without a token, so the server's 401 starts a new authorization, as the
// SDK's transport does.
func (t *oauthTransport) authorized(req *http.Request) (*http.Request, error) {
	out := req.Clone(req.Context())
	ts, err := t.handler.TokenSource(req.Context())
	if err != nil {
		return nil, fmt.Errorf("oauth: token source: %w", err)
	}
	if ts == nil {
		return out, nil
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		out.Header.Del("Authorization")
	case err != nil:
		return nil, fmt.Errorf("oauth: token: %w", err)
	case tok != nil:
		out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return out, nil
}

// CloseIdleConnections passes through to the base transport, so a pool that
// closes its transport's idle connections reaches them under the OAuth layer.
func (t *oauthTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
