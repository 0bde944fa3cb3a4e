package realpart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skipRecorder is a testing.TB whose Skip and Fatal stop nothing, so a test
// can see which of the two Missing chose.
type skipRecorder struct {
	testing.TB
	skipped, failed string
}

func (r *skipRecorder) Helper()             {}
func (r *skipRecorder) Logf(string, ...any) {}
func (r *skipRecorder) Skip(args ...any)    { r.skipped = strings.TrimSpace(sprint(args)) }
func (r *skipRecorder) Fatal(args ...any)   { r.failed = strings.TrimSpace(sprint(args)) }

func sprint(args []any) string {
	var b strings.Builder
	for _, a := range args {
		b.WriteString(a.(string))
	}
	return b.String()
}

func TestMissingSkipsWithTheInstallCommandAndLeavesAMark(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "marks")
	t.Setenv(MarksEnv, dir)
	t.Setenv("CI", "")
	r := &skipRecorder{TB: t}
	Missing(r, Chromium, "no Chromium at /usr/bin/chromium")
	if r.failed != "" || !strings.Contains(r.skipped, "`apt-get install -y chromium`") || !strings.HasPrefix(r.skipped, "no Chromium at /usr/bin/chromium") {
		t.Fatalf("skipped %q, failed %q; want a skip naming the install command", r.skipped, r.failed)
	}
	b, err := os.ReadFile(filepath.Join(dir, "chromium"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), "chromium (install: apt-get install -y chromium)\n"; got != want {
		t.Errorf("mark = %q, want %q", got, want)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the marks' directory, want the one mark (no temporary left)", len(ents))
	}
}

func TestMissingFailsUnderCIAndMarksNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "marks")
	t.Setenv(MarksEnv, dir)
	t.Setenv("CI", "true")
	r := &skipRecorder{TB: t}
	Missing(r, Prometheus, "no Prometheus")
	if r.failed == "" || !strings.Contains(r.failed, "CI must install it") {
		t.Fatalf("under CI=true: failed %q, skipped %q; want a failure", r.failed, r.skipped)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("under CI a mark was written: %v", err)
	}
}

func TestNoMarkWithoutAnAbsoluteDirectory(t *testing.T) {
	for _, env := range []string{"", "relative/marks"} {
		t.Run("env="+env, func(t *testing.T) {
			t.Chdir(t.TempDir())
			t.Setenv(MarksEnv, env)
			t.Setenv("CI", "")
			r := &skipRecorder{TB: t}
			Missing(r, NPM, "no npm on PATH")
			if r.skipped == "" {
				t.Fatal("not skipped")
			}
			if ents, _ := os.ReadDir("."); len(ents) != 0 {
				t.Errorf("files written in the working directory: %v", ents)
			}
		})
	}
}

func TestAPartNameThatIsNotAPlainWordLeavesNoMark(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(MarksEnv, dir)
	t.Setenv("CI", "")
	r := &skipRecorder{TB: t}
	Missing(r, Part{Name: "../escape", Install: "x"}, "no such part")
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a mark was written for a name with a path in it: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the marks' directory: %v", err)
	}
}
