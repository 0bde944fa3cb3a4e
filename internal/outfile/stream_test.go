package outfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An output that is no file to replace (a device, a FIFO, a link to one,
// or a standard stream reached through /proc or /dev/fd) is written
// straight through: renaming a temporary file over it would replace the
// device, the pipe or the shell's redirection with a regular file. The
// target keeps its type, gets the bytes, and nothing is left beside it.
func TestAStreamTargetIsWrittenThroughNeverReplaced(t *testing.T) {
	cases := []struct {
		name string
		// setup makes the target in dir and returns its path and a function
		// reading what reached the stream once the write is done.
		setup func(t *testing.T, dir string) (path string, got func() string)
	}{
		{"a FIFO", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(dir, "fifo")
			return p, fifoReader(t, p)
		}},
		{"a link to a FIFO", func(t *testing.T, dir string) (string, func() string) {
			p := filepath.Join(t.TempDir(), "fifo")
			got := fifoReader(t, p)
			link := filepath.Join(dir, "out")
			mustDo(t, os.Symlink(p, link))
			return link, got
		}},
		{"a link to the null device", func(t *testing.T, dir string) (string, func() string) {
			link := filepath.Join(dir, "out")
			mustDo(t, os.Symlink(os.DevNull, link))
			return link, func() string { return "report" }
		}},
		{"a link to /proc/self/fd/N open on a regular file", func(t *testing.T, dir string) (string, func() string) {
			f := openRedirect(t)
			link := filepath.Join(dir, "stdout")
			mustDo(t, os.Symlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()), link))
			return link, func() string { b, _ := os.ReadFile(f.Name()); return string(b) }
		}},
		{"/proc/self/fd/N open on a regular file", func(t *testing.T, dir string) (string, func() string) {
			f := openRedirect(t)
			return fmt.Sprintf("/proc/self/fd/%d", f.Fd()), func() string { b, _ := os.ReadFile(f.Name()); return string(b) }
		}},
		{"/dev/fd/N open on a regular file", func(t *testing.T, dir string) (string, func() string) {
			f := openRedirect(t)
			return fmt.Sprintf("/dev/fd/%d", f.Fd()), func() string { b, _ := os.ReadFile(f.Name()); return string(b) }
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path, got := tc.setup(t, dir)
			before, err := os.Lstat(path)
			mustDo(t, err)
			names := readDir(t, filepath.Dir(path))
			if err := Write(path, writeString("report")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			after, err := os.Lstat(path)
			if err != nil || after.Mode().Type() != before.Mode().Type() {
				t.Errorf("target is now %v (%v), was %v: replaced", after.Mode(), err, before.Mode())
			}
			if s := got(); s != "report" {
				t.Errorf("the stream got %q, want %q", s, "report")
			}
			if now := readDir(t, filepath.Dir(path)); len(now) != len(names) && !strings.HasPrefix(path, "/proc/") {
				t.Errorf("directory holds %v, had %v", now, names)
			}
		})
	}
}

// fifoReader makes a FIFO at p and holds it open for reading and writing
// (so neither a writer's open nor the test ever blocks); the function it
// returns reads what the pipe holds without waiting.
func fifoReader(t *testing.T, p string) func() string {
	t.Helper()
	mustDo(t, syscall.Mkfifo(p, 0o600))
	fd, err := syscall.Open(p, syscall.O_RDWR|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	mustDo(t, err)
	t.Cleanup(func() { syscall.Close(fd) })
	return func() string {
		buf := make([]byte, 4096)
		n, err := syscall.Read(fd, buf)
		if err != nil {
			return err.Error()
		}
		return string(buf[:n])
	}
}

// openRedirect is a regular file held open, as a shell's "> file" holds
// standard output, holding older, longer text a write must truncate.
func openRedirect(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(t.TempDir(), "redirect"), os.O_RDWR|os.O_CREATE, 0o644)
	mustDo(t, err)
	t.Cleanup(func() { f.Close() })
	_, err = f.WriteString("an older and longer text")
	mustDo(t, err)
	return f
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
