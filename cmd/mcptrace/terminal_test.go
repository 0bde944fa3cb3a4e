package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runOnTerminal runs the built binary with args under script(1), whose
// pseudo-terminal is the binary's stdin, stdout and stderr: a real
// terminal, as a person at a shell has. It returns the exit code and what
// the terminal showed (stdout and stderr together). env replaces the
// NO_COLOR and TERM of the test's environment.
func runOnTerminal(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	script, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to run the binary on a pseudo-terminal")
	}
	quoted := []string{shellQuote(bin)}
	for _, a := range args {
		quoted = append(quoted, shellQuote(a))
	}
	cmd := exec.Command(script, "-qec", strings.Join(quoted, " "), "/dev/null")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "NO_COLOR=") && !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "GITHUB_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, append([]string{"TERM=xterm"}, env...)...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, string(out)
	case errors.As(err, &ee):
		return ee.ExitCode(), string(out)
	}
	t.Fatalf("script %v: %v", args, err)
	return 0, ""
}

// TestProgressShowsOnATerminalOnly pins the progress line on the demo,
// the longest run: on a terminal its workload shows how far it has got, in
// place (carriage return, erase line) and erased at the end; through a
// pipe, as in a CI log, not one byte of it.
func TestProgressShowsOnATerminalOnly(t *testing.T) {
	bin := builtBinary(t)
	dump := filepath.Join(t.TempDir(), "demo.jsonl")
	args := []string{"demo", "--mode", "pooled", "--scopes", "1", "--executions", "5", "--dump", dump}
	code, screen := runOnTerminal(t, bin, nil, args...)
	if code != 0 || !strings.Contains(screen, "\r\033[Kpooled: 1/5 executions (20%)") || !strings.Contains(screen, "\r\033[Kanalyzing "+dump) {
		t.Errorf("on a terminal: exit %d, no progress line for the workload and the read-back:\n%q", code, screen)
	}
	if i := strings.LastIndex(screen, "\r\033[K"); i < 0 || strings.Contains(screen[i:], "analyzing") {
		t.Errorf("the last progress line is not erased before the report:\n%q", screen)
	}
	code, out, errOut := runBinary(t, bin, nil, args...)
	if code != 0 || strings.Contains(errOut+out, "executions (") || strings.Contains(errOut+out, "\r") {
		t.Errorf("through a pipe: exit %d, progress written:\nstderr %q\nstdout %q", code, errOut, out)
	}
	// Reading stdin on a terminal-less stderr shows nothing either.
	data, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "analyze", "-")
	cmd.Stdin = strings.NewReader(string(data))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil || strings.Contains(stderr.String(), "reading") {
		t.Errorf("analyze - through a pipe: %v, stderr %q", err, stderr.String())
	}
}

// TestColourOnATerminalUnlessNoColor pins colour: on a terminal the final
// error is red for a failure and yellow for an incomplete verdict, and a
// warning yellow; NO_COLOR set to anything but "" (https://no-color.org),
// TERM=dumb or a pipe turn every escape off.
func TestColourOnATerminalUnlessNoColor(t *testing.T) {
	bin := builtBinary(t)
	fail := traces + "per-call-dial.otlp.jsonl"
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, "notes.txt"), []byte("not a dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	red, yellow := "\033[31mmcptrace:\033[0m check fail", "\033[33mmcptrace: warning:\033[0m "
	for _, tc := range []struct {
		name   string
		env    []string
		args   []string
		code   int
		want   string // "" for no escape at all
		plain  string
		escape bool
	}{
		{"a failure, red", nil, []string{"check", fail}, 1, red, "", true},
		{"NO_COLOR empty is unset", []string{"NO_COLOR="}, []string{"check", fail}, 1, red, "", true},
		{"an incomplete verdict, yellow", nil, []string{"check", junk}, 3, "\033[33mmcptrace:\033[0m check incomplete", "", true},
		{"a warning, yellow", nil, []string{"analyze", junk}, 3, yellow, "", true},
		{"NO_COLOR=1", []string{"NO_COLOR=1"}, []string{"check", fail}, 1, "", "mcptrace: check fail", false},
		{"TERM=dumb", []string{"TERM=dumb"}, []string{"analyze", junk}, 3, "", "mcptrace: warning: ", false},
	} {
		code, screen := runOnTerminal(t, bin, tc.env, tc.args...)
		switch {
		case code != tc.code:
			t.Errorf("%s: exit %d, want %d:\n%q", tc.name, code, tc.code, screen)
		case tc.escape && !strings.Contains(screen, tc.want):
			t.Errorf("%s: screen lacks %q:\n%q", tc.name, tc.want, screen)
		case !tc.escape && (strings.Contains(screen, "\033[3") || !strings.Contains(screen, tc.plain)):
			t.Errorf("%s: coloured, or lacks %q:\n%q", tc.name, tc.plain, screen)
		}
	}
	_, _, errOut := runBinary(t, bin, nil, "check", fail)
	if strings.Contains(errOut, "\033[") || !strings.Contains(errOut, "mcptrace: check fail") {
		t.Errorf("through a pipe: stderr coloured or without the error: %q", errOut)
	}
}
