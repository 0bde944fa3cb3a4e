package outfile

import (
	"os"
	"path/filepath"
)

// Same reports whether a and b name the same file, so a command can refuse
// an output that is one of its inputs (or another output) before any
// work: when both exist, by device and inode after following links (a
// symbolic or a hard link to a file is that file); otherwise by absolute
// path, the directory's links resolved (two outputs not yet written).
// Only a regular file clashes: a device, a FIFO or a terminal is a stream
// (see Create), which /dev/null as every output, or a terminal as both
// standard input and -o /dev/stdout, do not destroy.
func Same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return fa.Mode().IsRegular() && os.SameFile(fa, fb)
	}
	if (errA == nil) != (errB == nil) {
		return false
	}
	return resolved(a) == resolved(b)
}

// SameStat is Same for a file already open (standard input): fi is its
// Stat. As for Same, only a regular file clashes.
func SameStat(path string, fi os.FileInfo) bool {
	fp, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && os.SameFile(fp, fi)
}

// resolved is path made absolute with its directory's links resolved, as
// far as they can be.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}
