package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
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
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var rest strings.Builder
			done := make(chan error, 1)
			go func() {
				for lines.Scan() {
					rest.WriteString(lines.Text() + "\n")
				}
				done <- cmd.Wait()
			}()
			var werr error
			select {
			case werr = <-done:
			case <-time.After(30 * time.Second): // a bound on a hang, not a speed assertion
				cmd.Process.Kill()
				t.Fatalf("still running 30 s after %v", tc.sig)
			}
			var ee *exec.ExitError
			if !errors.As(werr, &ee) || ee.ExitCode() != exitInterrupted {
				t.Errorf("exit: %v, want code %d; stderr:\n%s", werr, exitInterrupted, rest.String())
			}
			if !strings.Contains(rest.String(), "interrupted") {
				t.Errorf("stderr does not say the command was interrupted:\n%s", rest.String())
			}
		})
	}
}
