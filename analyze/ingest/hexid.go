package ingest

import "encoding/binary"

// hexPairs maps two ASCII bytes (the first in the high byte) to the byte
// the two hex digits spell, or to badHexPair where either byte is not a
// digit encoding/hex accepts (0-9, a-f, A-F). Every span carries three ids
// of 16 and 32 digits: decoding them a pair at a time from one table
// halves what encoding/hex.Decode, a byte at a time with a test for each,
// costs (about 5% of a JSON read's instructions before).
var hexPairs = func() *[1 << 16]uint16 {
	var digit [256]uint16
	for i := range digit {
		digit[i] = badHexPair
	}
	for c := '0'; c <= '9'; c++ {
		digit[c] = uint16(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		digit[c] = uint16(c-'a') + 10
		digit[c-'a'+'A'] = uint16(c-'a') + 10
	}
	t := new([1 << 16]uint16)
	for hi := range 256 {
		for lo := range 256 {
			a, b := digit[hi], digit[lo]
			if a == badHexPair || b == badHexPair {
				t[hi<<8|lo] = badHexPair
				continue
			}
			t[hi<<8|lo] = a<<4 | b
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
