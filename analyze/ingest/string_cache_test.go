package ingest

import (
	"fmt"
	"testing"
	"unsafe"
)

// TestStringCacheHandsOutOneStringPerText pins what the decoders rely on:
// the text is b's, a repeated text is the same string (no allocation),
// texts that share a slot are each still their own, and the map stays
// bounded however many distinct texts come.
func TestStringCacheHandsOutOneStringPerText(t *testing.T) {
	c := &stringCache{m: map[string]string{}}
	first := c.str([]byte("plugin.mcp.connection.acquire"))
	again := c.str([]byte("plugin.mcp.connection.acquire"))
	if first != "plugin.mcp.connection.acquire" || unsafe.StringData(first) != unsafe.StringData(again) {
		t.Fatalf("a repeated text is not the same string: %q %q", first, again)
	}
	if c.slots[slotOf([]byte(first))] != first {
		t.Fatal("the text handed out last is not in its slot")
	}
	// Two texts of one length in one slot: the slot must compare the
	// text, not only its length.
	var a, b []byte
	seen := map[uint32][]byte{}
	for i := 1000; a == nil; i++ {
		txt := []byte(fmt.Sprintf("v%d", i))
		if prev, ok := seen[slotOf(txt)]; ok && len(prev) == len(txt) {
			a, b = prev, txt
		}
		seen[slotOf(txt)] = txt
	}
	for range 3 {
		if got := c.str(a); got != string(a) {
			t.Fatalf("slot shared by %q and %q: got %q for %q", a, b, got, a)
		}
		if got := c.str(b); got != string(b) {
			t.Fatalf("slot shared by %q and %q: got %q for %q", a, b, got, b)
		}
	}
	if got := c.str(nil); got != "" {
		t.Fatalf("empty text = %q", got)
	}
	for i := range 3 * maxCachedStrings {
		c.str([]byte(fmt.Sprintf("unique-%d", i)))
	}
	if len(c.m) > maxCachedStrings {
		t.Fatalf("the cache holds %d strings, past its bound %d", len(c.m), maxCachedStrings)
	}
}
