package pool

import (
	"testing"

	"golang.org/x/oauth2"
)

// TestATokenHandedOutAgainKeepsOlderOnesRedacted pins the window of OAuth
// tokens redacted from server text: the handler hands out its current
// token on every request, and those requests never push an older token
// (one a server may still echo) out of the window; only new tokens do,
// the newest maxKnownTokens kept. An empty refresh token is never one.
func TestATokenHandedOutAgainKeepsOlderOnesRedacted(t *testing.T) {
	s := &sharedOAuth{}
	s.remember(&oauth2.Token{AccessToken: "old-access", RefreshToken: "old-refresh"})
	for range 2 * maxKnownTokens {
		s.remember(&oauth2.Token{AccessToken: "current-access"})
	}
	for _, tok := range []string{"old-access", "old-refresh", "current-access"} {
		if !s.knows(tok) {
			t.Errorf("%s is no longer redacted after the current token was handed out again", tok)
		}
	}
	if s.knows("") {
		t.Error("the empty string is remembered as a token")
	}
	for i := range maxKnownTokens {
		s.remember(&oauth2.Token{AccessToken: string(rune('a' + i))})
	}
	if s.knows("old-access") || s.knows("old-refresh") || !s.knows("a") {
		t.Errorf("after %d new tokens: old known %v, newest known %v; want only the newest %d kept", maxKnownTokens, s.knows("old-access"), s.knows("a"), maxKnownTokens)
	}
}
