package main

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// whatifRow is the part of a mcptrace.whatif/v1 row these tests read.
type whatifRow struct {
	Settings       string         `json:"settings"`
	IdleTTL        float64        `json:"idle_ttl_s"`
	IdlePerKey     string         `json:"idle_per_key"`
	MaxIdle        int            `json:"max_idle"`
	AsRecorded     bool           `json:"as_recorded"`
	Assumed        bool           `json:"assumed"`
	Acquires       int            `json:"acquires"`
	Hits           int            `json:"hits"`
	MissesByCause  map[string]int `json:"misses_by_cause"`
	SessionsOpened int            `json:"sessions_opened"`
}

// asRecordedRow runs whatif --format json with args and returns its
// as-recorded row and the stderr.
func asRecordedRow(t *testing.T, args ...string) (whatifRow, string) {
	t.Helper()
	out, stderr, err := execute(t, append([]string{"whatif", "--format", "json"}, args...)...)
	if err != nil {
		t.Fatalf("whatif %v: %v\n%s", args, err, stderr)
	}
	return parseAsRecorded(t, out), stderr
}

// parseAsRecorded returns the as-recorded row of whatif's JSON out.
func parseAsRecorded(t *testing.T, out string) whatifRow {
	t.Helper()
	var got struct {
		Rows []whatifRow `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, r := range got.Rows {
		if r.AsRecorded {
			return r
		}
	}
	t.Fatalf("whatif: no as-recorded row\n%s", out)
	return whatifRow{}
}

// seededDump runs the seeded demo workload (seed 5) against the fixture at
// the given settings and returns its dump's path.
func seededDump(t *testing.T, ttl, perKey string) string {
	t.Helper()
	dump := filepath.Join(t.TempDir(), "seeded.jsonl")
	if _, _, err := execute(t, "demo", "--format", "json", "--dump", dump, "--seed", "5", "--scopes", "3", "--executions", "10",
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
	if testing.Short() {
		t.Skip("runs the seeded demo's pool against a fixture at several settings, about 12 s")
	}
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
	if err != nil || !strings.Contains(table, "idle-ttl=100ms idle-per-key=1 max-idle=64 prewarm=as-recorded  (as recorded, settings recorded)") {
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

// analyzedPool is the part of `mcptrace analyze --format json`'s pool
// figures the as-recorded row is compared with.
type analyzedPool struct {
	Acquires    int            `json:"acquires"`
	Hits        int            `json:"hits"`
	Handshakes  int            `json:"handshakes"`
	MissReasons map[string]int `json:"miss_reasons"`
}

// analyzePool runs `mcptrace analyze --format json --idle-ttl ttl dump`
// and returns its pool figures, the causes it found none of left out.
func analyzePool(t *testing.T, dump string, ttl time.Duration) analyzedPool {
	t.Helper()
	out, stderr, err := execute(t, "analyze", "--format", "json", "--idle-ttl", ttl.String(), dump)
	if err != nil {
		t.Fatalf("analyze %s: %v\n%s", dump, err, stderr)
	}
	var rep struct {
		Pool analyzedPool `json:"pool"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("analyze %s: %v\n%s", dump, err, out)
	}
	maps.DeleteFunc(rep.Pool.MissReasons, func(_ string, n int) bool { return n == 0 })
	return rep.Pool
}

// committedDumps lists every dump under testdata/traces, its
// subdirectories included (the generated scenarios, the third-party
// corpus, the seeded demo's runs): every file but the golden reports and
// the READMEs beside them.
func committedDumps(t *testing.T) []string {
	t.Helper()
	var dumps []string
	err := filepath.WalkDir("../../testdata/traces", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if name := d.Name(); !strings.HasSuffix(name, ".golden.json") && !strings.HasSuffix(name, ".md") {
			dumps = append(dumps, path)
		}
		return nil
	})
	if err != nil || len(dumps) == 0 {
		t.Fatalf("testdata/traces: %d dumps (%v)", len(dumps), err)
	}
	return dumps
}

// TestWhatifAsRecordedEqualsAnalyzeOnEveryDumpThatRecordsItsSettings walks
// testdata/traces, so that a dump added later is covered too, and on every
// dump whose pool recorded its settings (the as-recorded row is labelled
// recorded with no --recorded-* flag) holds the replay at those settings
// to `mcptrace analyze` at the recorded TTL: the same acquires, hits,
// misses by cause, and sessions opened as handshakes. It fails when no
// committed dump records its settings: a check that ran on nothing.
func TestWhatifAsRecordedEqualsAnalyzeOnEveryDumpThatRecordsItsSettings(t *testing.T) {
	recorded := 0
	for _, dump := range committedDumps(t) {
		out, _, err := execute(t, "whatif", "--format", "json", dump)
		if err != nil {
			var ee *exitError
			if errors.As(err, &ee) && ee.code == 3 {
				continue // no acquire: nothing to replay
			}
			t.Fatalf("whatif %s: %v", dump, err)
		}
		row := parseAsRecorded(t, out)
		if row.Assumed {
			continue // another pool, or one older than the settings attributes
		}
		recorded++
		ttl := time.Duration(row.IdleTTL * float64(time.Second))
		an := analyzePool(t, dump, ttl)
		if row.Acquires == 0 || row.Acquires != an.Acquires || row.Hits != an.Hits || !maps.Equal(row.MissesByCause, an.MissReasons) || row.SessionsOpened != an.Handshakes {
			t.Errorf("%s at its recorded %s: whatif as recorded %d acquires %d hits %v %d sessions opened; analyze %d %d %v %d handshakes",
				dump, row.Settings, row.Acquires, row.Hits, row.MissesByCause, row.SessionsOpened, an.Acquires, an.Hits, an.MissReasons, an.Handshakes)
		}
	}
	if recorded == 0 {
		t.Fatal("no dump in testdata/traces records its pool settings: the as-recorded replay was compared with nothing")
	}
	t.Logf("%d dumps record their settings", recorded)
}
