package index

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// openSource is an index still being filled (not finished), as an engine
// shard's open index is when it lends its tables: trace 1 carries session
// "s1".
func openSource() *Index {
	d := dumptest.New()
	d.Add(d.Resource(spans.ResourceServiceName, "gw"), dumptest.Span{Trace: 1, ID: 1, Name: "one", Attrs: []any{spans.AttrSessionID, "s1"}})
	x := New(rulefmt.IndexOptions{})
	x.Add(d.Traces())
	return x
}

// resetPanics reports whether x.Reset panicked.
func resetPanics(x *Index) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	x.Reset()
	return false
}

// TestALentIndexIsNotResetUntilEveryBorrowerIs pins the count of
// borrowers: a lender stays lent, and refuses a reset, until the last of
// its borrowers is reset.
func TestALentIndexIsNotResetUntilEveryBorrowerIs(t *testing.T) {
	src := openSource()
	if src.Lent() {
		t.Fatal("an index nobody borrowed from is lent")
	}
	all := []bool{true}
	a, b := New(rulefmt.IndexOptions{}), New(rulefmt.IndexOptions{})
	BorrowTraces(a, src, all)
	BorrowTraces(b, src, all)
	a.Reset()
	if !src.Lent() {
		t.Fatal("the lender is not lent with one borrower left")
	}
	if !resetPanics(src) {
		t.Fatal("a lent index was reset")
	}
	b.Reset()
	if src.Lent() {
		t.Fatal("the lender is still lent once every borrower is reset")
	}
	if resetPanics(src) {
		t.Fatal("an index no longer lent refused a reset")
	}
}

// TestABorrowerLooksValuesUpWhileItsLenderInterns has a borrower look
// values up on one goroutine while its lender interns new ones on
// another, as an engine's observer does beside its shard: the borrower
// finds the values it copied, and -race finds no conflict.
func TestABorrowerLooksValuesUpWhileItsLenderInterns(t *testing.T) {
	src := openSource()
	dst := New(rulefmt.IndexOptions{})
	BorrowTraces(dst, src, []bool{true})
	want := src.ValueID("s1")
	if want < 0 {
		t.Fatal("the source has no value s1")
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 200 {
			d := dumptest.New()
			d.Add(d.Resource(), dumptest.Span{Trace: uint64(i + 2), ID: uint64(i + 2), Name: "more", Attrs: []any{spans.AttrSessionID, fmt.Sprintf("new-%d", i)}})
			src.Add(d.Traces())
		}
	}()
	for range 200 {
		if got := dst.ValueID("s1"); got != want {
			t.Fatalf("borrower's ValueID(s1) = %d, want %d", got, want)
		}
		if got := dst.LookupValue("s1"); got != want {
			t.Fatalf("borrower's LookupValue(s1) = %d, want %d", got, want)
		}
	}
	wg.Wait()
	if got := dst.ValueID("new-199"); got < 0 {
		t.Errorf("a value the lender interned later is not found through it: %d", got)
	}
}
