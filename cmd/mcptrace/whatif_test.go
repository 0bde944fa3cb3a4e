package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
		{[]string{"whatif", "../../testdata/traces/cold-init-one-read.otlp.jsonl"}, 3}, // no pool spans, no session-bearing calls
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

// TestWhatifFormats pins the other outputs: JSON's best_per_cost (one per
// cost, in the table's order), Markdown for a pull request, the HTML page
// written to -o FILE, and -o or a format the command does not know as
// usage errors (exit 2) that write nothing.
func TestWhatifFormats(t *testing.T) {
	dump := "../../testdata/traces/ttl-and-redial.otlp.jsonl"
	out, _, err := execute(t, "whatif", "--format", "json", "--idle-ttl", "1m,5m", dump)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Best []struct {
			Cost       string `json:"cost"`
			AsRecorded bool   `json:"as_recorded"`
		} `json:"best_per_cost"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	costs := []string{}
	for _, b := range got.Best {
		costs = append(costs, b.Cost)
		if !b.AsRecorded {
			t.Errorf("%s: best is not the as-recorded row, yet the 1m TTL only loses hits", b.Cost)
		}
	}
	want := []string{"sessions_opened", "peak_sessions", "idle_session_seconds", "prewarm_unused"}
	if !slices.Equal(costs, want) {
		t.Errorf("best_per_cost costs %v, want %v", costs, want)
	}
	table, _, err := execute(t, "whatif", "--idle-ttl", "1m,5m", dump)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(table, "\n  at most "); n != len(want) {
		t.Errorf("table: %d best-per-cost lines, want %d\n%s", n, len(want), table)
	}
	md, _, err := execute(t, "whatif", "--format", "markdown", "--idle-ttl", "1m,5m", dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## mcptrace whatif", "| `idle-ttl=5m0s idle-per-key=peak max-idle=64 prewarm=none` (as recorded, settings assumed) |", "- at most ", "out of scope: "} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q\n%s", want, md)
		}
	}
	page := filepath.Join(t.TempDir(), "whatif.html")
	if _, _, err := execute(t, "whatif", "--format", "html", "-o", page, "--idle-ttl", "1m,5m", dump); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.HasPrefix(string(b), "<!DOCTYPE html>") || strings.Count(string(b), "<svg ") != 2 {
		t.Errorf("%s: %v; want the page with its two charts", page, err)
	}
	// -o takes every format, as analyze's does: the file holds byte for
	// byte what standard output would, and --quiet prints nothing.
	table2, _, err := execute(t, "whatif", "--idle-ttl", "1m,5m", dump)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "whatif.txt")
	if out, _, err := execute(t, "whatif", "-q", "-o", file, "--idle-ttl", "1m,5m", dump); err != nil || out != "" {
		t.Fatalf("whatif -q -o: %v, stdout %q", err, out)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != table2 {
		t.Errorf("-o %s (%v) holds\n%s\nwant what stdout held\n%s", file, err, b, table2)
	}
	for _, args := range [][]string{
		{"whatif", "--format", "xml", dump},
		{"whatif", "-o", t.TempDir(), dump}, // a directory
	} {
		_, _, err := execute(t, args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("%v: error %v, want exit 2", args, err)
		}
	}
}

// TestWhatifReadsEveryVocabularyTheAnalyzerReads replays the corpus dumps
// third-party instrumentations wrote (profile auto, as analyze): the
// as-recorded row replays every acquire analyze reads. (Its hits may differ
// by the calls such a client overlaps on one session, which the model of an
// exclusive-lease pool counts as concurrent misses.)
func TestWhatifReadsEveryVocabularyTheAnalyzerReads(t *testing.T) {
	for _, pkg := range []string{"openllmetry", "shinzo"} {
		t.Run(pkg, func(t *testing.T) {
			dump := filepath.Join("..", "..", "testdata", "traces", "corpus", pkg, "pooled.jsonl")
			code, out, errOut := runCLI(t, "", "analyze", "--format", "json", dump)
			if code != 0 {
				t.Fatalf("analyze exit %d: %s", code, errOut)
			}
			var an struct {
				Pool struct{ Acquires, Hits int } `json:"pool"`
			}
			if err := json.Unmarshal([]byte(out), &an); err != nil {
				t.Fatal(err)
			}
			code, out, errOut = runCLI(t, "", "whatif", "--format", "json", dump)
			if code != 0 {
				t.Fatalf("whatif exit %d: %s", code, errOut)
			}
			var wi struct {
				Rows []struct {
					AsRecorded     bool `json:"as_recorded"`
					Acquires, Hits int
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &wi); err != nil {
				t.Fatal(err)
			}
			for _, r := range wi.Rows {
				if r.AsRecorded && (r.Acquires != an.Pool.Acquires || r.Acquires == 0) {
					t.Errorf("whatif as recorded: %d acquires, %d hits; analyze: %d, %d", r.Acquires, r.Hits, an.Pool.Acquires, an.Pool.Hits)
				}
			}
		})
	}
}

// TestWhatifReadsDumpsWithAnalyzesFlags: whatif takes analyze's dump
// flags where they mean the same: --profile decides what a dump's spans
// are (the OpenLLMetry corpus read as our own vocabulary holds no acquire:
// exit 3; as openllmetry, its 15), a bad one is a usage error naming it,
// and standard input reads as with analyze; --execution-root, which the
// replay does not read, is no whatif flag, and --idle-ttl stays whatif's
// list of TTLs to replay.
func TestWhatifReadsDumpsWithAnalyzesFlags(t *testing.T) {
	corpus := filepath.Join("..", "..", "testdata", "traces", "corpus", "openllmetry", "pooled.jsonl")
	pooled := "../../testdata/traces/pooled.otlp.jsonl"
	stdin, err := os.ReadFile(pooled)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  string // in stdout, or in stderr when the code is not 0
	}{
		{"openllmetry read as openllmetry", "", []string{"whatif", "--profile", "openllmetry", corpus}, 0, "  15  "},
		{"openllmetry read as mcptrace", "", []string{"whatif", "--profile", "mcptrace", corpus}, 3, "no acquire"},
		{"a bad profile", "", []string{"whatif", "--profile", "bogus", pooled}, 2, "--profile"},
		{"standard input", string(stdin), []string{"whatif", "--idle-ttl", "1m,5m", "-"}, 0, "idle-ttl=1m0s"},
		{"no --execution-root", "", []string{"whatif", "--execution-root", "x", pooled}, 2, "unknown flag: --execution-root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, tc.stdin, tc.args...)
			got := out
			if tc.code != 0 {
				got = errOut
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Errorf("%v: exit %d, want %d with %q in\n%s", tc.args, code, tc.code, tc.want, got)
			}
		})
	}
}
