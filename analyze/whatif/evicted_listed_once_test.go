package whatif

import "testing"

// TestAnEvictedMissIsListedOnce: spans.MissReasons already holds
// MissEvicted, so causes must not add it a second time.
func TestAnEvictedMissIsListedOnce(t *testing.T) {
	if got, want := causes(map[string]int{MissEvicted: 1, "cold": 2}), "cold=2 evicted=1"; got != want {
		t.Errorf("causes = %q, want %q", got, want)
	}
}
