package index

import (
	"math/bits"
	"unsafe"
)

// seenSlots is the number of strings Index.seen remembers: enough for the
// values of a few hundred open sessions, small enough (24 KiB) to stay in
// cache.
const seenSlots = 1024

// nameSlots is the number of span names Index.seenNames remembers, two
// to a pair of slots that nameSlot picks: a dump has a few dozen.
const nameSlots = 1024

// nameSlot is the first of the two slots of span name s, picked by where
// its bytes lie. Every decoding worker hands out its own string for a
// name, so a dump's few dozen names stand at several dozen places, and
// with one slot to each place two that the spans alternate between
// shared it by chance and missed it on every span for the whole run (one
// build in three spent 0.7% more instructions at 1M spans so). With two,
// three would have to share a pair.
func nameSlot(s string) int {
	p := uint64(uintptr(unsafe.Pointer(unsafe.StringData(s))))
	return int(p*0x9e3779b97f4a7c15>>(64-bits.Len(nameSlots-1))) &^ 1
}

// seenString is one remembered string and its value id.
type seenString struct {
	s  string
	id int32
}

// seenSlot is the slot of s in Index.seen, chosen by where its bytes lie.
func seenSlot(s string) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return (p>>3 ^ p>>13) % seenSlots
}

// sameString reports whether a and b are one string: the same bytes at
// the same place. Strings are immutable and a remembered one is kept
// alive by its slot, so the place cannot have been reused for other text;
// two equal texts at different places are simply not found here.
func sameString(a, b string) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b)
}
