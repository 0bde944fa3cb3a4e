package index

import "unsafe"

// seenSlots is the number of strings Index.seen remembers: enough for the
// values of a few hundred open sessions, small enough (24 KiB) to stay in
// cache.
const seenSlots = 1024

// nameSlots is the number of span names Index.seenNames remembers: a dump
// has a few dozen, and two names the spans alternate between that share a
// slot miss it on every span, for the whole run (with 64 slots, at 1M
// spans, some runs spent 1% more instructions so). With this many, two
// share one in few runs.
const nameSlots = 1024

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
