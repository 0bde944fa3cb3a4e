package outfile

import (
	"os"
	"path/filepath"
	"strings"
)

// streamTarget reports whether path is an existing output to write
// straight through rather than replace (see the package doc), and the
// flags to open it with: a device, FIFO or socket is opened as it is; a
// regular file reached through /proc (a standard stream redirected to a
// file) is truncated, as the shell's "> file" would.
func streamTarget(path string) (int, bool) {
	fi, err := os.Stat(path)
	switch {
	case err != nil || fi.IsDir():
		return 0, false
	case !fi.Mode().IsRegular():
		return os.O_WRONLY, true
	case throughProc(path):
		return os.O_WRONLY | os.O_TRUNC, true
	}
	return 0, false
}

// throughProc reports whether path, or the link at it, lies in /proc
// (/dev/stdout links to /proc/self/fd/1; /dev/fd is /proc/self/fd): there
// an entry is a process's open file, never a directory entry to rename
// over.
func throughProc(path string) bool {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false
	}
	if inProc(filepath.Dir(abs)) {
		return true
	}
	l, err := os.Readlink(abs)
	if err != nil {
		return false
	}
	if !filepath.IsAbs(l) {
		l = filepath.Join(filepath.Dir(abs), l)
	}
	return inProc(filepath.Dir(l))
}

// inProc reports whether dir, its links resolved, is under /proc.
func inProc(dir string) bool {
	d, err := filepath.EvalSymlinks(dir)
	return err == nil && (d == "/proc" || strings.HasPrefix(d, "/proc/"))
}

// createStream opens the stream at path for writing; Commit closes it.
func createStream(path string, flag int) (*File, error) {
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, &PathError{Path: path, Err: unwrapPath(err)}
	}
	out := &File{path: path, f: f, stream: true}
	mu.Lock()
	pending[out] = struct{}{}
	mu.Unlock()
	return out, nil
}

// commitStream closes a stream written straight through: its bytes are
// already there. A stream Discard ended reports ErrDiscarded.
func (f *File) commitStream() error {
	mu.Lock()
	gone := f.gone
	f.gone = true
	delete(pending, f)
	mu.Unlock()
	if gone {
		return f.failed(ErrDiscarded)
	}
	if err := f.f.Close(); err != nil {
		return f.failed(err)
	}
	return nil
}
