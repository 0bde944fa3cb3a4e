package ingest

import (
	"strings"
	"testing"
)

// TestKeyFilterKeepsExactlyItsKeys pins keyFilter at maxFilterLen (a key
// of exactly maxFilterLen bytes is kept, one a byte longer is not, and
// neither is indexed past the table) and its empty key (never kept).
func TestKeyFilterKeepsExactlyItsKeys(t *testing.T) {
	keys := []string{"a", strings.Repeat("b", maxFilterLen-1), strings.Repeat("c", maxFilterLen), strings.Repeat("d", maxFilterLen+1), "a", ""}
	f := newKeyFilter(keys)
	for _, k := range keys[:4] {
		if got, ok := f.lookup([]byte(k)); !ok || got != k {
			t.Errorf("lookup of a kept key of %d bytes: %q, %v", len(k), got, ok)
		}
	}
	for _, k := range []string{"", "b", strings.Repeat("c", maxFilterLen-1), strings.Repeat("x", maxFilterLen), strings.Repeat("c", maxFilterLen+1)} {
		if got, ok := f.lookup([]byte(k)); ok {
			t.Errorf("lookup of %d bytes not kept: found %q", len(k), got)
		}
	}
	var none *keyFilter
	if _, ok := none.lookup([]byte("a")); ok {
		t.Error("a nil filter kept a key")
	}
}
