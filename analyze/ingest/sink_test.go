package ingest

import (
	"slices"
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

// TestKeyFilterReadsOnlyTheKeysBytes pins lookup's comparison in line:
// a key asked with room after it (the rest of its record) is compared
// with its own bytes only, whatever follows it, and a key asked at the
// very end of its buffer is compared as text. Every kept key of up to
// maxPattern bytes and a neighbour of each (one byte changed at each
// place, a byte more, a byte less) are asked both ways, followed by the
// bytes that would complete another kept key.
func TestKeyFilterReadsOnlyTheKeysBytes(t *testing.T) {
	kept := []string{"x", "plugin.mcp.cache_key", "plugin.mcp.cache_hit", "plugin.mcp.attempt", strings.Repeat("k", maxPattern), strings.Repeat("k", maxPattern+1)}
	f := newKeyFilter(kept)
	asks := slices.Clone(kept)
	for _, k := range kept {
		asks = append(asks, k+"y", k[:len(k)-1])
		for i := range len(k) {
			asks = append(asks, k[:i]+"?"+k[i+1:])
		}
	}
	for _, ask := range asks {
		want := slices.Contains(kept, ask)
		for _, after := range []string{"", "_hit", "ey", strings.Repeat("k", maxPattern)} {
			buf := []byte(ask + after)
			for _, key := range [][]byte{buf[:len(ask)], buf[:len(ask):len(ask)]} {
				got, ok := f.lookup(key)
				if ok != want || ok && got != ask {
					t.Errorf("lookup(%q) with %q after it (capacity %d): %q, %v; want kept %v", ask, after, cap(key), got, ok, want)
				}
			}
		}
	}
}

// TestKeyFilterReturnsOneStringPerKey pins what sameKept stands on: every
// lookup of a kept key, short or long, returns the one string the filter
// holds, whatever bytes it was asked with, so two keys are the same key
// exactly when they share their bytes, and two keys of one length, or a
// key and its own start, are not.
func TestKeyFilterReturnsOneStringPerKey(t *testing.T) {
	long := strings.Repeat("l", maxFilterLen+1)
	f := newKeyFilter([]string{"plugin.mcp.cache_key", "plugin.mcp.cache_hit", long})
	for _, k := range []string{"plugin.mcp.cache_key", "plugin.mcp.cache_hit", long} {
		a, _ := f.lookup([]byte(k))
		b, _ := f.lookup([]byte(k))
		if !sameKept(a, b) {
			t.Errorf("two lookups of %.24q returned strings apart: a repeated key would be kept twice", k)
		}
	}
	hitKey, _ := f.lookup([]byte("plugin.mcp.cache_hit"))
	key, _ := f.lookup([]byte("plugin.mcp.cache_key"))
	if sameKept(hitKey, key) {
		t.Error("two keys of one length are the same key")
	}
	whole := "plugin.mcp.cache_key" // a key and its start, sharing their first bytes
	g := newKeyFilter([]string{whole, whole[:10]})
	a, _ := g.lookup([]byte(whole))
	b, _ := g.lookup([]byte(whole[:10]))
	if sameKept(a, b) {
		t.Errorf("%q and %q, one at the start of the other, are the same key", a, b)
	}
}
