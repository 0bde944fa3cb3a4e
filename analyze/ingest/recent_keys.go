package ingest

import (
	"encoding/binary"
	"math/bits"
)

// recentKeys remembers, per decoding worker, the attribute keys compactAttr
// read lately and what the keep filter answered for each. An exporter
// writes the same few keys on every span, so nearly every key read is one
// read before: a remembered key, compared where it stands with its closing
// quote as a pattern, spares scanning for the key's end and looking it up
// in the filter. Slots are picked by the input's first maxPattern bytes at
// the key, not sixteen: one writer's keys often share their first sixteen
// (plugin.mcp.cache_key, plugin.mcp.cache_hit). A key that shares its slot
// with another, or is too long for a pattern, is read as before.
type recentKeys [1 << recentKeyBits]recentKey

// recentKeyBits is the log2 of the keys remembered: several times the keys
// and value types a writer's spans carry, 6 KiB per worker.
const recentKeyBits = 6

// recentKey is one remembered key: the filter that answered, the key's
// text with its closing quote, and the answer: the filter's own string
// for the key when kept, "" when not (a filter never keeps "").
type recentKey struct {
	f    *keyFilter
	pat  pattern
	kept string
	// last is the string value of the key compactAttr gathered last
	// (kept keys only), "" before one.
	last string
}

// recentKeySlot picks the slot of the key that starts b, which holds at
// least maxPattern bytes.
func recentKeySlot(b []byte) uint32 {
	w := binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[8:]), 21) ^
		bits.RotateLeft64(binary.LittleEndian.Uint64(b[16:]), 42)
	return uint32((w * 0x9e3779b97f4a7c15) >> (64 - recentKeyBits))
}

// guess returns the remembered key f answered for that starts b (the
// first byte after the key's opening quote; b holds at least maxPattern
// bytes), nil when there is none. A guess is the key's exact text followed
// by its closing quote: a key read before had no escape in it. Nothing is
// remembered for a nil filter, which keeps nothing: an empty slot, whose
// filter is nil and whose pattern matches anything, is never a guess.
func (g *recentKeys) guess(f *keyFilter, b []byte) *recentKey {
	e := &g[recentKeySlot(b)]
	if f != nil && e.f == f && e.pat.words(b) {
		return e
	}
	return nil
}

// remember notes that f answered kept ("" for not kept) for the key that
// starts b and ends at its closing quote b[n]; b holds at least
// maxPattern bytes.
func (g *recentKeys) remember(f *keyFilter, b []byte, n int, kept string) {
	if f == nil || n+1 > maxPattern {
		return
	}
	g[recentKeySlot(b)] = recentKey{f: f, pat: newPattern(string(b[:n+1])), kept: kept}
}
