package rulefmt

import (
	"strings"
	"testing"
)

// TestEditDistanceComparesNeitherNamePastTheBound pins that a name past
// maxSuggestInput bytes is never compared on either side, even when the
// other name is within the bound and a single edit away.
func TestEditDistanceComparesNeitherNamePastTheBound(t *testing.T) {
	short := strings.Repeat("a", maxSuggestInput-1)
	long := short + "ab" // maxSuggestInput+1 bytes, two edits away
	for _, tt := range []struct {
		name, a, b string
	}{
		{"the first past the bound", long, short},
		{"the second past the bound", short, long},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := editDistance(tt.a, tt.b, 5); got != 5 {
				t.Errorf("editDistance(%d bytes, %d bytes, 5) = %d, want 5 (not compared)", len(tt.a), len(tt.b), got)
			}
		})
	}
}
