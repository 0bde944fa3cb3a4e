// Package outfile writes the files mcptrace's commands produce so that no
// command loses or corrupts a file: every output is written to a fresh
// temporary file beside its target (a random name created with O_EXCL, so
// a link planted at any name is never followed), checked, synced, and
// renamed over the target only once whole. A failed write, or a signal
// (Discard), leaves the previous file as it was and no temporary file
// behind.
//
// A link at the target itself is replaced, never written through: the
// rename swaps the directory entry. The replaced file's permissions are
// kept; a new file is 0644 less the umask.
//
// A target that is a stream rather than a file to replace is written
// straight through, as a shell's redirection would: an existing device,
// FIFO or socket (/dev/null, a named pipe, a link to either), and a
// standard stream reached through /proc or /dev/fd (/dev/stdout). Renaming
// over those would replace the device, the pipe or the shell's
// redirection with a regular file; a stream has no previous content to
// keep whole.
//
// A kill -9 (or a crash, or a power cut) while an output is written
// leaves its temporary file: nothing runs in a process killed so. The
// temporary name carries the writer's process id, and the writer holds an
// advisory lock on the file while it lives (lock_unix.go), so a later
// write of the same target removes such a leftover when it is certainly
// one: named exactly as this package names its temporary files for that
// target, a regular file owned by the same user, its writer's process
// gone and its lock free. Anything else beside the target is left alone.
//
// Every command's outputs go through here (the CLI's reports, the
// dashboards' files, the demo's dumps), so the promise is kept in one
// place. The writes are confined to the target's directory by an os.Root.
//
// It is written here rather than taken from github.com/google/renameio:
// the dashboards write through an os.Root (a linked subdirectory never
// leads out of the output directory), which renameio does not take, and
// the CLI needs the pending outputs of a run to discard on a signal.
package outfile

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// ErrDiscarded is returned by Commit for a file Discard removed: the
// command was interrupted and its output must not replace the old one.
var ErrDiscarded = errors.New("output discarded: interrupted before it was complete")

// File is an output being written: a temporary file beside its target,
// renamed over it by Commit. Its methods are not safe for concurrent use,
// but Discard may run beside them.
type File struct {
	root    *os.Root
	ownRoot bool
	name    string // the target, relative to root
	tmp     string // the temporary file, relative to root
	path    string // the target as the caller named it, for messages
	f       *os.File
	perm    fs.FileMode // the replaced file's permissions, when keep
	keep    bool        // a regular file is replaced: its permissions are kept
	lock    *os.File    // holds the temporary file's advisory lock (nil: none taken)
	gone    bool        // removed: by Abort, Discard, or renamed by Commit
	stream  bool        // written straight through: no root, no temporary file
	werr    error       // the first failed Write, which Commit reports
}

// pending are the files created and neither committed nor aborted, for
// Discard; mu also serialises Commit's rename with Discard, so a file is
// either whole in place or its temporary file is gone.
var (
	mu      sync.Mutex
	pending = map[*File]struct{}{}
)

// Create starts writing the file at path: a temporary file in path's
// directory. The caller writes it, then calls Commit (or Abort).
func Create(path string) (*File, error) {
	if flag, ok := streamTarget(path); ok {
		return createStream(path, flag)
	}
	root, err := os.OpenRoot(filepath.Dir(path))
	if err != nil {
		return nil, &PathError{Path: path, Err: unwrapPath(err)}
	}
	f, err := create(root, filepath.Base(path), path)
	if err != nil {
		root.Close()
		return nil, err
	}
	f.ownRoot = true
	return f, nil
}

// CreateIn is Create for name inside root, which the caller keeps open
// until Commit or Abort; the path in messages is root's name joined with
// name.
func CreateIn(root *os.Root, name string) (*File, error) {
	return create(root, name, filepath.Join(root.Name(), name))
}

// tempTries bounds the random names tried: a clash of 64 random bits is
// someone planting names, not chance.
const tempTries = 8

func create(root *os.Root, name, path string) (*File, error) {
	out := &File{root: root, name: name, path: path}
	if fi, err := root.Lstat(name); err == nil && fi.Mode().IsRegular() {
		out.perm, out.keep = fi.Mode().Perm(), true
	}
	for range tempTries {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails (crypto/rand)
		tmp := filepath.Join(filepath.Dir(name), tempPrefix(name)+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
		f, err := root.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, &PathError{Path: path, Err: unwrapPath(err)}
		}
		out.tmp, out.f, out.lock = tmp, f, lockTemp(root, tmp)
		mu.Lock()
		pending[out] = struct{}{}
		mu.Unlock()
		removeStale(root, name)
		return out, nil
	}
	return nil, &PathError{Path: path, Err: fmt.Errorf("no free temporary name beside it after %d tries", tempTries)}
}

// tempPrefix is how the temporary files of target name start:
// ".NAME.tmp-", then the writer's process id, '-' and 16 hex digits.
func tempPrefix(name string) string { return "." + filepath.Base(name) + ".tmp-" }

// Write writes p to the temporary file; an error names the target.
func (f *File) Write(p []byte) (int, error) {
	if f.werr != nil {
		return 0, f.werr
	}
	n, err := f.f.Write(p)
	if err != nil {
		err = f.failed(err)
		f.werr = err
	}
	return n, err
}

// Commit syncs and closes the temporary file, gives it the replaced file's
// permissions, and renames it over the target. On any error, a failed
// Write its writer went on after included (an exporter logs it and goes
// on), the target is untouched and the temporary file removed.
func (f *File) Commit() error {
	if f.werr != nil {
		f.Abort()
		return f.werr
	}
	if f.stream {
		return f.commitStream()
	}
	err := f.f.Sync()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		f.Abort()
		return f.failed(err)
	}
	mu.Lock()
	switch {
	case f.gone:
		err = ErrDiscarded
	case f.keep:
		err = f.root.Chmod(f.tmp, f.perm)
	}
	if err == nil {
		err = f.root.Rename(f.tmp, f.name)
	}
	if err != nil && !f.gone {
		_ = f.root.Remove(f.tmp)
	}
	f.gone = true
	delete(pending, f)
	mu.Unlock()
	if err == nil {
		syncDir(f.root, f.name)
	}
	f.closeRoot()
	if err != nil {
		return f.failed(err)
	}
	return nil
}

// syncDir makes the rename durable: the directory's entry is synced. A
// failure is not reported: the file is whole either way.
func syncDir(root *os.Root, name string) {
	if d, err := root.Open(filepath.Dir(name)); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// Abort removes the temporary file, leaving the target as it was. It is
// safe after Commit (it does nothing) and twice.
func (f *File) Abort() {
	_ = f.f.Close()
	mu.Lock()
	if !f.gone {
		if !f.stream {
			_ = f.root.Remove(f.tmp)
		}
		f.gone = true
		delete(pending, f)
	}
	mu.Unlock()
	f.closeRoot()
}

// closeRoot lets go of the temporary file's lock, then of the root when
// f opened it.
func (f *File) closeRoot() {
	f.unlock()
	if f.ownRoot {
		f.root.Close()
		f.ownRoot = false
	}
}

// Discard removes the temporary file of every output still being written
// and makes their Commit fail: the CLI calls it when a signal stops a
// command, so a write cut short leaves the old file whole and nothing
// beside it. A Commit that renamed before it is whole already.
func Discard() {
	mu.Lock()
	defer mu.Unlock()
	for f := range pending {
		if f.stream {
			_ = f.f.Close() // a stream cannot be taken back: it ends here
		} else {
			_ = f.root.Remove(f.tmp)
		}
		f.unlock()
		f.gone = true
		delete(pending, f)
	}
}

// unlock closes the descriptor holding the temporary file's lock, once
// the file is renamed or removed.
func (f *File) unlock() {
	if f.lock != nil {
		_ = f.lock.Close()
		f.lock = nil
	}
}

// bufSize is the buffer between a renderer's small writes and the file.
const bufSize = 64 << 10

// Write writes the file at path with render, through Create and Commit: a
// render or write error leaves the previous file whole.
func Write(path string, render func(io.Writer) error) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	return f.render(render)
}

// render writes render's output into f and commits it; on error f is
// aborted. The error names the target once.
func (f *File) render(render func(io.Writer) error) error {
	w := bufio.NewWriterSize(f, bufSize)
	err := render(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		f.Abort()
		var pe *PathError
		if errors.As(err, &pe) && pe.Path == f.path {
			return err
		}
		return &PathError{Path: f.path, Err: err} // the render's own error, as it is
	}
	return f.Commit()
}

// PathError is a failed write of an output, naming the target (never the
// temporary file it was written through).
type PathError struct {
	Path string
	Err  error
}

func (e *PathError) Error() string { return "write " + e.Path + ": " + e.Err.Error() }
func (e *PathError) Unwrap() error { return e.Err }

// failed is err, an error of the temporary file, as f's PathError.
func (f *File) failed(err error) error {
	return &PathError{Path: f.path, Err: unwrapPath(err)}
}

// unwrapPath drops an *fs.PathError's or *os.LinkError's wrapper, whose
// path is the temporary file's: the message names the target instead.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
