package index

import (
	"math/bits"
	"unsafe"
)

// seenSlots is the number of strings a seenStrings remembers: enough for
// the values of a few hundred open sessions, small enough (24 KiB) to stay
// in cache.
const seenSlots = 1024

// seenStrings remembers the ids of the strings interned lately by where
// their bytes lie (sameString), two to a pair of slots (seenPair): the
// decoders hand out one string per distinct text they meet (ingest's
// string cache), so a name or value seen before is found without hashing
// its text. The index keeps one for span names and one for values, whose
// ids are different tables'.
type seenStrings [seenSlots]seenString

// seenString is one remembered string and its id.
type seenString struct {
	s  string
	id int32
}

// seenPair is the first of the two slots of s, picked by where its bytes
// lie. Every decoding worker hands out its own string for a text, so a
// dump's few dozen span names stand at several dozen places; with one
// slot to each place, two that the spans alternate between shared it by
// chance and missed it on every span for the whole run (one build in
// three spent 0.7% more instructions at 1M spans so). With two, three
// would have to share a pair.
func seenPair(s string) int {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))
	return int(p*0x9e3779b97f4a7c15>>(64-bits.Len(seenSlots-1))) &^ 1
}

// find returns the id remembered for s, found by its place.
func (m *seenStrings) find(s string) (int32, bool) {
	i := seenPair(s)
	pair := m[i : i+2 : i+2]
	if sameString(pair[0].s, s) {
		return pair[0].id, true
	}
	if sameString(pair[1].s, s) {
		return pair[1].id, true
	}
	return 0, false
}

// remember notes s's id in the first slot of its pair, the one there
// moving to the second.
func (m *seenStrings) remember(s string, id int32) {
	i := seenPair(s)
	m[i+1], m[i] = m[i], seenString{s: s, id: id}
}

// sameString reports whether a and b are one string: the same bytes at
// the same place. Strings are immutable and a remembered one is kept
// alive by its slot, so the place cannot have been reused for other text;
// two equal texts at different places are simply not found here.
func sameString(a, b string) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}
