package engine

import (
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestACompactionSkipsASpareItsObserverStillReads pins takeSpare: a spare
// open index that finalized traces still borrow from (the observer has not
// measured them yet) is left alone, a free one is reset and taken, and
// with none free a new index is made.
func TestACompactionSkipsASpareItsObserverStillReads(t *testing.T) {
	cfg := rulefmt.Config{}.WithDefaults()
	s := &shard{e: &Engine{cfg: cfg}}
	lent, free := s.newOpenIndex(), s.newOpenIndex()
	borrower := index.New(cfg.IndexOptions())
	index.BorrowTraces(borrower, lent, nil)
	s.spares = []*index.Index{lent, free}
	if got := s.takeSpare(); got != free {
		t.Fatal("takeSpare did not take the spare no traces borrow from")
	}
	if len(s.spares) != 1 || s.spares[0] != lent {
		t.Fatalf("the lent spare was not kept: %d spares", len(s.spares))
	}
	got := s.takeSpare()
	if got == lent || got == nil {
		t.Fatal("takeSpare took a spare its observer still reads")
	}
	borrower.Reset()
	if got := s.takeSpare(); got != lent {
		t.Fatal("a spare no longer lent was not taken again")
	}
}
