//go:build unix

package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockTemp takes an advisory lock on the temporary file tmp through a
// descriptor of its own (closing the one written through, as Commit does
// before its rename, must not let go of it), and returns that descriptor;
// nil when the file system takes no lock: the process id in the name
// still tells the file is live on this host.
func lockTemp(root *os.Root, tmp string) *os.File {
	f, err := root.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil
	}
	return f
}

// staleBatch is how many directory entries removeStale reads at a time.
const staleBatch = 256

// removeStale removes the temporary files of target name (relative to
// root) that a writer killed before it could remove them left behind,
// and only those (see staleTemp). It is best effort: an error leaves the
// file where it is.
func removeStale(root *os.Root, name string) {
	dir := filepath.Dir(name)
	d, err := root.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	prefix := tempPrefix(name)
	for {
		ents, err := d.ReadDir(staleBatch)
		for _, e := range ents {
			if pid, ok := tempPID(e.Name(), prefix); ok && processGone(pid) {
				removeUnlocked(root, filepath.Join(dir, e.Name()))
			}
		}
		if err != nil {
			return
		}
	}
}

// tempPID returns the process id in a temporary file's name, when the
// name is exactly one create gives a file of prefix's target: prefix, a
// process id without leading zeros, '-', 16 lowercase hex digits.
func tempPID(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	digits, random, ok := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(digits)
	if !ok || err != nil || pid <= 0 || strconv.Itoa(pid) != digits || len(random) != 16 {
		return 0, false
	}
	for _, c := range random {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return 0, false
		}
	}
	return pid, true
}

// processGone reports whether no process of id pid runs on this host; one
// of another user (EPERM) runs.
func processGone(pid int) bool {
	return pid != os.Getpid() && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// removeUnlocked removes the file at name when it is a regular file (no
// link is followed) owned by this process's user and no process holds its
// lock, which its writer holds while it lives: it takes the lock itself,
// on the very file it looked at, before it removes it.
func removeUnlocked(root *os.Root, name string) {
	fi, err := root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() || !ownedByUs(fi) {
		return
	}
	f, err := root.OpenFile(name, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !os.SameFile(fi, now) {
		return
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return // its writer is alive (on another host, or in another pid namespace)
	}
	_ = root.Remove(name)
}

// ownedByUs reports whether fi is a file of this process's user.
func ownedByUs(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid()
}
