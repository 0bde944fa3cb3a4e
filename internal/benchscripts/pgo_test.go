package benchscripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPGOOfSaysHowTheBinaryWasBuilt pins pgo_of, which a section's header
// states the binary's build with: a real binary built with a profile
// names it, one built with -pgo=off and one built without the flag say
// so, and a file that is no Go binary is not called one built without.
func TestPGOOfSaysHowTheBinaryWasBuilt(t *testing.T) {
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	profile, err := filepath.Abs(filepath.Join(libDir(t), "..", "..", "cmd", "mcptrace", "default.pgo"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module tiny\n\ngo 1.26\n",
		"main.go": "package main\n\nfunc main() {}\n",
		"notes":   "not a binary\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := func(out string, flags ...string) string {
		cmd := exec.Command(gotool, append(append([]string{"build"}, flags...), "-o", out, ".")...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", flags, err, b)
		}
		return filepath.Join(dir, out)
	}
	for _, c := range []struct {
		bin, want string
	}{
		{build("with", "-pgo="+profile), "built with profile-guided optimisation from " + profile},
		{build("off", "-pgo=off"), "built without profile-guided optimisation"},
		{build("auto"), "built without profile-guided optimisation"}, // no default.pgo beside main.go
		{filepath.Join(dir, "notes"), "of a build go version -m cannot read"},
		{filepath.Join(dir, "missing"), "of a build go version -m cannot read"},
	} {
		got, ok := sourced(t, "", `pgo_of "$1"`, c.bin)
		if !ok || strings.TrimSpace(got) != c.want {
			t.Errorf("pgo_of %s = %q (ok %v), want %q", filepath.Base(c.bin), got, ok, c.want)
		}
	}
	// From the repository's root, as the scripts run, the path is the
	// repository's own.
	root := filepath.Dir(filepath.Dir(filepath.Dir(profile)))
	got, ok := sourced(t, "", `cd "$2" && pgo_of "$1"`, filepath.Join(dir, "with"), root)
	if want := "built with profile-guided optimisation from cmd/mcptrace/default.pgo"; !ok || got != want {
		t.Errorf("pgo_of from the root = %q (ok %v), want %q", got, ok, want)
	}
}
