package analyze

import (
	"encoding/binary"
	"math/bits"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// traceSet is a set of trace ids kept as 64-bit fingerprints in one
// open-addressing table: a speculative run remembers every trace it
// finalized (hundreds of thousands in a large dump) and asks about every
// new one, and a Go map of 16-byte keys cost it several times the time
// and memory. Two ids may share a fingerprint (for a million traces, about
// one chance in 10^7 per run): a new trace is then taken for a finalized
// one, which spoils the speculative run and makes it read the input again,
// holding every trace; the answer stays exact.
type traceSet struct {
	slots []uint64 // 0: empty
	n     int
}

// fingerprint mixes both halves of id (MurmurHash3's finalizer, as
// shardOf does) into a non-zero word.
func fingerprint(id pcommon.TraceID) uint64 {
	h := binary.LittleEndian.Uint64(id[:8]) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(id[8:]), 17)
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	if h == 0 {
		h = 1
	}
	return h
}

// add puts id in the set.
func (s *traceSet) add(id pcommon.TraceID) {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	if s.insert(fingerprint(id)) {
		s.n++
	}
}

// has reports whether id (or an id of the same fingerprint) is in the set.
func (s *traceSet) has(id pcommon.TraceID) bool {
	if s.n == 0 {
		return false
	}
	_, found := s.find(fingerprint(id))
	return found
}

// insert places fingerprint f, reporting whether it was new.
func (s *traceSet) insert(f uint64) bool {
	i, found := s.find(f)
	s.slots[i] = f
	return !found
}

// find returns the slot holding f, or the empty one where it would go.
func (s *traceSet) find(f uint64) (uint64, bool) {
	mask := uint64(len(s.slots) - 1)
	for i := f & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case f:
			return i, true
		case 0:
			return i, false
		}
	}
}

// grow doubles the table (at most half full keeps probes short).
func (s *traceSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(1024, 2*len(old)))
	for _, f := range old {
		if f != 0 {
			s.insert(f)
		}
	}
}
