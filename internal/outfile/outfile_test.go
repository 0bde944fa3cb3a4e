package outfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readDir lists dir's entry names, to see that no temporary file was left.
func readDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// A write that fails at any point (the render's error, after half the
// report; a directory where the file's directory should be; a Discard
// before Commit; a failed write its writer did not look at, as an
// exporter logging the error and going on) leaves the previous file byte for byte and nothing
// beside it.
func TestAFailedWriteLeavesThePreviousFileWhole(t *testing.T) {
	renderErr := errors.New("render failed")
	cases := []struct {
		name  string
		write func(path string) error
		want  error
	}{
		{"render error after half the report", func(p string) error {
			return Write(p, func(w io.Writer) error {
				io.WriteString(w, strings.Repeat("new ", 100_000))
				return renderErr
			})
		}, renderErr},
		{"discarded before commit", func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			f.Write([]byte("new report"))
			Discard()
			return f.Commit()
		}, ErrDiscarded},
		{"a failed write the writer ignored", func(p string) error {
			f, err := Create(p)
			if err != nil {
				return err
			}
			f.Write([]byte("new "))
			// The next write fails and Sync does not, as on a full disk.
			ro, err := os.Open(filepath.Join(filepath.Dir(p), f.tmp))
			if err != nil {
				return err
			}
			f.f.Close()
			f.f = ro
			f.Write([]byte("report"))
			return f.Commit()
		}, syscall.EBADF},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "report.json")
			if err := os.WriteFile(path, []byte("old report"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := tc.write(path)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want %v naming %s", err, tc.want, path)
			}
			if got, _ := os.ReadFile(path); string(got) != "old report" {
				t.Errorf("previous file now holds %.40q", got)
			}
			if names := readDir(t, dir); len(names) != 1 {
				t.Errorf("directory holds %v, want only report.json", names)
			}
		})
	}
}

// A written file replaces the old one whole, keeping its permissions; a
// new one is 0644 less the umask.
func TestAWriteReplacesWholeAndKeepsTheMode(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old")
	if err := os.WriteFile(old, []byte("a much longer previous report"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o640); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	for _, p := range []string{old, fresh} {
		if err := Write(p, writeString("new")); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != "new" {
			t.Errorf("%s holds %q, want %q", p, got, "new")
		}
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	for p, want := range map[string]fs.FileMode{old: 0o640, fresh: 0o644 &^ fs.FileMode(umask)} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v (%v), want %v", p, fi.Mode().Perm(), err, want)
		}
	}
	if names := readDir(t, dir); len(names) != 2 {
		t.Errorf("directory holds %v, want old and fresh only", names)
	}
}

// A link at the target is replaced, never written through; links planted
// at temporary-looking names are never followed: their targets are
// untouched.
func TestALinkIsNeverWrittenThrough(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("the user's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "report")
	for _, name := range []string{"report", "report.tmp-mcptrace", ".report.tmp", ".report.tmp-0000000000000000"} {
		if err := os.Symlink(victim, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(path, writeString("report")); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "the user's file" {
		t.Errorf("the link's target now holds %q", got)
	}
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() {
		t.Errorf("target: %v, %v; want the link replaced by a regular file", fi, err)
	}
}

// Same tells one file by any of its names: a symbolic link, a hard link,
// a path through a linked directory; and two outputs not yet written by
// their paths. A device is no file to clash on: /dev/null may be every
// output.
func TestSameTellsOneFileByAnyName(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sym, hard, linkdir := filepath.Join(dir, "sym"), filepath.Join(dir, "hard"), filepath.Join(dir, "linkdir")
	for _, err := range []error{os.Symlink(file, sym), os.Link(file, hard), os.Symlink(dir, linkdir), os.Symlink(os.DevNull, filepath.Join(dir, "null"))} {
		if err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("{}"), 0o644)
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{file, file, true},
		{sym, file, true},
		{hard, file, true},
		{filepath.Join(linkdir, "in.jsonl"), file, true},
		{other, file, false},
		{filepath.Join(dir, "new"), filepath.Join(linkdir, "new"), true},
		{filepath.Join(dir, "new"), filepath.Join(dir, "new2"), false},
		{filepath.Join(dir, "new"), file, false},
		{os.DevNull, os.DevNull, false},
		{filepath.Join(dir, "null"), os.DevNull, false},
	} {
		if got := Same(tc.a, tc.b); got != tc.want {
			t.Errorf("Same(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
