package peers

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// installStamp is the file, in node_modules, that names the hash of the
// package-lock.json the packages there were installed from by [Install].
const installStamp = ".mcptrace-lock.sha256"

// installLock is the file, in the peers workspace, that one process at a
// time holds while it installs: go test runs packages in parallel
// processes, and each may be the first to need the peers.
const installLock = ".npm-ci.lock"

// NoInstallEnv, set to 1, stops the test helpers from installing the
// peers themselves: a machine that must not reach the npm registry then
// skips the real-peer tests (or fails them under CI=true) as before.
const NoInstallEnv = "MCPTRACE_NO_NPM_CI"

// Install makes the pinned packages of the peers workspace dir runnable:
// unless node_modules was installed by Install from today's
// package-lock.json (its hash is recorded there), it runs `npm ci` in dir,
// once across processes under a file lock, and records the hash. A
// checkout thus installs its peers on first use and again only when the
// lockfile changes. The error wraps [ErrNotInstalled] when npm is missing,
// and carries npm's last lines when it fails.
func Install(ctx context.Context, dir string) error {
	want, err := lockHash(dir)
	if err != nil {
		return err
	}
	if installedFrom(dir) == want {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("%w: no npm on PATH to install them", ErrNotInstalled)
	}
	lock := flock.New(filepath.Join(dir, installLock))
	if err := lock.Lock(); err != nil {
		return fmt.Errorf("peers: lock %s: %w", lock.Path(), err)
	}
	defer lock.Unlock()
	if installedFrom(dir) == want { // another process installed meanwhile
		return nil
	}
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("peers: npm ci in %s: %w\n%s", dir, err, lastLines(out.String(), 20))
	}
	stamp := filepath.Join(dir, "node_modules", installStamp)
	if err := os.MkdirAll(filepath.Dir(stamp), 0o755); err != nil {
		return fmt.Errorf("peers: %w", err)
	}
	if err := os.WriteFile(stamp, []byte(want+"\n"), 0o644); err != nil {
		return fmt.Errorf("peers: record the install: %w", err)
	}
	return nil
}

// lockHash returns the hex SHA-256 of dir's package-lock.json.
func lockHash(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", fmt.Errorf("peers: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// installedFrom returns the lockfile hash Install recorded in dir's
// node_modules, "" when none.
func installedFrom(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", installStamp))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(data))
}

// lastLines returns at most n final lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// installForTest is the install RequireEnv runs before it looks for the
// peers: nothing when NoInstallEnv is set or the module root cannot be
// found (FindEnv then says why).
func installForTest(ctx context.Context) error {
	if os.Getenv(NoInstallEnv) == "1" {
		return nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return nil
	}
	err = Install(ctx, filepath.Join(root, "peers"))
	if errors.Is(err, ErrNotInstalled) {
		return nil // FindEnv reports what is missing
	}
	return err
}
