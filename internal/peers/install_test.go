package peers

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcptrace/mcptrace/internal/realpart"
)

// emptyWorkspace writes a workspace with no dependencies, which npm ci
// installs offline in a moment, and returns its directory.
func emptyWorkspace(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		realpart.Missing(t, realpart.NPM, "no npm on PATH")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "package.json"), `{"name":"w","version":"1.0.0","private":true}`)
	write(t, filepath.Join(dir, "package-lock.json"),
		`{"name":"w","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"w","version":"1.0.0"}}}`)
	return dir
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestInstallRunsNpmOncePerLockfile pins when the peers are installed: a
// first Install runs npm ci and records the lockfile's hash; a second
// with the same lockfile runs nothing (here npm would fail, the manifest
// being broken); a changed lockfile runs npm ci again, and its failure
// comes back with npm's own words.
func TestInstallRunsNpmOncePerLockfile(t *testing.T) {
	dir := emptyWorkspace(t)
	ctx := context.Background()
	if err := Install(ctx, dir); err != nil {
		t.Fatalf("first install: %v", err)
	}
	want, err := lockHash(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := installedFrom(dir); got != want {
		t.Fatalf("recorded hash %q, want the lockfile's %q", got, want)
	}
	write(t, filepath.Join(dir, "package.json"), `{ not json`)
	if err := Install(ctx, dir); err != nil {
		t.Fatalf("install with an unchanged lockfile ran npm: %v", err)
	}
	write(t, filepath.Join(dir, "package-lock.json"),
		`{"name":"w","version":"1.0.1","lockfileVersion":3,"requires":true,"packages":{"":{"name":"w","version":"1.0.1"}}}`)
	err = Install(ctx, dir)
	if err == nil || !strings.Contains(err.Error(), "npm ci in "+dir) || strings.Count(err.Error(), "\n") == 0 {
		t.Fatalf("install after the lockfile changed = %v, want npm ci run and its output", err)
	}
	if got := installedFrom(dir); got != want {
		t.Errorf("a failed install recorded %q; want the last good %q", got, want)
	}
}

// TestConcurrentInstallsAllSucceed pins the lock: the test processes that
// need the peers at once all wait for one install and find it done.
func TestConcurrentInstallsAllSucceed(t *testing.T) {
	dir := emptyWorkspace(t)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Install(context.Background(), dir)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("install %d: %v", i, err)
		}
	}
	if want, _ := lockHash(dir); installedFrom(dir) != want {
		t.Errorf("no install recorded after concurrent installs")
	}
}

// TestInstallWithoutNpmSaysWhatIsMissing pins the error a machine with no
// npm gets: ErrNotInstalled, which the test helpers turn into a skip
// naming the install step.
func TestInstallWithoutNpmSaysWhatIsMissing(t *testing.T) {
	dir := emptyWorkspace(t)
	t.Setenv("PATH", t.TempDir())
	err := Install(context.Background(), dir)
	if !errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), "no npm on PATH") {
		t.Fatalf("install without npm = %v, want ErrNotInstalled naming npm", err)
	}
}
