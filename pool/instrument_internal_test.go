package pool

import (
	"fmt"
	"sync"
	"testing"
)

// TestSpanOptionCachesStopGrowingAtTheirBound pins the bound of the
// prebuilt span option caches: a caller with unbounded key or tool names
// costs allocations past maxCachedSpanOpts entries, never memory; the first
// value stored for a key wins, also when goroutines race to store it.
func TestSpanOptionCachesStopGrowingAtTheirBound(t *testing.T) {
	var c cowCache[string, int]
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range maxCachedSpanOpts + 50 {
				k := fmt.Sprint("tool-", i)
				got := c.put(k, i*10+g)
				if i < maxCachedSpanOpts && got/10 != i {
					t.Errorf("put(%s) returned %d, not a value stored for it", k, got)
				}
			}
		})
	}
	wg.Wait()
	var n int
	if m := c.m.Load(); m != nil {
		n = len(*m)
	}
	if n != maxCachedSpanOpts {
		t.Fatalf("cache holds %d entries, want %d", n, maxCachedSpanOpts)
	}
	for i := range maxCachedSpanOpts + 50 {
		k := fmt.Sprint("tool-", i)
		v, ok := c.get(k)
		if ok != (i < maxCachedSpanOpts) {
			t.Errorf("get(%s) found = %v", k, ok)
		}
		if ok && v/10 != i {
			t.Errorf("get(%s) = %d", k, v)
		}
		if ok {
			if again := c.put(k, -1); again != v {
				t.Errorf("put(%s) again returned %d, want the first value %d", k, again, v)
			}
		}
	}
	if got := c.put("one more", 7); got != 7 {
		t.Errorf("put past the bound returned %d, want the value itself", got)
	}
	if _, ok := c.get("one more"); ok {
		t.Error("a put past the bound was stored")
	}
}
