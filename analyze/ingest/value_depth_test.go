package ingest

import (
	"fmt"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestValueTooDeepCountsLevelsFromTheValue pins ValueTooDeep's limit on
// pdata values that no reader cut (the Collector connector's): the
// attribute's value is level 0 and each array or map one level more, a
// leaf at level MaxDepth is within the limit and one at MaxDepth+1 is
// not, through arrays, maps and both; a scalar or an empty container is
// never too deep.
func TestValueTooDeepCountsLevelsFromTheValue(t *testing.T) {
	// nested returns a value whose leaf, a string, is levels deep: each
	// level an array (or a map, or alternately one and the other).
	nested := func(levels int, kind string) pcommon.Value {
		v := pcommon.NewValueEmpty()
		cur := v
		for i := range levels {
			if kind == "maps" || kind == "both" && i%2 == 1 {
				cur = cur.SetEmptyMap().PutEmpty("k")
			} else {
				cur = cur.SetEmptySlice().AppendEmpty()
			}
		}
		cur.SetStr("leaf")
		return v
	}
	for _, kind := range []string{"arrays", "maps", "both"} {
		for _, tc := range []struct {
			levels int
			deep   bool
		}{
			{0, false},
			{1, false},
			{MaxDepth, false},
			{MaxDepth + 1, true},
			{MaxDepth + 2, true},
		} {
			t.Run(fmt.Sprintf("%s %d levels", kind, tc.levels), func(t *testing.T) {
				if got := ValueTooDeep(nested(tc.levels, kind)); got != tc.deep {
					t.Errorf("ValueTooDeep = %v, want %v", got, tc.deep)
				}
			})
		}
	}
	if ValueTooDeep(pcommon.NewValueEmpty().SetEmptySlice().AppendEmpty()) {
		t.Error("an empty value in an array is too deep")
	}
}
