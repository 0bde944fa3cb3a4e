package measure

import (
	"strconv"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
)

// TestMergeExecNamesKeepsAtMostTheBound pins the names' bound at its
// edge: a map one short of record.MaxNameCounts takes one new name and
// no more, and a name already counted is always added to.
func TestMergeExecNamesKeepsAtMostTheBound(t *testing.T) {
	a := map[string][2]int{}
	for i := range record.MaxNameCounts - 1 {
		a["n"+strconv.Itoa(i)] = [2]int{1, 0}
	}
	a = MergeExecNames(a, map[string][2]int{"new": {1, 1}})
	if len(a) != record.MaxNameCounts || a["new"] != [2]int{1, 1} {
		t.Fatalf("one short of the bound: %d names, new = %v; want %d, [1 1]", len(a), a["new"], record.MaxNameCounts)
	}
	a = MergeExecNames(a, map[string][2]int{"over": {1, 0}, "n0": {2, 3}})
	if len(a) != record.MaxNameCounts {
		t.Errorf("at the bound: %d names, want %d", len(a), record.MaxNameCounts)
	}
	if _, ok := a["over"]; ok {
		t.Error("a name past the bound was kept")
	}
	if a["n0"] != [2]int{3, 3} {
		t.Errorf("a counted name at the bound: %v, want [3 3]", a["n0"])
	}
}
