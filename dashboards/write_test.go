package dashboards_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/dashboards"
)

// TestWriteNeverOverwritesAFileItDidNotWrite pins the refusal: a user's own
// README.md (no generator marker), a symbolic link or a directory in the
// way stops Write before it writes anything, naming each path; force
// replaces files and links (never a link's target).
func TestWriteNeverOverwritesAFileItDidNotWrite(t *testing.T) {
	files, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		prepare    func(t *testing.T, dir, outside string)
		forceFails bool // even --force must not write (a link out of dir)
	}{
		{"user README", func(t *testing.T, dir, _ string) {
			mustWrite(t, filepath.Join(dir, dashboards.ReadmeFile), "# my project\n")
		}, false},
		{"symlinked output file", func(t *testing.T, dir, outside string) {
			if err := os.Symlink(filepath.Join(outside, "victim"), filepath.Join(dir, dashboards.PoolFile)); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"directory in the way", func(t *testing.T, dir, _ string) {
			if err := os.Mkdir(filepath.Join(dir, dashboards.PoolFile), 0o755); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, "victim")
			mustWrite(t, victim, "outside the output directory\n")
			c.prepare(t, dir, outside)
			before := snapshot(t, dir)

			_, err := dashboards.Write(dir, files, false)
			if !errors.Is(err, dashboards.ErrNotGenerated) {
				t.Fatalf("Write without force: err = %v, want ErrNotGenerated", err)
			}
			if !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "--force") {
				t.Errorf("error %q does not name the path and --force", err)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("a refused Write changed the directory:\nbefore %s\nafter  %s", before, after)
			}

			_, err = dashboards.Write(dir, files, true)
			if c.forceFails {
				if err == nil {
					t.Error("Write with force replaced a directory")
				}
			} else if err != nil {
				t.Fatalf("Write with force: %v", err)
			} else {
				for _, f := range files {
					got, err := os.ReadFile(filepath.Join(dir, f.Name))
					if err != nil || !bytes.Equal(got, f.Data) {
						t.Errorf("%s after force: %v", f.Name, err)
					}
				}
			}
			if got, _ := os.ReadFile(victim); string(got) != "outside the output directory\n" {
				t.Errorf("the file outside the output directory was changed: %.80q", got)
			}
		})
	}
}

// TestWriteNeverFollowsALinkedSubdirectoryOutOfTheOutput pins that a
// provisioning/ that is a symbolic link out of the output directory is not
// written through, even with force.
func TestWriteNeverFollowsALinkedSubdirectoryOutOfTheOutput(t *testing.T) {
	prov, err := dashboards.Provisioning()
	if err != nil {
		t.Fatal(err)
	}
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dir, dashboards.ProvisioningDir)); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		if _, err := dashboards.Write(dir, prov, force); err == nil {
			t.Errorf("force=%v: Write through a linked directory succeeded", force)
		}
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("Write created %v outside the output directory", entries)
	}
}

// TestEveryGeneratedFileCarriesTheMarker pins that a second run recognises
// every file the first wrote, so rerunning never needs --force.
func TestEveryGeneratedFileCarriesTheMarker(t *testing.T) {
	files, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	prov, err := dashboards.Provisioning()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(files, prov...) {
		if !bytes.Contains(f.Data[:min(len(f.Data), 4096)], []byte(dashboards.GeneratedMarker)) {
			t.Errorf("%s has no %s marker in its first 4 KiB", f.Name, dashboards.GeneratedMarker)
		}
	}
	dir := t.TempDir()
	if _, err := dashboards.Write(dir, append(files, prov...), false); err != nil {
		t.Fatal(err)
	}
	// Change every file as a newer generator would: a rerun replaces them.
	for i := range files {
		files[i].Data = append(bytes.Clone(files[i].Data), '\n')
	}
	written, err := dashboards.Write(dir, files, false)
	if err != nil {
		t.Fatalf("rerun over generated files: %v", err)
	}
	for _, w := range written {
		if w.Status != dashboards.Replaced {
			t.Errorf("%s: %s, want replaced", w.Path, w.Status)
		}
	}
}

func mustWrite(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// snapshot lists dir's entries with their modes and contents.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(path + " " + info.Mode().String())
		if info.Mode().IsRegular() {
			data, _ := os.ReadFile(path)
			b.Write(data)
		}
		b.WriteString("; ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestWriteNeverFollowsALinkAtATemporaryName pins that the temporary file
// each file is written through is a fresh one: a symbolic link planted
// beside the output, under the name a temporary file could take, leads to
// a user's file in the same directory, which stays as it was (without
// force, since nothing it writes replaces a file it did not write).
func TestWriteNeverFollowsALinkAtATemporaryName(t *testing.T) {
	files, err := dashboards.Generate()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustWrite(t, filepath.Join(dir, "notes.txt"), "the user's notes\n")
	for _, f := range files {
		for _, name := range []string{f.Name + ".tmp-mcptrace", "." + f.Name + ".tmp", f.Name + ".tmp"} {
			if err := os.Symlink("notes.txt", filepath.Join(dir, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := dashboards.Write(dir, files, false); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(got) != "the user's notes\n" {
		t.Errorf("the user's file was written through a planted link: %.80q", got)
	}
	for _, f := range files {
		if got, err := os.ReadFile(filepath.Join(dir, f.Name)); err != nil || !bytes.Equal(got, f.Data) {
			t.Errorf("%s not written whole: %v", f.Name, err)
		}
	}
}
