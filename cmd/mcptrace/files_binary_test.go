package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcptrace/mcptrace/internal/testbound"
)

// exitCode is the exit status of a finished command's error.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("command did not run: %v", err)
	return -1
}

// A write to a full standard output is exit 2 naming it, for every
// command that prints: nothing the user asked for was delivered.
func TestAFullStandardOutputIsExit2(t *testing.T) {
	bin := builtBinary(t)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer full.Close()
	for _, args := range [][]string{
		{"rules", "--builtin"},
		{"rules", "../../testdata/rules/pool.yaml"},
		{"fixture", "list"},
		{"analyze", traces + "pooled.otlp.jsonl"},
		{"version"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Stdout = full
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		code := exitCode(t, cmd.Run())
		if code != 2 || !strings.Contains(stderr.String(), "standard output") {
			t.Errorf("%v >/dev/full: exit %d, stderr %q; want 2 naming standard output", args, code, stderr.String())
		}
	}
}

// check whose standard output is a pipe nobody reads any more still
// writes the files it was asked for (--junit, --summary), whole, then
// reports the closed pipe: exit 2.
func TestABrokenStandardOutputStillWritesTheFiles(t *testing.T) {
	bin := builtBinary(t)
	dir := t.TempDir()
	junit, summary := filepath.Join(dir, "check.xml"), filepath.Join(dir, "summary.md")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	pr.Close() // the reader is gone before the first write
	defer pw.Close()
	cmd := exec.Command(bin, "check", "--junit", junit, "--summary", summary, traces+"per-call-dial.otlp.jsonl")
	cmd.Stdout = pw
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	code := exitCode(t, cmd.Run())
	if code != 2 || !strings.Contains(stderr.String(), "broken pipe") {
		t.Errorf("exit %d, stderr %q; want 2 naming the broken pipe", code, stderr.String())
	}
	if x, err := os.ReadFile(junit); err != nil || !bytes.Contains(x, []byte("</testsuites>")) || !bytes.Contains(x, []byte("<failure")) {
		t.Errorf("--junit: %v, %.200q; want the whole verdict (a failing rule)", err, x)
	}
	if md, err := os.ReadFile(summary); err != nil || len(md) == 0 {
		t.Errorf("--summary: %v, %d bytes", err, len(md))
	}
}

// fifo makes a named pipe in a temporary directory and feeds it data from
// a goroutine, holding it open after data until the returned func is
// called (hold) or closing it (no hold).
func fifo(t *testing.T, data []byte, hold bool) (string, func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "dump.fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	release := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		defer w.Close()
		w.Write(data)
		if hold {
			<-release
		}
	}()
	var once bool
	return p, func() {
		if !once {
			once = true
			close(release)
			// Unblock an open still waiting for a reader.
			if r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				r.Close()
			}
			<-done
		}
	}
}

// A dump on a named pipe (as a shell's <(...) or /dev/fd/N gives it)
// whose trace gets a span after its root is read once and analysed: the
// report of the file, not "empty file" from a second read.
func TestADumpOnAPipeIsReadOnce(t *testing.T) {
	bin := builtBinary(t)
	data := lateSpanDump(t, 2000)
	file := writeTemp(t, "late.jsonl", string(data))
	want, err := exec.Command(bin, "analyze", "--format", "json", file).Output()
	if err != nil {
		t.Fatalf("analyze the file: %v", err)
	}
	p, stop := fifo(t, data, false)
	defer stop()
	// A second open of the pipe would wait for a writer forever: the
	// binary's deadline ends that hang.
	ctx, cancel := testbound.Context(t)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, "analyze", "--format", "json", p)
	cmd.Stderr = &stderr
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("analyze the pipe: %v; stderr %s", err, stderr.String())
	}
	strip := func(b []byte) string { // the inputs' paths differ
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, `"path"`) {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if strip(got) != strip(want) {
		t.Errorf("the pipe's report differs from the file's")
	}
}

// SIGTERM while a report is being written leaves the previous report
// whole and no temporary file beside it: exit 130.
func TestASignalMidWriteLeavesThePreviousFileWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	for _, tc := range []struct {
		name string
		args func(out string) []string
	}{
		{"analyze -o", func(out string) []string { return []string{"analyze", "-o", out, traces + "pooled.otlp.jsonl"} }},
		{"check --summary", func(out string) []string {
			return []string{"check", "--summary", out, traces + "pooled.otlp.jsonl"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "report")
			if err := os.WriteFile(out, []byte("the previous report\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd, lines, seen := startHelper(t, phaseWriting, phaseWriting, nil, tc.args(out)...)
			signalAndJudge(t, cmd, lines, seen, syscall.SIGTERM, " while writing")
			if got, _ := os.ReadFile(out); string(got) != "the previous report\n" {
				t.Errorf("the previous report now holds %.80q", got)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("directory holds %d entries, want the report alone: %v", len(entries), entries)
			}
		})
	}
}

// SIGTERM while a baseline is read from a pipe that has stopped sending
// answers at once: exit 130.
func TestASignalDuringTheBaselineReadExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	head, err := os.ReadFile(traces + "pooled.otlp.jsonl.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	p, stop := fifo(t, head[:len(head)/2], true) // half a baseline, then nothing
	defer stop()
	cmd, lines, seen := startHelper(t, "", phaseRead, nil, "check", "--baseline", p, traces+"pooled.otlp.jsonl")
	signalAndJudge(t, cmd, lines, seen, syscall.SIGTERM, " reading the baseline")
}

// An output that is the file on standard input is refused like any other
// input: exit 2, the file as it was.
func TestAnOutputThatIsStandardInputIsRefused(t *testing.T) {
	bin := builtBinary(t)
	in := copyInto(t, traces+"pooled.otlp.jsonl", t.TempDir(), "in.jsonl")
	before, _ := os.ReadFile(in)
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, "analyze", "-o", in, "-")
	cmd.Stdin = f
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if code := exitCode(t, cmd.Run()); code != 2 || !strings.Contains(stderr.String(), "input -") {
		t.Errorf("exit %d, stderr %q; want 2 naming the input -", code, stderr.String())
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(after, before) {
		t.Errorf("the input changed: %d bytes, was %d", len(after), len(before))
	}
}
