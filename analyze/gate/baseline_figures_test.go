package gate

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// withFigure is baselineText("") with the value at a dotted path of the
// JSON (pool.hit_rate) set to raw JSON, the objects on the way made.
func withFigure(t *testing.T, sets map[string]string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(baselineText("")), &doc); err != nil {
		t.Fatal(err)
	}
	for path, raw := range sets {
		var v any
		if err := json.Unmarshal([]byte(raw), &v); err != nil {
			t.Fatal(err)
		}
		keys := strings.Split(path, ".")
		m := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[keys[len(keys)-1]] = v
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestABaselineWithAFigureNoAnalysisWritesIsRefused pins which figures a
// baseline may hold, each at its boundary: a rate in [0, 1] (1 taken, just
// above refused), counts of 0 or more, milliseconds of 0 up to what an
// int64 of nanoseconds can last, a hit rate that is the hits over the
// acquires (null only without acquires, or declared not measurable). A
// refusal names the JSON field and says why; compared with, the figure
// would judge the run against a number nobody measured (a rate of 5, a
// count of -5) or give a wrong cause (a null hit rate read as "no
// acquires" beside 4 of them).
func TestABaselineWithAFigureNoAnalysisWritesIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		sets map[string]string
		want string // "" for accepted
	}{
		{"as written", nil, ""},
		{"hit rate 1 of 4 hits in 4", map[string]string{"pool.hits": "4", "pool.misses": "0", "pool.hit_rate": "1"}, ""},
		{"hit rate just above 1", map[string]string{"pool.hits": "4", "pool.misses": "0", "pool.hit_rate": "1.0000001"}, "pool.hit_rate is 1.0000001, a rate above 1"},
		{"hit rate 5", map[string]string{"pool.hit_rate": "5"}, "pool.hit_rate is 5, a rate above 1"},
		{"hit rate the largest float", map[string]string{"pool.hit_rate": "1.7976931348623157e308"}, "pool.hit_rate is 1.7976931348623157e+308, a rate above 1"},
		{"hit rate below 0", map[string]string{"pool.hit_rate": "-0.25"}, "pool.hit_rate is -0.25, below 0"},
		{"hit rate not hits over acquires", map[string]string{"pool.hit_rate": "0.7"}, "pool.hit_rate is 0.7, not pool.hits / pool.acquires (3 / 4)"},
		{"hit rate null beside acquires", map[string]string{"pool.hit_rate": "null"}, "pool.hit_rate is null, though pool.acquires is 4"},
		{"hit rate null, declared not measurable", map[string]string{"pool.hit_rate": "null", "figures.hit_rate": `{"state": "not_measurable", "why": "w"}`}, ""},
		{"no acquires, no hit rate", map[string]string{"pool.acquires": "0", "pool.hits": "0", "pool.misses": "0", "pool.hit_rate": "null", "pool.excess_misses": "0"}, ""},
		{"hit rate without acquires", map[string]string{"pool.acquires": "0", "pool.hits": "0", "pool.misses": "0"}, "pool.hit_rate is 0.75, though pool.acquires is 0"},
		{"acquires below 0", map[string]string{"pool.acquires": "-5"}, "pool.acquires is -5, below 0"},
		{"hits above acquires", map[string]string{"pool.hits": "5", "pool.hit_rate": "1"}, "pool.hits is 5, above pool.acquires (4)"},
		{"excess misses -1", map[string]string{"pool.excess_misses": "-1"}, "pool.excess_misses is -1, below 0"},
		{"floor above 1", map[string]string{"pool.cold_start_floor": "1.5"}, "pool.cold_start_floor is 1.5, a rate above 1"},
		{"latency 0 ms", map[string]string{"pool.latency_ms.call.count": "1", "pool.latency_ms.call.p99": "0"}, ""},
		{"latency below 0", map[string]string{"pool.latency_ms.call.count": "1", "pool.latency_ms.call.p99": "-1"}, "pool.latency_ms.call.p99 is -1, below 0"},
		{"latency past an int64 of ns", map[string]string{"pool.latency_ms.call.count": "1", "pool.latency_ms.call.p99": "1e300"}, "pool.latency_ms.call.p99 is 1e+300 ms, longer than a span can last"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeBaseline(strings.NewReader(withFigure(t, tc.sets)), "b.json")
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v; want accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrBaselineFigures)):
				t.Errorf("err = %v; want ErrBaselineFigures saying %q", err, tc.want)
			}
		})
	}
}
