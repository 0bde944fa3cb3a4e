package backend

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestABackendURLIsShownWithoutItsSecrets pins the one way a backend's
// URL is shown: whatever shape carries a secret (user information, a
// query, a fragment, a URL that does not parse, one without "//"), the
// refusal names the URL without it, and the true cause.
func TestABackendURLIsShownWithoutItsSecrets(t *testing.T) {
	tests := []struct {
		name, raw, shown, cause string
	}{
		{"a user and password", "http://user:SECRET@127.0.0.1:9/", "http://127.0.0.1:9/", "credentials in a URL"},
		{"a user alone", "http://SECRET@127.0.0.1:9", "http://127.0.0.1:9", "credentials in a URL"},
		{"a token in the query", "http://127.0.0.1:9/?access_token=SECRET", "http://127.0.0.1:9/", "without a query"},
		{"a token in the fragment", "http://127.0.0.1:9/#tok=SECRET", "http://127.0.0.1:9/", "without a fragment"},
		{"an empty query before a fragment", "http://127.0.0.1:9/?#tok=SECRET", "http://127.0.0.1:9/", "without a query"},
		{"an empty fragment", "http://127.0.0.1:9/#", "http://127.0.0.1:9/", "without a fragment"},
		{"a password with a slash, which does not parse", "http://user:SEC/RET@127.0.0.1:9/", `"http://127.0.0.1:9/"`, "credentials in a URL"},
		{"a password with a slash that parses as a path", "http://user:/SECRET@127.0.0.1:9/", "http://127.0.0.1:9/", "credentials in a URL"},
		{"no // and a password", "user:SECRET@127.0.0.1:9", "127.0.0.1:9", "want http:// or https://"},
		{"another scheme with a token", "ftp://127.0.0.1:9/?tok=SECRET", "ftp://127.0.0.1:9/", "want http:// or https://"},
		{"no host and a password", "http://user:SECRET@", "http://", "no host"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Redact(tc.raw); got != tc.shown {
				t.Errorf("Redact(%q) = %q, want %q", tc.raw, got, tc.shown)
			}
			_, err := NewClient(ClientOptions{URL: tc.raw})
			if err == nil {
				t.Fatalf("%q accepted", tc.raw)
			}
			if msg := err.Error(); strings.Contains(msg, "SEC") || !strings.Contains(msg, tc.shown) || !strings.Contains(msg, tc.cause) {
				t.Errorf("refusal %q: want %q shown, the cause %q, no secret", msg, tc.shown, tc.cause)
			}
		})
	}
}

// TestARedirectElsewhereIsShownWithoutItsSecrets pins the redirect
// refusal: the other origin's URL, which may carry a token in its query
// or fragment, is shown without them.
func TestARedirectElsewhereIsShownWithoutItsSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/login?access_token=SECRET#tok=SECRET", http.StatusFound)
	}))
	defer srv.Close()
	var w waits
	_, err := newTestClient(t, srv.URL, "", &w).get(context.Background(), "/x", nil, 1<<20)
	if !errors.Is(err, ErrRedirect) || strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "http://127.0.0.1:1/login") {
		t.Errorf("err %v: want a refused redirect naming http://127.0.0.1:1/login without its secrets", err)
	}
}
