package main

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestWhatifCommand pins the command's contract: JSON rows under
// mcptrace.whatif/v1 with the as-recorded row reproducing the dump's
// figures (ttl-and-redial: 3 hits, cold, ttl and redial once each), a
// shorter TTL costing hits, exit 3 on a dump with no acquire and exit 2 on
// a bad setting.
func TestWhatifCommand(t *testing.T) {
	dump := "../../testdata/traces/ttl-and-redial.otlp.jsonl"
	out, _, err := execute(t, "whatif", "--format", "json", "--idle-ttl", "1m,5m", dump)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema string `json:"schema"`
		Rows   []struct {
			Settings      string         `json:"settings"`
			AsRecorded    bool           `json:"as_recorded"`
			Assumed       bool           `json:"assumed"`
			Acquires      int            `json:"acquires"`
			Hits          int            `json:"hits"`
			HitRate       float64        `json:"hit_rate"`
			MissesByCause map[string]int `json:"misses_by_cause"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got.Schema != "mcptrace.whatif/v1" || len(got.Rows) != 2 {
		t.Fatalf("schema %q, %d rows; want mcptrace.whatif/v1 and 2\n%s", got.Schema, len(got.Rows), out)
	}
	first, last := got.Rows[0], got.Rows[1]
	if !first.AsRecorded || !first.Assumed || first.Hits != 3 || first.MissesByCause["ttl"] != 1 || first.MissesByCause["redial"] != 1 || first.MissesByCause["cold"] != 1 {
		t.Errorf("first row %+v: want the as-recorded (assumed) row, 3 hits, cold/ttl/redial once", first)
	}
	if last.AsRecorded || last.HitRate >= first.HitRate {
		t.Errorf("last row %+v: want the 1m TTL, a lower hit rate than %v", last, first.HitRate)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"whatif", "../../testdata/traces/semconv.otlp.jsonl"}, 3},
		{[]string{"whatif", "--idle-per-key", "zero", dump}, 2},
		{[]string{"whatif", "--prewarm", "all", dump}, 2},
	} {
		_, _, err := execute(t, tc.args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != tc.code {
			t.Errorf("%v: error %v, want exit %d", tc.args, err, tc.code)
		}
	}
}
