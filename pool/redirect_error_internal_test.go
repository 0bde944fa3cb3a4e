package pool

import (
	"strings"
	"testing"
)

// TestARedirectErrorSaysWhyItWasNotFollowed pins the three reasons a
// refused redirect gives: another origin (never followed), a same-origin
// redirect stopped for its own cause (too many hops), and a same-origin
// redirect with the option off; and a request refused unsent (status 0).
func TestARedirectErrorSaysWhyItWasNotFollowed(t *testing.T) {
	const loc = "https://other.example:443/mcp"
	for _, tc := range []struct {
		name string
		err  RedirectError
		want string
	}{
		{"another origin", RedirectError{Status: 307, Location: loc, CrossOrigin: true},
			"downstream answered HTTP 307 redirecting to " + loc + ": another origin than the endpoint's: never followed, and no credential is sent there; update the target's endpoint"},
		{"another origin, refused unsent", RedirectError{Location: loc, CrossOrigin: true},
			"request to " + loc + " refused: another origin than the endpoint's"},
		{"too many hops", RedirectError{Status: 302, Location: loc, reason: "stopped after 5 redirects"},
			"downstream answered HTTP 302 redirecting to " + loc + ": not followed: stopped after 5 redirects"},
		{"the option off", RedirectError{Status: 301, Location: loc},
			"downstream answered HTTP 301 redirecting to " + loc + ": redirects are not followed (Options.FollowSameOriginRedirects is off)"},
	} {
		if got := tc.err.Error(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: %q, want it to begin %q", tc.name, got, tc.want)
		}
	}
}
