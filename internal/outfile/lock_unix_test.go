//go:build unix

package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// killedWriterEnv makes the test binary a writer that creates the output
// the variable names, writes to it, says so on stdout and waits to be
// killed (TestMain).
const killedWriterEnv = "OUTFILE_TEST_KILLED_WRITER"

func TestMain(m *testing.M) {
	if path := os.Getenv(killedWriterEnv); path != "" {
		f, err := Create(path)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		f.Write([]byte("half a report"))
		fmt.Println("writing")
		select {} // until killed
	}
	os.Exit(m.Run())
}

// deadPID returns the id of a process that ran and ended.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// TestAKilledWritersTemporaryFileIsRemovedByTheNextWrite pins what a
// later write does with what a kill -9 leaves: a writer killed while it
// writes leaves its temporary file; the next write of the same target
// removes it. While the writer lives, its file is locked and stays.
func TestAKilledWritersTemporaryFileIsRemovedByTheNextWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedWriterEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "writing\n" {
		cmd.Process.Kill()
		t.Fatalf("the writer said %q", line)
	}
	if err := Write(filepath.Join(dir, "report.html"), writeString("while it writes")); err != nil {
		t.Fatal(err)
	}
	if names := readDir(t, dir); len(names) != 2 {
		t.Errorf("while the writer lives the directory holds %v, want its temporary file and the report", names)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if err := Write(path, writeString("after")); err != nil {
		t.Fatal(err)
	}
	if names := readDir(t, dir); !slices.Equal(names, []string{"report.html"}) {
		t.Errorf("after the writer was killed the next write left %v, want the report alone", names)
	}
}

// TestOnlyCertainlyStaleTemporaryFilesAreRemoved pins what a write
// removes beside its target: a file named exactly as this package names
// the target's temporary files, regular, its writer's process gone and
// its lock free; nothing else (a live or locked writer's, a link, a
// directory, a name one character off, another target's).
func TestOnlyCertainlyStaleTemporaryFilesAreRemoved(t *testing.T) {
	dead, hex := strconv.Itoa(deadPID(t)), "0123456789abcdef"
	cases := []struct {
		name    string
		file    string
		make    func(t *testing.T, p string)
		removed bool
	}{
		{"a dead writer's", ".report.tmp-" + dead + "-" + hex, regular, true},
		{"a live writer's (the parent process)", ".report.tmp-" + strconv.Itoa(os.Getppid()) + "-" + hex, regular, false},
		{"this process's", ".report.tmp-" + strconv.Itoa(os.Getpid()) + "-" + hex, regular, false},
		{"a dead writer's, locked (a writer on another host)", ".report.tmp-" + dead + "-" + hex, locked, false},
		{"a link at a dead writer's name", ".report.tmp-" + dead + "-" + hex, link, false},
		{"a directory at a dead writer's name", ".report.tmp-" + dead + "-" + hex, directory, false},
		{"15 hex digits", ".report.tmp-" + dead + "-" + hex[1:], regular, false},
		{"17 hex digits", ".report.tmp-" + dead + "-" + hex + "0", regular, false},
		{"upper-case hex", ".report.tmp-" + dead + "-" + strings.ToUpper(hex), regular, false},
		{"a process id with a leading zero", ".report.tmp-0" + dead + "-" + hex, regular, false},
		{"no process id (an older version's)", ".report.tmp-" + hex, regular, false},
		{"another target's", ".other.tmp-" + dead + "-" + hex, regular, false},
		{"without the leading dot", "report.tmp-" + dead + "-" + hex, regular, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, tc.file)
			tc.make(t, p)
			if err := Write(filepath.Join(dir, "report"), writeString("new")); err != nil {
				t.Fatal(err)
			}
			_, err := os.Lstat(p)
			if gone := errors.Is(err, os.ErrNotExist); gone != tc.removed {
				t.Errorf("%s removed: %v, want %v (directory: %v)", tc.file, gone, tc.removed, readDir(t, dir))
			}
		})
	}
}

func regular(t *testing.T, p string) {
	if err := os.WriteFile(p, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// locked makes a regular file whose lock a descriptor holds until the test
// ends, as a writer on another host would.
func locked(t *testing.T, p string) {
	regular(t, p)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// link makes a symbolic link to a file of the test's, which must stay.
func link(t *testing.T, p string) {
	victim := filepath.Join(t.TempDir(), "victim")
	regular(t, victim)
	if err := os.Symlink(victim, p); err != nil {
		t.Fatal(err)
	}
}

func directory(t *testing.T, p string) {
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
}
