package ingest

import (
	"strings"
	"testing"
)

// TestPatternWordsAgreesWithHasPrefix pins pattern.words to a plain prefix
// comparison for patterns of every length up to maxPattern, in inputs of
// exactly maxPattern bytes and longer, with a difference at each byte of
// the pattern and just past its end, where the mask must hide it.
func TestPatternWordsAgreesWithHasPrefix(t *testing.T) {
	const alphabet = `abcdefghijklmnopqrstuvwxyz0123456789":{},`
	for n := 1; n <= maxPattern; n++ {
		s := alphabet[:n]
		p := newPattern(s)
		for tail := maxPattern - n; tail <= maxPattern-n+9; tail++ {
			in := s + strings.Repeat("~", tail)
			for at := -1; at < len(in); at++ {
				b := []byte(in)
				if at >= 0 {
					b[at] ^= 0x20 // at -1, the input as written
				}
				if got, want := p.words(b), hasPrefixAt(b, 0, s); got != want {
					t.Fatalf("pattern %q words(%q) = %v, want %v", s, b, got, want)
				}
			}
		}
	}
}

// TestGuessKeyLeavesTheEndOfTheInputToTheReader pins guessKey at the
// boundary where the words of a pattern stop fitting: with maxPattern
// bytes left it guesses, with one less it does not, and span reads the
// key without a guess, so the object decodes the same either way.
func TestGuessKeyLeavesTheEndOfTheInputToTheReader(t *testing.T) {
	key := `"traceId":`
	for _, left := range []int{maxPattern, maxPattern - 1} {
		in := []byte(key + strings.Repeat(" ", left-len(key)))
		want := spanTraceID
		if left < maxPattern {
			want = -1
		}
		if got := guessKey(spanKeyOrder, in); got != want {
			t.Errorf("with %d bytes left: guessKey = %d, want %d", left, got, want)
		}
	}
}

// TestNewKeyOrderRefusesAKeyTooLongToGuess pins that a key whose pattern
// (with its quotes and colon) would not be compared whole is refused when
// the order is built, and one that just fits is taken.
func TestNewKeyOrderRefusesAKeyTooLongToGuess(t *testing.T) {
	build := func(k string) (panicked bool) {
		defer func() { panicked = recover() != nil }()
		newKeyOrder([]string{"name", k})
		return false
	}
	fits := strings.Repeat("k", maxPattern-3)
	if build(fits) {
		t.Errorf("newKeyOrder panicked on %q, whose pattern is maxPattern bytes", fits)
	}
	if long := fits + "k"; !build(long) {
		t.Errorf("newKeyOrder(%q) did not panic", long)
	}
}
