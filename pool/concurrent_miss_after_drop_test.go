package pool_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/spans"
)

// TestConcurrentMissAfterADropSaysConcurrent pins that a key's last drop
// explains one thing only: the miss that finds nothing because of it. Once
// the key has recovered, a miss made because another lease holds the key's
// session is concurrent, not after_failure.
func TestConcurrentMissAfterADropSaysConcurrent(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	ctx := context.Background()
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "warm"})
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusInternalServerError, Method: "tools/call"})
	if _, err := h.call(ctx, fixtures.ToolEcho, map[string]any{"text": "dropped"}); err == nil {
		t.Fatal("call answered 500 succeeded")
	}
	h.mustCall(fixtures.ToolEcho, map[string]any{"text": "recovered"}) // the after_failure miss
	before := h.pool.Stat()
	if before.MissReasons[spans.MissAfterFailure] != 1 {
		t.Fatalf("miss reasons = %v, want one after_failure for the recovery", before.MissReasons)
	}

	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(nil)
	if !held.CacheHit() {
		t.Fatal("acquire after the recovery missed, want the recovered session")
	}
	for i := range 2 {
		l, err := h.pool.Acquire(ctx, h.target)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(nil)
		if l.CacheHit() {
			t.Fatalf("concurrent acquire %d hit, want a miss", i+1)
		}
	}
	st := h.pool.Stat()
	if got := st.MissReasons[spans.MissConcurrent] - before.MissReasons[spans.MissConcurrent]; got != 2 {
		t.Errorf("concurrent misses = %d, want 2 (miss reasons %v)", got, st.MissReasons)
	}
	if got := st.MissReasons[spans.MissAfterFailure]; got != 1 {
		t.Errorf("after_failure misses = %d, want still 1: the drop was already explained", got)
	}
	acq := h.spansNamed(spans.SpanAcquire)
	if got := attr(acq[len(acq)-1], spans.AttrMissReason); got != spans.MissConcurrent {
		t.Errorf("last acquire span miss reason = %q, want %q", got, spans.MissConcurrent)
	}
}
