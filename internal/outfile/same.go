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
func Same(a, b string) bool {
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(fa, fb)
	}
	if (errA == nil) != (errB == nil) {
		return false
	}
	return resolved(a) == resolved(b)
}

// SameStat is Same for a file already open (standard input): fi is its
// Stat.
func SameStat(path string, fi os.FileInfo) bool {
	fp, err := os.Stat(path)
	return err == nil && os.SameFile(fp, fi)
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
