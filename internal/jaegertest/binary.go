package jaegertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/internal/realpart"
)

// BinEnv names the environment variable that, set, names a prebuilt jaeger
// binary to run instead of building one: for a machine that has one
// already, or that cannot reach the Go module proxy.
const BinEnv = "MCPTRACE_JAEGER_BIN"

// jaegerPkg is the package built; its version is the one the tool module
// (toolDir) pins, so every machine runs the same Jaeger.
const jaegerPkg = "github.com/jaegertracing/jaeger/cmd/jaeger"

// toolDir is the tool module's directory below the module root. It is a
// module of its own so that Jaeger's hundreds of dependencies stay out of
// mcptrace's go.mod.
const toolDir = "internal/jaegertest/tool"

// buildMargin is the time Binary leaves the test after a build it starts,
// out of the time to the test binary's deadline (go test -timeout), so a
// build cut short ends as a skip that names the fix rather than as go
// test's timeout panic.
const buildMargin = 2 * time.Minute

// errMissing marks a build that cannot be done here (no go command, no
// route to the module proxy, no time left): the test skips, or fails under
// CI, through realpart.Missing rather than failing outright.
var errMissing = errors.New("cannot build jaeger here")

// built remembers this process's first build failure, so the tests after
// it fail or skip at once instead of each trying the build again.
var built struct {
	mu  sync.Mutex
	err error
}

// Binary returns the path of a jaeger binary: the one BinEnv names, or the
// one built from the version internal/jaegertest/tool pins, into a cache
// directory shared by every checkout and test process (CachePath). The
// first call on a machine builds it, about ten minutes on two cores, under
// a file lock so concurrent test binaries build it once; scripts/
// jaeger-build.sh builds the same file ahead of the tests. Where it cannot
// be built the test skips, or fails under CI=true (realpart.Missing).
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(BinEnv); p != "" {
		if err := isExecutable(p); err != nil {
			t.Fatalf("jaegertest: %s=%s: %v", BinEnv, p, err)
		}
		return p
	}
	built.mu.Lock()
	defer built.mu.Unlock()
	err := built.err
	var bin string
	if err == nil {
		ctx, cancel := buildContext(t)
		bin, err = ensureBuilt(ctx)
		cancel()
		built.err = err
	}
	if errors.Is(err, errMissing) {
		realpart.Missing(t, realpart.Jaeger, err.Error())
		return ""
	}
	if err != nil {
		t.Fatalf("jaegertest: %v", err)
	}
	return bin
}

// buildContext bounds a build by the test binary's deadline less
// buildMargin, where t has one.
func buildContext(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			return context.WithDeadline(context.Background(), end.Add(-buildMargin))
		}
	}
	return context.WithCancel(context.Background())
}

// CachePath is where the binary built from the tool module whose go.sum
// holds sum lives below cacheDir (os.UserCacheDir): a directory named for
// the go.sum's SHA-256, so a new pin builds anew and an old binary is
// never run for it. scripts/jaeger-build.sh computes the same path.
func CachePath(cacheDir string, sum []byte) string {
	h := sha256.Sum256(sum)
	return filepath.Join(cacheDir, "mcptrace", "jaeger-"+hex.EncodeToString(h[:])[:16], "jaeger")
}

// ensureBuilt returns the cached binary, building it first if it is not
// there. Concurrent callers, in this process or others, serialize on a
// lock file beside it; the loser of the race finds the winner's binary.
func ensureBuilt(ctx context.Context) (string, error) {
	root, err := peers.ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("find the tool module: %w", err)
	}
	dir := filepath.Join(root, toolDir)
	sum, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		return "", fmt.Errorf("read the tool module's go.sum: %w", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no user cache directory: %v", errMissing, err)
	}
	bin := CachePath(cache, sum)
	if isExecutable(bin) == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", fmt.Errorf("make the jaeger cache directory: %w", err)
	}
	lock := flock.New(bin + ".lock")
	locked, err := lock.TryLockContext(ctx, 500*time.Millisecond)
	if !locked {
		return "", fmt.Errorf("%w: waited for another process's build of %s: %v; run scripts/jaeger-build.sh first", errMissing, bin, err)
	}
	defer func() { _ = lock.Unlock() }()
	if isExecutable(bin) == nil {
		return bin, nil // built by the process that held the lock
	}
	return bin, build(ctx, dir, bin)
}

// build runs go build in the tool module dir into a temporary directory
// beside bin and renames the binary into place, so no process ever sees a
// half-written bin.
func build(ctx context.Context, dir, bin string) error {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("%w: no go command on PATH to build it", errMissing)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".build-*")
	if err != nil {
		return fmt.Errorf("make a build directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	out := filepath.Join(tmp, "jaeger")
	cmd := exec.CommandContext(ctx, goCmd, "build", "-buildvcs=false", "-o", out, jaegerPkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.WaitDelay = 10 * time.Second
	output, err := cmd.CombinedOutput()
	if err != nil {
		return buildError(ctx, dir, err, string(output))
	}
	if err := os.Rename(out, bin); err != nil {
		return fmt.Errorf("move the built jaeger into place: %w", err)
	}
	return nil
}

// buildError says why go build failed, marked errMissing where the cause is
// this machine (out of time, no route to the module proxy) rather than the
// build itself.
func buildError(ctx context.Context, dir string, err error, output string) error {
	tail := lastLines(output, 15)
	if ctx.Err() != nil {
		return fmt.Errorf("%w: go build of %s in %s did not finish before the test's deadline (less %v); run scripts/jaeger-build.sh once: %v\n%s",
			errMissing, jaegerPkg, dir, buildMargin, ctx.Err(), tail)
	}
	for _, s := range unreachable {
		if strings.Contains(output, s) {
			return fmt.Errorf("%w: go build of %s in %s cannot download its modules: %v\n%s", errMissing, jaegerPkg, dir, err, tail)
		}
	}
	return fmt.Errorf("go build of %s in %s: %w\n%s", jaegerPkg, dir, err, tail)
}

// unreachable are the phrases of go's errors for a module it could not
// download: the build needs the network, not a fix.
var unreachable = []string{
	"dial tcp", "no such host", "connection refused", "i/o timeout",
	"network is unreachable", "GOPROXY=off", "TLS handshake timeout",
}

// isExecutable says why p is not a regular executable file, nil when it is.
func isExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}
