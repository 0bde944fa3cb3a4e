package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/dashboards"
)

func TestDashboardsWritesTheCommittedFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "grafana")
	out, _, err := execute(t, "dashboards", "--dir", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{dashboards.PoolFile, dashboards.FleetFile, dashboards.ReadmeFile} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s not written: %v", name, err)
		}
		committed, err := os.ReadFile(filepath.Join("..", "..", "dashboards", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, committed) {
			t.Errorf("%s written by the command differs from dashboards/%s", name, name)
		}
		if !strings.Contains(out, filepath.Join(dir, name)) {
			t.Errorf("output %q does not list %s", out, name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, dashboards.ProvisioningDir)); !os.IsNotExist(err) {
		t.Errorf("provisioning written without --provisioning (stat: %v)", err)
	}
}

func TestDashboardsProvisioningFlagAddsTheProvisioningFiles(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := execute(t, "dashboards", "--dir", dir, "--provisioning"); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"datasources", "dashboards"} {
		path := filepath.Join(dir, dashboards.ProvisioningDir, sub, "mcptrace.yaml")
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s not written: %v", path, err)
		}
	}
}

func TestDashboardsErrors(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		args []string
		code int
		want string
	}{
		"no dir":         {[]string{"dashboards"}, 2, "--dir"},
		"extra argument": {[]string{"dashboards", "--dir", t.TempDir(), "extra"}, 2, "extra"},
		"dir is a file":  {[]string{"dashboards", "--dir", blocker}, 2, blocker},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := execute(t, c.args...)
			var ee *exitError
			code := 0
			if errors.As(err, &ee) {
				code = ee.code
			} else if err != nil {
				code = 2 // cobra's own argument errors exit 2 in run()
			}
			if code != c.code {
				t.Fatalf("err = %v (exit %d), want exit %d", err, code, c.code)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestDashboardsRefusesToOverwriteAUsersFiles pins that `dashboards
// --dir .` in a project must not replace the project's README.md; --force
// does, and a rerun over its own files needs no --force.
func TestDashboardsRefusesToOverwriteAUsersFiles(t *testing.T) {
	dir := t.TempDir()
	readme := filepath.Join(dir, dashboards.ReadmeFile)
	if err := os.WriteFile(readme, []byte("# my project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := execute(t, "dashboards", "--dir", dir)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("err = %v, want exit 2 (a refused overwrite is about the directory given, not a failed rule)", err)
	}
	if !strings.Contains(err.Error(), readme) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("error %q does not name %s and --force", err, readme)
	}
	if got, _ := os.ReadFile(readme); string(got) != "# my project\n" {
		t.Errorf("README.md overwritten: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, dashboards.PoolFile)); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote %s (stat: %v); output %q", dashboards.PoolFile, err, out)
	}

	out, _, err = execute(t, "dashboards", "--dir", dir, "--force")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"replaced  " + readme, "created   " + filepath.Join(dir, dashboards.PoolFile)} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	out, _, err = execute(t, "dashboards", "--dir", dir)
	if err != nil {
		t.Fatalf("rerun over its own files: %v", err)
	}
	if !strings.Contains(out, "unchanged "+readme) {
		t.Errorf("rerun output %q does not say README.md is unchanged", out)
	}
}
