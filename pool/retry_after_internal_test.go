package pool

import (
	"net/http"
	"testing"
	"time"
)

// TestRetryAfterSaturatesBothWays pins how a Retry-After header is read:
// delay-seconds as given up to maxRetryAfter and saturating past it, an
// HTTP date as the delay until it, at most maxRetryAfter, and 0 for a
// date already past or anything unreadable.
func TestRetryAfterSaturatesBothWays(t *testing.T) {
	date := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(http.TimeFormat) }
	for _, tc := range []struct {
		name, v string
		want    time.Duration
	}{
		{"empty", "", 0},
		{"seconds", " 120 ", 2 * time.Minute},
		{"exactly the bound in seconds", "86400", maxRetryAfter},
		{"seconds past the bound", "86401", maxRetryAfter},
		{"seconds past any integer", "99999999999999999999999", maxRetryAfter},
		{"a date two days ahead", date(48 * time.Hour), maxRetryAfter},
		{"a date an hour past", date(-time.Hour), 0},
		{"negative seconds", "-5", 0},
		{"unreadable", "soon", 0},
	} {
		if got := parseRetryAfter(tc.v); got != tc.want {
			t.Errorf("%s: parseRetryAfter(%q) = %s, want %s", tc.name, tc.v, got, tc.want)
		}
	}
}
