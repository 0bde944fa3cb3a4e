package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// shiftedDump writes the pooled scenario's dump to path with every span
// moved by d: the same traffic, another run.
func shiftedDump(t *testing.T, path string, d time.Duration) {
	t.Helper()
	raw, err := os.ReadFile(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range td.ResourceSpans().All() {
			for _, ss := range rs.ScopeSpans().All() {
				for _, sp := range ss.Spans().All() {
					sp.SetStartTimestamp(pcommon.NewTimestampFromTime(sp.StartTimestamp().AsTime().Add(d)))
					sp.SetEndTimestamp(pcommon.NewTimestampFromTime(sp.EndTimestamp().AsTime().Add(d)))
				}
			}
		}
		b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSeveralRunsAreSaidAndSplitOnRequest pins analyze over inputs of two
// runs an hour apart: one report says it merged them, and --split-by run
// reports each apart, each report holding its run's input and window;
// inputs of one run give one report either way.
func TestSeveralRunsAreSaidAndSplitOnRequest(t *testing.T) {
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	shiftedDump(t, first, 0)
	shiftedDump(t, second, time.Hour)

	code, out, errOut := runCLI(t, "", "analyze", dir)
	if code != 0 || !strings.Contains(out, "SEVERAL RUNS: the 2 inputs hold 2 runs") || !strings.Contains(out, "--split-by run") {
		t.Fatalf("merged: exit %d, want 0 with the several-runs note:\n%s%s", code, out, errOut)
	}

	code, out, errOut = runCLI(t, "", "analyze", "--split-by", "run", "--format", "json", dir)
	if code != 0 {
		t.Fatalf("split: exit %d:\n%s", code, errOut)
	}
	dec := json.NewDecoder(strings.NewReader(out))
	var reps []report.Report
	for {
		var r report.Report
		if err := dec.Decode(&r); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("split JSON: %v\n%s", err, out)
		}
		reps = append(reps, r)
	}
	if len(reps) != 2 {
		t.Fatalf("split JSON: %d reports, want 2", len(reps))
	}
	for k, want := range []string{first, second} {
		r := reps[k]
		if len(r.Inputs) != 1 || r.Inputs[0].Path != want || r.Spans != 22 || r.Pool.Acquires != 6 {
			t.Errorf("run %d: inputs %+v, %d spans, %d acquires; want %s alone, 22 spans, 6 acquires", k+1, r.Inputs, r.Spans, r.Pool.Acquires, want)
		}
		if r.Window.Start == nil || !r.Window.Start.Equal(*r.Inputs[0].Window.Start) {
			t.Errorf("run %d: window %v, want its input's %v", k+1, r.Window, r.Inputs[0].Window)
		}
	}

	code, out, _ = runCLI(t, "", "analyze", "--split-by", "run", dir)
	if code != 0 || strings.Count(out, "=== Run ") != 2 || !strings.Contains(out, "=== Run 2 of 2: "+second) {
		t.Errorf("split table: exit %d, want two headed reports:\n%s", code, out)
	}

	code, out, _ = runCLI(t, "", "analyze", "--split-by", "run", first)
	if code != 0 || strings.Contains(out, "=== Run") || strings.Contains(out, "SEVERAL RUNS") {
		t.Errorf("one run: exit %d, want one report with no heading and no note:\n%s", code, out)
	}
}

func TestSplitByRefusesWhatItCannotSplit(t *testing.T) {
	dir := t.TempDir()
	shiftedDump(t, filepath.Join(dir, "a.jsonl"), 0)
	raw, err := os.ReadFile(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	later := filepath.Join(dir, "later.jsonl")
	shiftedDump(t, later, time.Hour)
	for _, tc := range []struct {
		name, stdin string
		args        []string
		want        string
	}{
		{"html", "", []string{"--format", "html", dir}, "does not apply to --format html"},
		{"stdin", string(raw), []string{"-", later}, "standard input cannot be"},
		{"a mistyped value", "", []string{"--split-by", "rn", dir}, "did you mean run?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"analyze", "--split-by", "run"}, tc.args...)
			code, _, errOut := runCLI(t, tc.stdin, args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want 2 with %q:\n%s", code, tc.want, errOut)
			}
		})
	}
}
