package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
)

// OAuth. Options.OAuthHandler takes the Go SDK's own OAuth clients
// (auth.NewAuthorizationCodeHandler, extauth's client-credentials and
// enterprise handlers, or any auth.OAuthHandler) and runs them under every
// session's HTTP requests, the way the SDK's StreamableClientTransport runs
// its OAuthHandler field: each request carries the handler's current token,
// and a request answered 401 or 403 runs the handler's flow (discovery,
// registration, authorization, token) once and is sent again.
//
// Two things differ, both because a pool shares one handler among many
// sessions:
//
//   - It runs one layer below the pool's status watcher, so a 401 or 403 the
//     handler healed is never recorded as the session's fault: the watcher
//     sees the retried request's answer, and a session re-authorized in the
//     middle of a lease (a step-up to more scopes) is released clean.
//   - The handler is shared ([sharedOAuth]): its flow runs for one request
//     at a time, and a request refused while another's flow ran is sent
//     again with the token that flow got instead of running its own, so a
//     burst of cold dials authorizes once. The SDK's handlers keep their
//     token in a plain field; the lock also keeps a session's token read from
//     racing another's flow.

// sharedOAuth is the pool's one OAuth handler: h, its Authorize serialized
// and skipped for requests a concurrent flow already answered.
type sharedOAuth struct {
	mu sync.RWMutex // held to read h's token source, and exclusively for h.Authorize
	h  auth.OAuthHandler
	// tokens are the access and refresh tokens the handler has handed
	// out, newest first, at most maxKnownTokens: secrets the scrubber
	// redacts from server text like a target's own. Read without a lock
	// (the slice is never changed once stored); tokMu orders the writers.
	tokens atomic.Pointer[[]string]
	tokMu  sync.Mutex
}

// maxKnownTokens bounds the OAuth tokens remembered for redaction: the
// current ones and a few before them, which a server may still echo.
const maxKnownTokens = 8

// remember adds tok's access and refresh tokens to those redacted.
func (s *sharedOAuth) remember(tok *oauth2.Token) {
	for _, v := range []string{tok.AccessToken, tok.RefreshToken} {
		if v == "" || s.knows(v) {
			continue
		}
		s.tokMu.Lock()
		old := s.tokens.Load()
		next := []string{v}
		if old != nil {
			next = append(next, (*old)[:min(len(*old), maxKnownTokens-1)]...)
		}
		s.tokens.Store(&next)
		s.tokMu.Unlock()
	}
}

// knows reports whether v is a remembered token.
func (s *sharedOAuth) knows(v string) bool {
	if p := s.tokens.Load(); p != nil {
		return slices.Contains(*p, v)
	}
	return false
}

// redact returns v with every remembered token replaced.
func (s *sharedOAuth) redact(v string) string {
	if p := s.tokens.Load(); p != nil {
		for _, tok := range *p {
			v = strings.ReplaceAll(v, tok, redacted)
		}
	}
	return v
}

// shareOAuth wraps the handler of Options.OAuthHandler once per pool; nil
// stays nil.
func shareOAuth(h auth.OAuthHandler) auth.OAuthHandler {
	if h == nil {
		return nil
	}
	if _, ok := h.(*sharedOAuth); ok {
		return h
	}
	return &sharedOAuth{h: h}
}

// TokenSource implements auth.OAuthHandler.
func (s *sharedOAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.h.TokenSource(ctx)
}

// Authorize implements auth.OAuthHandler.
func (s *sharedOAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h.Authorize(ctx, req, resp)
}

// authorizeUnlessRenewed runs the flow for a request refused with sent (its
// Authorization header), unless the token changed since it was sent: then
// another request's flow has run, and the refused one is retried with the
// new token.
func (s *sharedOAuth) authorizeUnlessRenewed(ctx context.Context, sent string, req *http.Request, resp *http.Response) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now, err := s.headerLocked(ctx); err == nil && now != "" && now != sent {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxChallengeBody))
		resp.Body.Close()
		return nil
	}
	return s.h.Authorize(ctx, req, resp)
}

// maxChallengeBody bounds what is read of a 401 or 403 body: the flow
// needs only its headers, and the rest is drained only so the connection
// can be reused.
const maxChallengeBody = 64 << 10

// headerLocked is the Authorization header of the current token ("" for
// none); s.mu must be held.
func (s *sharedOAuth) headerLocked(ctx context.Context) (string, error) {
	ts, err := s.h.TokenSource(ctx)
	if err != nil || ts == nil {
		return "", err
	}
	tok, err := ts.Token()
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
		// RFC 6749 §5.2: the refresh token is dead. Send no token, so the
		// server's 401 starts a new authorization, as the SDK does.
		return "", nil
	case err != nil:
		return "", err
	case tok == nil:
		return "", nil
	}
	s.remember(tok)
	return "Bearer " + tok.AccessToken, nil
}

// header is headerLocked under the read lock.
func (s *sharedOAuth) header(ctx context.Context) (string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.headerLocked(ctx)
}

// oauthTransport authorizes every request through the pool's shared
// handler; see the section comment above.
type oauthTransport struct {
	oauth *sharedOAuth
	base  http.RoundTripper
}

// withOAuth returns base with h's authorization under it, or base itself when
// h is nil, so a pool without OAuth pays nothing.
func withOAuth(base http.RoundTripper, h auth.OAuthHandler) http.RoundTripper {
	if h == nil {
		return base
	}
	return &oauthTransport{oauth: shareOAuth(h).(*sharedOAuth), base: base}
}

// RoundTrip implements http.RoundTripper. It follows auth.OAuthHandler's
// contract: the token on every request, the flow after a 401 or 403 and one
// retry, never a second flow for the same request. A request whose body
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
	// The flow reads the challenge (WWW-Authenticate) and closes the body;
	// the SDK's drains it, so a server's endless 401 body is cut short.
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, maxChallengeBody), resp.Body}
	if err := t.oauth.authorizeUnlessRenewed(req.Context(), first.Header.Get("Authorization"), first, resp); err != nil {
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

// authorized returns a copy of req carrying the current access token, if
// there is one.
func (t *oauthTransport) authorized(req *http.Request) (*http.Request, error) {
	h, err := t.oauth.header(req.Context())
	if err != nil {
		return nil, fmt.Errorf("oauth: token: %w", err)
	}
	out := req.Clone(req.Context())
	if h != "" { // else the target's own Authorization, if it has one
		out.Header.Set("Authorization", h)
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
