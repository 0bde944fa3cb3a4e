package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestAnMcptraceRunsTraceNamesItsPhases runs the mcptrace CLI, built from
// this repository, with --exectrace on a dump of the repository's test
// data, and reads the trace: the phases the analyzer's goroutines ran in
// (package phase's trace regions) are what the report names, so a
// situation reads as decode, index or observe, not as a function name.
func TestAnMcptraceRunsTraceNamesItsPhases(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mcptrace")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcptrace")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build mcptrace: %v\n%s", err, out)
	}
	tr := filepath.Join(dir, "run.trace")
	dump := filepath.Join(root, "testdata", "traces", "pooled.otlp.jsonl")
	run := exec.Command(bin, "analyze", "--format", "json", "--exectrace", tr, dump)
	run.Env = append(os.Environ(), "GOMAXPROCS=2")
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("mcptrace analyze: %v\n%s", err, out)
	}
	f, err := os.Open(tr)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := Analyze(f)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, row := range rep.Rows {
		seen = append(seen, row.Ran...)
		for _, w := range row.Waiting {
			p, _, _ := strings.Cut(w, " @ ")
			seen = append(seen, p)
		}
	}
	for _, want := range []string{"decode", "read", "track"} {
		if !slices.Contains(seen, want) {
			t.Errorf("no idle situation names phase %s; the phases named: %v", want, slices.Compact(slices.Sorted(slices.Values(seen))))
		}
	}
	if rep.Procs != 2 {
		t.Errorf("%d procs, want the run's GOMAXPROCS, 2", rep.Procs)
	}
}
