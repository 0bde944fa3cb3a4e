package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
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
