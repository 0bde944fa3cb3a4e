package rulefmt

import (
	"errors"
	"strings"
	"testing"
)

// TestNearestNameAtItsEditCapAndTies pins two edges of "did you mean":
// however long the name, a suggestion is at most two edits away (a third
// of eleven runes would allow three), and of names equally near with none
// a transposition, the first listed is suggested, not the last.
func TestNearestNameAtItsEditCapAndTies(t *testing.T) {
	for _, tt := range []struct {
		name, s string
		options []string
		want    string
	}{
		{"eleven runes, three edits: too far", "severityabc", []string{"severity"}, ""},
		{"eleven runes, two edits: suggested", "severityab", []string{"severity"}, "severity"},
		{"equally near: the first listed", "abcd", []string{"abce", "abcf", "abcg"}, "abce"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := NearestName(tt.s, tt.options); got != tt.want {
				t.Errorf("NearestName(%q, %q) = %q, want %q", tt.s, tt.options, got, tt.want)
			}
		})
	}
}

// TestEditDistanceIsCappedAndBoundedByLength pins editDistance's two
// bounds: a distance past the limit is the limit (not the true distance),
// and a name of exactly maxSuggestInput bytes is still compared, one byte
// more is not.
func TestEditDistanceIsCappedAndBoundedByLength(t *testing.T) {
	at := strings.Repeat("a", maxSuggestInput)
	for _, tt := range []struct {
		name, a, b  string
		limit, want int
	}{
		{"three edits capped at two", "abc", "xyz", 2, 2},
		{"exactly maxSuggestInput bytes: compared", at, at[:maxSuggestInput-1] + "b", 5, 1},
		{"one byte over: not compared", at + "a", at + "b", 5, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := editDistance(tt.a, tt.b, tt.limit); got != tt.want {
				t.Errorf("editDistance(%d bytes, %d bytes, %d) = %d, want %d", len(tt.a), len(tt.b), tt.limit, got, tt.want)
			}
		})
	}
}

// TestUnknownProfileSuggestsTheNearestQuoted pins didYouMean's form: the
// suggested profile is quoted as the input is.
func TestUnknownProfileSuggestsTheNearestQuoted(t *testing.T) {
	_, err := ParseProfile("defualt")
	if !errors.Is(err, ErrUnknownProfile) || !strings.Contains(err.Error(), `unknown profile "defualt" (did you mean "default"?)`) {
		t.Errorf("ParseProfile(defualt) = %v", err)
	}
}
