package peers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindEnvWithoutPackagesNamesTheInstallStep pins the message a checkout
// without `npm ci` gets, from a subdirectory of the module: the error wraps
// ErrNotInstalled and names the install step and the missing directory.
func TestFindEnvWithoutPackagesNamesTheInstallStep(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module "+modulePath+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "pool")
	if err := os.MkdirAll(filepath.Join(root, "peers"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := findEnv(sub)
	if !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("findEnv without node_modules: %v, want ErrNotInstalled", err)
	}
	for _, want := range []string{InstallStep, filepath.Join(root, "peers", "node_modules")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}

// TestFindEnvOutsideTheModuleSaysSo: no go.mod of mcptrace above the
// directory is its own error, not a missing install.
func TestFindEnvOutsideTheModuleSaysSo(t *testing.T) {
	_, err := findEnv(t.TempDir())
	if err == nil || errors.Is(err, ErrNotInstalled) || !strings.Contains(err.Error(), modulePath) {
		t.Fatalf("findEnv outside the module: %v, want an error naming %s", err, modulePath)
	}
}
