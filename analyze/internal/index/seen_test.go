package index

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

func TestInternStringNamesEachTextOnceWhereverItsBytesLie(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.ensureMaps()
	a1, a2, b := strings.Clone("session-a"), strings.Clone("session-a"), strings.Clone("session-b")
	ida := x.internString(a1)
	for _, tc := range []struct {
		what string
		s    string
		want string
	}{
		{"the very same string again", a1, "session-a"},
		{"the same text at another place", a2, "session-a"},
		{"another text", b, "session-b"},
		{"the first string after another", a1, "session-a"},
	} {
		id := x.internString(tc.s)
		if got := x.Vals[id]; got != tc.want {
			t.Errorf("%s: id %d names %q, want %q", tc.what, id, got, tc.want)
		}
		if tc.want == "session-a" && id != ida {
			t.Errorf("%s: id %d, want the first one's %d", tc.what, id, ida)
		}
	}
	if n := len(x.Vals); n != 4 { // "false", "true" and the two texts
		t.Errorf("%d values interned, want 4", n)
	}
}

func TestInternStringTellsApartTextsOfOneLengthThatShareASlot(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.ensureMaps()
	// Four times as many texts as slots, all of one length: many share a
	// slot, and only where their bytes lie tells them apart there.
	texts := make([]string, 4*seenSlots)
	for i := range texts {
		texts[i] = fmt.Sprintf("session-%06d", i)
	}
	for round := range 2 {
		for _, s := range texts {
			if id := x.internString(s); x.Vals[id] != s {
				t.Fatalf("round %d: %q got id %d, which names %q", round, s, id, x.Vals[id])
			}
		}
	}
}

func TestInternStringForgetsWhatItSawWhenTheIndexIsReset(t *testing.T) {
	x := New(rulefmt.IndexOptions{})
	x.ensureMaps()
	a, b := strings.Clone("session-a"), strings.Clone("session-b")
	x.internString(a)
	x.internString(b)
	x.Reset()
	x.ensureMaps()
	// The ids of before the reset name nothing now: the same strings,
	// interned in the other order, must get ids that name them.
	for _, s := range []string{b, a} {
		id := x.internString(s)
		if int(id) >= len(x.Vals) || x.Vals[id] != s {
			t.Fatalf("after a reset %q got id %d of values %q", s, id, x.Vals)
		}
	}
}
