package ingest

import "testing"

func TestAnInputsWindowSpansItsSpans(t *testing.T) {
	type span struct{ start, end uint64 }
	cases := []struct {
		name       string
		spans      []span
		start, end uint64
	}{
		{"no span", nil, 0, 0},
		{"one span", []span{{10, 20}}, 10, 20},
		{"earliest start, latest end", []span{{15, 18}, {10, 12}, {16, 30}}, 10, 30},
		{"an end before its start counts as the start", []span{{10, 5}}, 10, 10},
		{"a span without a start is left out", []span{{0, 50}, {10, 20}}, 10, 20},
		{"equal times", []span{{10, 10}, {10, 10}}, 10, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var in Input
			for _, s := range tc.spans {
				in.Widen(s.start, s.end)
			}
			if in.Start != tc.start || in.End != tc.end {
				t.Errorf("window %d..%d, want %d..%d", in.Start, in.End, tc.start, tc.end)
			}
		})
	}
}
