package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// The tests that run the real binary share one build: building it took
// most of this package's cold test time when each test built its own.
var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
	binOut  []byte
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// builtBinary returns the path of mcptrace built once for the whole test
// binary (with -race when the tests run with it), skipping in -short mode.
func builtBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary: not in -short mode")
	}
	binOnce.Do(func() {
		goBin, err := exec.LookPath("go")
		if err != nil {
			binErr = err
			return
		}
		if binDir, binErr = os.MkdirTemp("", "mcptrace-test-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "mcptrace")
		args := []string{"build", "-o", binPath}
		if malformedRaceBuild() {
			args = append(args, "-race")
		}
		binOut, binErr = exec.Command(goBin, append(args, ".")...).CombinedOutput()
	})
	if binErr != nil {
		t.Fatalf("go build: %v\n%s", binErr, binOut)
	}
	return binPath
}

// An error's text reaches the terminal escaped: a path, a flag or an
// argument with a control byte (ESC starting a colour sequence, BEL, a
// bidi override, invalid UTF-8) shows as an escape, never raw, whichever
// part of the CLI wrote the message (an open error, cobra's unknown flag).
// The newlines of a multi-line message (a configuration's mistakes, one a
// line) stay.
func TestErrorsReachTheTerminalEscaped(t *testing.T) {
	dump := "../../testdata/traces/pooled.otlp.jsonl"
	for _, args := range [][]string{
		{"analyze", "-o", "a\x1b[31mb/x.json", dump},
		{"check", "--config", "c\a.yaml", dump},
		{"analyze", "--bogus\x1b", dump},
		{"check", "--junit", "j\u202e/x.xml", dump},
		{"analyze", "-o", "d\xff/x.json", dump},
	} {
		t.Run(fmt.Sprintf("%q", args), func(t *testing.T) {
			_, _, err := execute(t, args...)
			if err == nil {
				t.Fatal("no error")
			}
			var b bytes.Buffer
			printError(&b, 2, err)
			got := strings.TrimSuffix(b.String(), "\n")
			for i, r := range got {
				if r < 0x20 && r != '\n' || r == 0x7f || r == '\u202e' || r == utf8.RuneError {
					t.Fatalf("raw %U at byte %d of %q", r, i, got)
				}
			}
		})
	}
}
