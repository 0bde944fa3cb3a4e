package whatif

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// TestOnlyTheAsRecordedRowIsAssumed pins WriteJSON's assumed flag: set on
// the as-recorded row when its settings were assumed, never on a row
// replayed at other settings.
func TestOnlyTheAsRecordedRowIsAssumed(t *testing.T) {
	rows := []Row{
		{Settings: Settings{IdleTTL: time.Minute, IdlePerKey: 1, MaxIdle: 64}, AsRecorded: true, Acquires: 2, Hits: 1},
		{Settings: Settings{IdleTTL: time.Hour, IdlePerKey: 1, MaxIdle: 64}, Acquires: 2, Hits: 2},
	}
	for _, assumed := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteJSON(&b, rows, Marks{Assumed: assumed}); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Rows []struct {
				AsRecorded bool `json:"as_recorded"`
				Assumed    bool `json:"assumed"`
			} `json:"rows"`
		}
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if len(doc.Rows) != 2 || doc.Rows[0].Assumed != assumed || doc.Rows[1].Assumed || !doc.Rows[0].AsRecorded || doc.Rows[1].AsRecorded {
			t.Errorf("assumed %v: rows %+v", assumed, doc.Rows)
		}
	}
}

// TestMissCausesAreSpaceSeparatedInTheirOrder pins causes: the causes
// with a miss, in the vocabulary's order, one space apart; "-" for none.
func TestMissCausesAreSpaceSeparatedInTheirOrder(t *testing.T) {
	for _, tc := range []struct {
		m    map[string]int
		want string
	}{
		{nil, "-"},
		{map[string]int{"cold": 0}, "-"},
		{map[string]int{"cold": 2}, "cold=2"},
		{map[string]int{"ttl": 3, "cold": 2}, "cold=2 ttl=3"},
	} {
		if got := causes(tc.m); got != tc.want {
			t.Errorf("causes(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
