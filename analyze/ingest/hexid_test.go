package ingest

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestDecodeHexIDAgreesWithEncodingHexOnEveryPair pins the fast path's id
// decoder to encoding/hex (what pdata's JSON reader uses): every one of
// the 65536 byte pairs, in every place of a span id (each of a word's
// four pairs, in both words) and alone (the tail shorter than a word),
// decodes to the same bytes, or fails, as it does.
func TestDecodeHexIDAgreesWithEncodingHexOnEveryPair(t *testing.T) {
	const filler = "0123456789abcdef"
	for hi := range 256 {
		for lo := range 256 {
			for at := 0; at <= len(filler); at += 2 {
				pair := string([]byte{byte(hi), byte(lo)})
				src := []byte(pair) // the pair alone, after the last place
				if at < len(filler) {
					src = []byte(filler[:at] + pair + filler[at+2:])
				}
				want := make([]byte, len(src)/2)
				_, err := hex.Decode(want, src)
				got := make([]byte, len(src)/2)
				ok := decodeHexID(got, src)
				if ok != (err == nil) || (ok && string(got) != string(want)) {
					t.Fatalf("%q: decodeHexID = %v, %x; encoding/hex: %x, %v", src, ok, got, want, err)
				}
			}
		}
	}
}

// TestDecodeHexIDNeedsExactlyTwiceTheLength pins the lengths and that one
// bad digit anywhere in an id (first, middle, last pair) fails it.
func TestDecodeHexIDNeedsExactlyTwiceTheLength(t *testing.T) {
	id := "0123456789abcdefABCDEF0123456789"
	cases := []struct {
		name string
		src  string
		n    int
		want bool
	}{
		{"a trace id", id, 16, true},
		{"a span id", id[:16], 8, true},
		{"one digit short", id[:31], 16, false},
		{"one digit over", id + "0", 16, false},
		{"empty for none", "", 0, true},
		{"a bad first digit", "g" + id[1:], 16, false},
		{"a bad middle digit", id[:15] + "-" + id[16:], 16, false},
		{"a bad last digit", id[:31] + "G", 16, false},
		{"a space", strings.Replace(id, "0", " ", 1), 16, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dst := make([]byte, c.n)
			got := decodeHexID(dst, []byte(c.src))
			if got != c.want {
				t.Fatalf("decodeHexID(%d bytes, %q) = %v, want %v", c.n, c.src, got, c.want)
			}
			if got {
				want, _ := hex.DecodeString(c.src)
				if string(dst) != string(want) {
					t.Fatalf("decoded %x, want %x", dst, want)
				}
			}
		})
	}
}

// TestATraceIDDifferingInOneDigitIsNotTheLast pins lastTraceID.same,
// which spares decoding a trace id its span repeats: a change of any one
// of the 32 digits, in any of its words, makes it another id.
func TestATraceIDDifferingInOneDigitIsNotTheLast(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	var last lastTraceID
	copy(last.digits[:], id)
	if !last.same([]byte(id)) {
		t.Fatalf("%s is not the same as itself", id)
	}
	for i := range len(id) {
		other := []byte(id)
		other[i] = 'x'
		if last.same(other) {
			t.Errorf("digit %d changed, and %s still reads as %s", i, other, id)
		}
	}
}
