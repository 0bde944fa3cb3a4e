package rulefmt

import (
	"context"
	"errors"
	"testing"
)

// TestLocateNamesOnlyAParsedSelectorsPlace pins Locate at its edge: a
// selector from a file (line 1 and on) is named by line and column, one
// built in code (line 0, whatever its column) is not, and the error
// wrapped stays the error it was.
func TestLocateNamesOnlyAParsedSelectorsPlace(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  Selector
		want string
	}{
		{"the first line of a file", Selector{Line: 1, Column: 1}, "selector at line 1, column 1: context canceled"},
		{"a later place", Selector{Line: 12, Column: 7}, "selector at line 12, column 7: context canceled"},
		{"built in code", Selector{}, "context canceled"},
		{"line 0 with a column", Selector{Column: 3}, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.sel.Locate(context.Canceled)
			if err.Error() != tc.want || !errors.Is(err, context.Canceled) {
				t.Errorf("Locate = %q (is canceled: %v), want %q, still canceled", err, errors.Is(err, context.Canceled), tc.want)
			}
		})
	}
}
