package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/spans"
)

const traces = "../../testdata/traces/"

// runCLI runs mcptrace with args in-process, with stdin as given, and
// returns its exit code, standard output and standard error.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRootCmd()
	root.SetArgs(args)
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	err := root.ExecuteContext(t.Context())
	if err == nil {
		return 0, out.String(), errb.String()
	}
	errb.WriteString("mcptrace: " + err.Error() + "\n")
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, out.String(), errb.String()
	}
	return 2, out.String(), errb.String()
}

func decodeReport(t *testing.T, s string) report.Report {
	t.Helper()
	var r report.Report
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("output is not a JSON report: %v\n%s", err, s)
	}
	return r
}

func TestAnalyzeReportsTheColdStartFloorAsJSON(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	code, out, errs := runCLI(t, "", "analyze", "--format", "json", traces+"prod-cold-starts.otlp.jsonl")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	r := decodeReport(t, out)
	p := r.Pool
	if r.Schema != report.Schema || p.Acquires != 24 || p.Hits != 20 || p.Keys != 4 || p.ExcessMisses != 0 || p.HitRate == nil || *p.HitRate < 0.83 || *p.HitRate > 0.84 {
		t.Errorf("report: schema %s acquires %d hits %d keys %d excess %d hit rate %v", r.Schema, p.Acquires, p.Hits, p.Keys, p.ExcessMisses, p.HitRate)
	}
	if len(r.Inputs) != 1 || r.Inputs[0].Format != "otlp-json" {
		t.Errorf("inputs = %+v", r.Inputs)
	}
}

func TestAnalyzeDefaultsToATable(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	code, out, errs := runCLI(t, "", "analyze", traces+"per-call-dial.jaeger.json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"POOL", "MISSES BY CAUSE", "EXECUTIONS", "5 unexplained miss(es)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestAnalyzeFlagsReachTheAnalysis(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mcptrace.yaml")
	if err := os.WriteFile(cfg, []byte("measures:\n  - {name: reads, root: mcp.request, read: db.query, expect: 1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dumpDir := filepath.Join(dir, "dumps")
	for _, name := range []string{"per-call-dial.otlp.jsonl", "pooled.tempo.json"} {
		data, err := os.ReadFile(traces + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dumpDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dumpDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		args  []string
		check func(report.Report) bool
	}{
		{"--profile acquire-on-miss", []string{"--profile", "acquire-on-miss", traces + "acquire-on-miss.otlp.pb"},
			func(r report.Report) bool { return r.Pool.Acquires == 10 && r.Pool.Hits == 8 }},
		{"--profile semconv", []string{"--profile", "semconv", traces + "semconv.tempo.json"},
			func(r report.Report) bool { return r.Executions.MultiSession == 1 && r.Pool.Handshakes == 3 }},
		{"--idle-ttl", []string{"--idle-ttl", "10m", traces + "ttl-and-redial.otlp.jsonl"}, // the 7 min gap no longer expires
			func(r report.Report) bool { return r.Pool.MissReasons["ttl"] == 0 && r.Settings.IdleTTLSeconds == 600 }},
		{"--scope-attr", []string{"--scope-attr", spans.ResourceServiceName, traces + "prod-cold-starts.otlp.json"}, // one service, 4 instances
			func(r report.Report) bool { return r.Pool.Scopes == 1 && r.Pool.Keys == 4 }},
		{"--execution-root", []string{"--execution-root", "{name: executor.execute}", traces + "pooled.otlp.jsonl.gz"},
			func(r report.Report) bool {
				return r.Executions.Count == 3 && r.Executions.Root == "name=executor.execute"
			}},
		{"--config", []string{"--config", cfg, traces + "cold-init-two-reads.otlp.pb.zst"},
			func(r report.Report) bool {
				return len(r.Measures) == 1 && r.Measures[0].Requests == 3 && r.Measures[0].Unexpected == 3
			}},
		{"--input-format and --workers", []string{"--input-format", "otlp-json", "--workers", "1", traces + "pooled.otlp.json"},
			func(r report.Report) bool { return r.Pool.Hits == 5 }},
		{"a file and a glob", []string{traces + "pooled.otlp.jsonl", traces + "pooled.otlp.p?"}, // the same spans twice count once
			func(r report.Report) bool { return len(r.Inputs) == 2 && r.Spans == 22 && r.DuplicateSpans == 22 }},
		{"a directory", []string{dumpDir},
			func(r report.Report) bool {
				return len(r.Inputs) == 2 && r.Spans == 27+22 && r.Executions.MultiSession == 3
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"analyze", "--format", "json"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			if r := decodeReport(t, out); !tt.check(r) {
				t.Errorf("the report does not reflect %s:\n%s", tt.name, out)
			}
		})
	}
}

func TestAnalyzeReadsStdin(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	data, err := os.ReadFile(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI(t, string(data), "analyze", "--format", "markdown", "-")
	if code != 0 || !strings.Contains(out, "### Pool") {
		t.Errorf("exit %d, stderr %s, stdout:\n%s", code, errs, out)
	}
}

func TestAnalyzeDamagedInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	data, err := os.ReadFile(traces + "prod-cold-starts.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	truncated := filepath.Join(dir, "truncated.jsonl")
	// Keep the first line whole and cut the second in the middle.
	first := bytes.IndexByte(data, '\n') + 1
	if err := os.WriteFile(truncated, data[:first+(bytes.IndexByte(data[first:], '\n'))/2], 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(dir, "garbage.jsonl")
	if err := os.WriteFile(garbage, []byte("this is not a trace dump\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	code, out, errs := runCLI(t, "", "analyze", "--format", "json", truncated)
	if code != 0 {
		t.Fatalf("a truncated dump is analyzed with a warning, got exit %d: %s", code, errs)
	}
	if r := decodeReport(t, out); !r.Partial || r.Spans == 0 || !r.Inputs[0].Partial {
		t.Errorf("report of a truncated dump: partial %v spans %d", r.Partial, r.Spans)
	}
	if !strings.Contains(errs, "warning") || !strings.Contains(errs, "truncated.jsonl") {
		t.Errorf("stderr must warn about the damaged file, got %q", errs)
	}

	code, _, errs = runCLI(t, "", "analyze", "--strict", truncated)
	if code != 2 || !strings.Contains(errs, "truncated.jsonl") {
		t.Errorf("--strict on a truncated dump: exit %d, stderr %q; want 2 naming the file", code, errs)
	}
	code, _, errs = runCLI(t, "", "analyze", garbage)
	if code != 2 || !strings.Contains(errs, "garbage.jsonl") || !strings.Contains(errs, "expected") {
		t.Errorf("garbage: exit %d, stderr %q; want 2 naming the file and what was expected", code, errs)
	}
}

func TestAnalyzeUsageErrorsExit2(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	badCfg := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badCfg, []byte("measures:\n  - name: x\n    root: {name_regex: '(('}\n    read: y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dump := traces + "pooled.otlp.jsonl"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no path", []string{"analyze"}, "at least one PATH"},
		{"bad format", []string{"analyze", "--format", "xml", dump}, `--format "xml"`},
		{"bad input format", []string{"analyze", "--input-format", "csv", dump}, "--input-format"},
		{"bad profile", []string{"analyze", "--profile", "fancy", dump}, "--profile"},
		{"bad ttl", []string{"analyze", "--idle-ttl", "0s", dump}, "--idle-ttl"},
		{"bad workers", []string{"analyze", "--workers", "-1", dump}, "--workers"},
		{"negative window", []string{"analyze", "--window", "-1s", dump}, "--window"},
		{"negative shards", []string{"analyze", "--shards", "-2", dump}, "--shards"},
		{"window with html", []string{"analyze", "--format", "html", "-o", filepath.Join(dir, "r.html"), "--max-open-traces", "9", dump}, "--format html"},
		{"bad execution root", []string{"analyze", "--execution-root", "{kind: sideways}", dump}, `kind "sideways"`},
		{"bad config", []string{"analyze", "--config", badCfg, dump}, "bad.yaml:3:"},
		{"missing config", []string{"analyze", "--config", filepath.Join(dir, "none.yaml"), dump}, "none.yaml"},
		{"missing dump", []string{"analyze", filepath.Join(dir, "none.jsonl")}, "none.jsonl"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errs := runCLI(t, "", tt.args...)
			if code != 2 || !strings.Contains(errs, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errs, tt.want)
			}
		})
	}
}

// TestAnalyzeStreamingFlagsReachTheEngine pins that --window and
// --max-open-traces stream the dump (the report says so) with the batch
// run's figures on a dump whose traces are whole, and that a plain run,
// whatever --shards, has no stream section.
func TestAnalyzeStreamingFlagsReachTheEngine(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dump := traces + "prod-cold-starts.otlp.jsonl"
	tests := []struct {
		name   string
		args   []string
		stream bool
	}{
		{"batch", nil, false},
		{"batch on three shards", []string{"--shards", "3"}, false},
		{"window", []string{"--window", "1m"}, true},
		{"window and bound", []string{"--window", "1h", "--max-open-traces", "1000", "--shards", "2"}, true},
	}
	_, want, _ := runCLI(t, "", "analyze", "--format", "json", dump)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", append([]string{"analyze", "--format", "json", dump}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			r := decodeReport(t, out)
			if (r.Stream != nil) != tt.stream {
				t.Fatalf("stream section = %+v, want present: %v", r.Stream, tt.stream)
			}
			if r.Stream != nil && (r.Stream.LateSpans != 0 || r.Stream.CutTraces != 0) {
				t.Errorf("stream = %+v: nothing is late or cut in this dump", r.Stream)
			}
			r.Stream = nil
			w := decodeReport(t, want)
			if r.Pool.Acquires != w.Pool.Acquires || r.Pool.Hits != w.Pool.Hits || r.Spans != w.Spans || r.Traces != w.Traces ||
				!reflect.DeepEqual(r.Pool.MissReasons, w.Pool.MissReasons) {
				t.Errorf("figures differ from the batch run's: pool %+v, want %+v", r.Pool, w.Pool)
			}
		})
	}
}

func TestHumanCount(t *testing.T) {
	for n, want := range map[int]string{999: "999", 12_345: "12.3k", 1_000_000: "1M", 1_250_000: "1.2M"} {
		if got := humanCount(n); got != want {
			t.Errorf("humanCount(%d) = %s, want %s", n, got, want)
		}
	}
}

// TestHumanBytesNamesBinaryUnits pins that a size counted in powers of
// 1024 is named in them (15 MiB, never "15.0 MB", which is 15 x 10^6
// bytes), at each unit's edge, with a tenth only where it is not zero.
func TestHumanBytesNamesBinaryUnits(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1 KiB", 1536: "1.5 KiB",
		1<<20 - 1: "1024 KiB", 1 << 20: "1 MiB", 15 << 20: "15 MiB", 15<<20 + 3<<19: "16.5 MiB",
		1 << 30: "1 GiB", 5<<30 + 1<<29: "5.5 GiB",
	} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
