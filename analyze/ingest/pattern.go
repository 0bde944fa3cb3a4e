package ingest

import "encoding/binary"

// pattern is a short string the decoders look for where it should stand
// in the input: a span field's key and its colon, the run between a
// compact attribute's key and its value. Comparing a string of more than
// eight bytes with == calls the runtime's memequal, whose setup costs more
// than the comparison of a key of a few words; a pattern keeps its bytes
// as three masked words and compares three loads of the input with them,
// without a branch.
type pattern struct {
	s    string
	w    [3]uint64 // s's bytes at 0, 8 and 16, little endian, zero past its end
	mask [3]uint64 // which bytes of each word are s's
}

// maxPattern is the longest pattern, and how many bytes of the input words
// reads.
const maxPattern = 24

// newPattern compiles s. Its words hold its first maxPattern bytes only:
// words compares no more (a longer s is kept whole in s, for a comparison
// of the texts).
func newPattern(s string) pattern {
	p := pattern{s: s}
	var buf [maxPattern]byte
	copy(buf[:], s)
	for w := range p.w {
		p.w[w] = binary.LittleEndian.Uint64(buf[8*w:])
		if n := len(s) - 8*w; n >= 8 {
			p.mask[w] = ^uint64(0)
		} else if n > 0 {
			p.mask[w] = 1<<(8*n) - 1
		}
	}
	return p
}

// words reports whether b starts with the pattern, which must be at most
// maxPattern bytes; b must hold at least maxPattern bytes (the caller
// reads the end of its input another way).
func (p *pattern) words(b []byte) bool {
	b = b[:maxPattern]
	return (binary.LittleEndian.Uint64(b)^p.w[0])&p.mask[0]|
		(binary.LittleEndian.Uint64(b[8:])^p.w[1])&p.mask[1]|
		(binary.LittleEndian.Uint64(b[16:])^p.w[2])&p.mask[2] == 0
}
