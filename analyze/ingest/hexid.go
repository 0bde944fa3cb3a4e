package ingest

import (
	"encoding/binary"
	"encoding/hex"
)

// hexPairs maps two ASCII bytes (the first in the high byte) to the byte
// the two hex digits spell, or to badHexPair where encoding/hex refuses
// them: the table is encoding/hex's own answer for every pair, so the two
// cannot disagree on what a digit is. Every span carries three ids of 16
// and 32 digits: decoding them a pair at a time from one table halves what
// encoding/hex.Decode, a byte at a time with a test for each, costs
// (about 5% of a JSON read's instructions before).
var hexPairs = func() *[1 << 16]uint16 {
	t := new([1 << 16]uint16)
	var out [1]byte
	for p := range t {
		if _, err := hex.Decode(out[:], []byte{byte(p >> 8), byte(p)}); err != nil {
			t[p] = badHexPair
		} else {
			t[p] = uint16(out[0])
		}
	}
	return t
}()

// badHexPair marks a pair that is not two hex digits: above any byte.
const badHexPair = 0x100

// decodeHexID decodes src, exactly 2*len(dst) hex digits, into dst,
// reporting whether it could: as encoding/hex.Decode does (dst may be
// partly written on false), without its error values, which the fast
// path does not need (it falls back to pdata on any doubt). Eight digits
// are read as one word and looked up as four pairs.
func decodeHexID(dst, src []byte) bool {
	if len(src) != 2*len(dst) {
		return false
	}
	var bad uint16
	i := 0
	for ; i+8 <= len(src); i += 8 {
		w := binary.BigEndian.Uint64(src[i:])
		a, b := hexPairs[uint16(w>>48)], hexPairs[uint16(w>>32)]
		c, d := hexPairs[uint16(w>>16)], hexPairs[uint16(w)]
		bad |= a | b | c | d
		o := dst[i/2 : i/2+4]
		o[0], o[1], o[2], o[3] = byte(a), byte(b), byte(c), byte(d)
	}
	for ; i < len(src); i += 2 {
		v := hexPairs[uint16(src[i])<<8|uint16(src[i+1])]
		bad |= v
		dst[i/2] = byte(v)
	}
	return bad&badHexPair == 0
}
