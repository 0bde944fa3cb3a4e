package pool_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

// TestTheInUseCapDoesNotApplyToASessionlessKey pins that MaxInUsePerKey
// never makes a sessionless key's acquire wait: when one caller's failure
// dropped the shared client while another still holds it, the next acquire
// dials a new shared client at once, though the key is at its cap.
func TestTheInUseCapDoesNotApplyToASessionlessKey(t *testing.T) {
	h := newHarness(t, harnessOpts{fixture: fixtures.Options{Sessionless: true}, pool: pool.Options{MaxInUsePerKey: 1, AcquireTimeout: 50 * time.Millisecond}})
	ctx := context.Background()
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(nil)
	failing, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if !held.Shared() || !failing.Shared() || !failing.CacheHit() {
		t.Fatalf("second lease: shared %v hit %v, want the key's shared client", failing.Shared(), failing.CacheHit())
	}
	failing.Release(errors.New("transport gone")) // drops the shared client; held still uses it

	next, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatalf("acquire with the dropped client still held, at the in-use cap: %v, want a new shared client", err)
	}
	defer next.Release(nil)
	if next.CacheHit() || !next.Shared() {
		t.Errorf("acquire after the drop: hit %v shared %v, want a fresh shared client", next.CacheHit(), next.Shared())
	}
	if st := h.pool.Stat(); st.Dials != 2 || st.Timeouts != 0 || st.Pending != 0 {
		t.Errorf("stat = %+v, want two dials and no wait for the cap", st)
	}
}
