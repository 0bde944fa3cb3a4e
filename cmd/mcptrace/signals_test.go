package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcptrace/mcptrace/internal/testbound"
)

// TestSignalHelperProcess is not a test: TestInterruptExits130 runs the test
// binary again with MCPTRACE_SIGNAL_HELPER set, and this function then acts
// as the mcptrace command on the arguments after "--", saying "ready" on
// stderr once its signal handling is in place.
func TestSignalHelperProcess(t *testing.T) {
	if os.Getenv("MCPTRACE_SIGNAL_HELPER") != "1" {
		t.Skip("helper process for TestInterruptExits130")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	hold := os.Getenv("MCPTRACE_SIGNAL_HOLD")
	phaseHook = func(phase string) {
		os.Stderr.WriteString("phase " + phase + "\n")
		if phase == hold {
			select {} // a phase stuck where no context is looked at
		}
	}
	ctx, stop := signalContext()
	defer stop()
	os.Stderr.WriteString("ready\n")
	os.Exit(run(ctx, args))
}

// Every command stopped by SIGINT or SIGTERM exits 130, saying so, even
// while blocked reading an idle stdin that never closes.
func TestInterruptExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	cases := []struct {
		name string
		sig  syscall.Signal
		args []string
	}{
		{"analyze on idle stdin, SIGINT", syscall.SIGINT, []string{"analyze", "-"}},
		{"check on idle stdin, SIGTERM", syscall.SIGTERM, []string{"check", "-"}},
		{"diff on idle stdin, SIGINT", syscall.SIGINT, []string{"diff", "-", "../../testdata/traces/pooled.otlp.jsonl"}},
		{"live demo, SIGINT", syscall.SIGINT, []string{"demo", "--duration", "10m"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pr, pw, err := os.Pipe() // stdin: never written, never closed while the child runs
			if err != nil {
				t.Fatal(err)
			}
			defer pw.Close()
			cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSignalHelperProcess$", "--"}, tc.args...)...)
			cmd.Env = append(os.Environ(), "MCPTRACE_SIGNAL_HELPER=1")
			cmd.Stdin = pr
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pr.Close()
			lines := bufio.NewScanner(stderr)
			if !lines.Scan() || lines.Text() != "ready" {
				t.Fatalf("helper did not start: %q", lines.Text())
			}
			var rest strings.Builder
			signalAndJudge(t, cmd, lines, &rest, tc.sig, "")
		})
	}
}

// longNamesDump writes 80 traces whose span names are 20 KB each: a
// selector's regex takes seconds per rule over them.
func longNamesDump(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	long := strings.Repeat("ab", 10_000)
	for i := range 80 {
		fmt.Fprintf(&b, `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"call.%s.%d","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600100000000"}]}]}]}`+"\n", i+1, i+1, long, i)
	}
	return writeTemp(t, "long-names.jsonl", b.String())
}

// heavyRules writes a rules file of n rules, each with a regex just within
// the work budget over longNamesDump: together they run for a minute and
// more unless the rules phase answers the signal.
func heavyRules(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - id: heavy-%d\n    scope: trace\n    select: {name_regex: '(?:[a-z]?){70}(?:[a-z]?){70}Q%d'}\n    expect: {of: count, op: \"<=\", than: 5}\n", i, i)
	}
	return writeTemp(t, "heavy.yaml", b.String())
}

// manyScopesDump writes one cold acquire in each of n pool scopes: the
// JSON report of it is far larger than a pipe's buffer.
func manyScopesDump(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.instance.id","value":{"stringValue":"scope-%d"}}]},"scopeSpans":[{"spans":[{"traceId":"%032x","spanId":"%016x","name":"plugin.mcp.connection.acquire","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600100000000","attributes":[{"key":"plugin.mcp.cache_hit","value":{"boolValue":false}},{"key":"plugin.mcp.miss_reason","value":{"stringValue":"cold"}},{"key":"plugin.mcp.cache_key","value":{"stringValue":"k%d"}}]}]}]}]}`+"\n", i, i+1, i+1, i)
	}
	return writeTemp(t, "many-scopes.jsonl", b.String())
}

func writeTemp(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// SIGINT and SIGTERM answer in every phase of a command that reads dumps
// (read, index, measures, rules, render), whatever the phase is doing: a
// phase held where it looks at no context (the helper's hook blocks in it),
// the rules phase running heavy regexes for real (a minute of work), the
// render phase blocked writing to a pipe nobody reads. Each case signals
// the built command once it says it entered the phase, and wants exit 130
// with "interrupted"; the bound is against a hang, not a speed assertion.
func TestInterruptAnswersInEveryPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the command in a child process")
	}
	pooled := "../../testdata/traces/pooled.otlp.jsonl"
	cases := []struct {
		name, phase, hold string
		sig               syscall.Signal
		args              func(t *testing.T) []string
		undrainedStdout   bool
	}{
		{name: "check held in read", phase: phaseRead, hold: phaseRead, sig: syscall.SIGINT, args: func(*testing.T) []string { return []string{"check", pooled} }},
		{name: "check held in index", phase: phaseIndex, hold: phaseIndex, sig: syscall.SIGTERM, args: func(*testing.T) []string { return []string{"check", pooled} }},
		{name: "check held in measures", phase: phaseMeasures, hold: phaseMeasures, sig: syscall.SIGINT, args: func(*testing.T) []string { return []string{"check", pooled} }},
		{name: "check held in rules", phase: phaseRules, hold: phaseRules, sig: syscall.SIGTERM, args: func(*testing.T) []string { return []string{"check", pooled} }},
		{name: "check held in render", phase: phaseRender, hold: phaseRender, sig: syscall.SIGINT, args: func(*testing.T) []string { return []string{"check", pooled} }},
		{name: "analyze held in render", phase: phaseRender, hold: phaseRender, sig: syscall.SIGTERM, args: func(*testing.T) []string { return []string{"analyze", pooled} }},
		{name: "check running heavy regex rules", phase: phaseRules, sig: syscall.SIGINT, args: func(t *testing.T) []string {
			return []string{"check", "--config", heavyRules(t, 12), longNamesDump(t)}
		}},
		{name: "analyze writing to a pipe nobody reads", phase: phaseRender, sig: syscall.SIGTERM, undrainedStdout: true, args: func(t *testing.T) []string {
			return []string{"analyze", "--format", "json", manyScopesDump(t, 3000)}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stdout io.Writer
			if tc.undrainedStdout {
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pr.Close() // never read: the child's writes block once the buffer is full
				defer pw.Close()
				stdout = pw
			}
			cmd, lines, seen := startHelper(t, tc.hold, tc.phase, stdout, tc.args(t)...)
			signalAndJudge(t, cmd, lines, seen, tc.sig, " in phase "+tc.phase)
		})
	}
}

// signalAndJudge sends sig to cmd, reads the rest of its stderr (lines) into
// seen, and fails t unless cmd ends within a bound with the interrupted exit
// code, saying so. The bound is against a hang, not a speed assertion; a
// child still running then is killed and waited for, so no goroutine is
// left behind. where is added to the failure messages.
func signalAndJudge(t *testing.T, cmd *exec.Cmd, lines *bufio.Scanner, seen *strings.Builder, sig os.Signal, where string) {
	t.Helper()
	bound, stopBound := testbound.Context(t)
	defer stopBound()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for lines.Scan() {
			seen.WriteString(lines.Text() + "\n")
		}
		done <- cmd.Wait()
	}()
	var werr error
	select {
	case werr = <-done:
	case <-bound.Done():
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running at the test binary's deadline after %v%s; stderr:\n%s", sig, where, seen.String())
	}
	var ee *exec.ExitError
	if !errors.As(werr, &ee) || ee.ExitCode() != exitInterrupted {
		t.Errorf("exit: %v, want code %d%s; stderr:\n%s", werr, exitInterrupted, where, seen.String())
	}
	if !strings.Contains(seen.String(), "interrupted") {
		t.Errorf("stderr does not say the command was interrupted%s:\n%s", where, seen.String())
	}
}

// startHelper runs the signal helper process on args and waits for it to
// say it entered phase (held there when hold); it returns the command
// and its stderr. stdout, when not nil, is the child's standard output.
func startHelper(t *testing.T, hold, phase string, stdout io.Writer, args ...string) (*exec.Cmd, *bufio.Scanner, *strings.Builder) {
	t.Helper()
	bound, stopBound := testbound.Context(t)
	defer stopBound()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestSignalHelperProcess$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), "MCPTRACE_SIGNAL_HELPER=1", "MCPTRACE_SIGNAL_HOLD="+hold)
	cmd.Stdout = stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var seen strings.Builder
	entered := make(chan bool, 1)
	go func() {
		for lines.Scan() {
			seen.WriteString(lines.Text() + "\n")
			if lines.Text() == "phase "+phase {
				entered <- true
				return
			}
		}
		entered <- false
	}()
	select {
	case ok := <-entered:
		if ok {
			return cmd, lines, &seen
		}
	case <-bound.Done(): // against a hang, at the test binary's deadline
		cmd.Process.Kill()
		<-entered // the scanner is done with seen once stderr closes
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("the command never entered phase %s; stderr:\n%s", phase, seen.String())
	return nil, nil, nil
}
