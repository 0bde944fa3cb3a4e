package record

import (
	"slices"
	"testing"
)

// TestNoteHitNotBoolKeepsAFewDistinctValues pins the bound on the values a
// non-boolean hit warning names: every span is counted, but only the first
// MaxHitNotBoolValues distinct values are kept (a repeat is not kept
// twice, one past the bound is dropped), so a hostile dump of a million
// different values costs no more than three.
func TestNoteHitNotBoolKeepsAFewDistinctValues(t *testing.T) {
	var e Table
	for _, v := range []string{"1", "1", "TRUE", "", "yes", "no"} {
		e.NoteHitNotBool("plugin.mcp.cache_hit", v)
	}
	if want := []string{"1", "TRUE", ""}; !slices.Equal(e.HitNotBoolValues, want) || len(want) != MaxHitNotBoolValues {
		t.Errorf("values %q, want %q (the bound, %d)", e.HitNotBoolValues, want, MaxHitNotBoolValues)
	}
	if e.HitsNotBool != 6 || e.HitAttr != "plugin.mcp.cache_hit" {
		t.Errorf("counted %d spans of %q, want 6 of plugin.mcp.cache_hit", e.HitsNotBool, e.HitAttr)
	}
}
