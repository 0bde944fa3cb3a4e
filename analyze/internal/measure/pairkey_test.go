package measure

import (
	"math"
	"testing"
)

// TestPairKeyOfTellsEveryPairApart pins that two different (scope, key)
// pairs never share a key, negative ids and the extremes included: an
// id's sign must not spread into the other half of the word.
func TestPairKeyOfTellsEveryPairApart(t *testing.T) {
	ids := []int32{math.MinInt32, -2, -1, 0, 1, 2, math.MaxInt32}
	seen := map[pairKey][2]int32{}
	for _, scope := range ids {
		for _, key := range ids {
			k := pairKeyOf(scope, key)
			if prev, dup := seen[k]; dup {
				t.Fatalf("pairKeyOf(%d, %d) = pairKeyOf(%d, %d) = %#x", scope, key, prev[0], prev[1], uint64(k))
			}
			seen[k] = [2]int32{scope, key}
		}
	}
}
