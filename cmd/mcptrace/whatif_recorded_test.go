package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// whatifRow is the part of a mcptrace.whatif/v1 row these tests read.
type whatifRow struct {
	Settings      string         `json:"settings"`
	IdleTTL       float64        `json:"idle_ttl_s"`
	IdlePerKey    string         `json:"idle_per_key"`
	MaxIdle       int            `json:"max_idle"`
	AsRecorded    bool           `json:"as_recorded"`
	Assumed       bool           `json:"assumed"`
	Acquires      int            `json:"acquires"`
	Hits          int            `json:"hits"`
	MissesByCause map[string]int `json:"misses_by_cause"`
}

// asRecordedRow runs whatif --format json with args and returns its
// as-recorded row and the stderr.
func asRecordedRow(t *testing.T, args ...string) (whatifRow, string) {
	t.Helper()
	out, stderr, err := execute(t, append([]string{"whatif", "--format", "json"}, args...)...)
	if err != nil {
		t.Fatalf("whatif %v: %v\n%s", args, err, stderr)
	}
	var got struct {
		Rows []whatifRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range got.Rows {
		if r.AsRecorded {
			return r, stderr
		}
	}
	t.Fatalf("whatif %v: no as-recorded row\n%s", args, out)
	return whatifRow{}, ""
}

// seededDump runs the seeded demo workload (seed 5) against the fixture at
// the given settings and returns its dump's path.
func seededDump(t *testing.T, ttl, perKey string) string {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "seeded.jsonl")
	if _, _, err := execute(t, "demo", "--format", "json", "--out", dump, "--seed", "5", "--scopes", "3", "--executions", "10",
		"--idle-ttl", ttl, "--gap", "150ms", "--idle-per-key", perKey, "--prewarm", "none"); err != nil {
		t.Fatal(err)
	}
	return dump
}

// TestWhatifAsRecordedRowReadsTheDumpsSettings: on a seeded demo dump,
// whose pool recorded its settings on every acquire span, whatif without
// --recorded-* replays at those settings, says so (recorded, not assumed)
// and reproduces `mcptrace analyze`'s hits and misses by cause exactly; a
// --recorded-* flag overrides and the row is assumed; a dump recording no
// settings stays assumed; two runs at different settings under the same
// scope names are said to disagree, and assumed.
func TestWhatifAsRecordedRowReadsTheDumpsSettings(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dump := seededDump(t, "100ms", "1")

	got, stderr := asRecordedRow(t, dump)
	if got.Assumed || got.IdleTTL != 0.1 || got.IdlePerKey != "1" || got.MaxIdle != 64 || !strings.Contains(got.Settings, "idle-ttl=100ms") {
		t.Errorf("as-recorded row %+v: want the recorded 100ms, 1 per key (fixed), 64, not assumed (stderr %q)", got, stderr)
	}
	out, _, err := execute(t, "analyze", "--format", "json", "--idle-ttl", "100ms", dump)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Pool struct {
			Acquires    int            `json:"acquires"`
			Hits        int            `json:"hits"`
			MissReasons map[string]int `json:"miss_reasons"`
		} `json:"pool"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	maps.DeleteFunc(rep.Pool.MissReasons, func(_ string, n int) bool { return n == 0 })
	if rep.Pool.Acquires == 0 || got.Acquires != rep.Pool.Acquires || got.Hits != rep.Pool.Hits || !maps.Equal(got.MissesByCause, rep.Pool.MissReasons) {
		t.Errorf("as recorded: %d acquires %d hits %v; analyze: %d %d %v", got.Acquires, got.Hits, got.MissesByCause, rep.Pool.Acquires, rep.Pool.Hits, rep.Pool.MissReasons)
	}
	table, _, err := execute(t, "whatif", dump)
	if err != nil || !strings.Contains(table, "idle-ttl=100ms idle-per-key=1 max-idle=64 prewarm=none  (as recorded, settings recorded)") {
		t.Errorf("table (%v): want the row at 100ms labelled recorded\n%s", err, table)
	}

	if over, _ := asRecordedRow(t, "--recorded-idle-ttl", "1s", dump); !over.Assumed || over.IdleTTL != 1 || over.IdlePerKey != "1" {
		t.Errorf("--recorded-idle-ttl 1s: row %+v; want 1s, the recorded 1 per key, assumed", over)
	}
	if other, stderr := asRecordedRow(t, "../../testdata/traces/pooled.otlp.jsonl"); !other.Assumed || other.IdleTTL != 300 || stderr != "" {
		t.Errorf("pooled dump (no settings recorded): row %+v stderr %q; want the --recorded-* defaults, assumed, nothing said", other, stderr)
	}

	both := filepath.Join(t.TempDir(), "both.jsonl")
	a, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(seededDump(t, "200ms", "peak"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(both, append(a, b...), 0o600); err != nil {
		t.Fatal(err)
	}
	if mixed, stderr := asRecordedRow(t, both); !mixed.Assumed || !strings.Contains(stderr, "recorded different settings") {
		t.Errorf("two runs' settings under one scope's name: row %+v stderr %q; want assumed and the disagreement said", mixed, stderr)
	}
}
