package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcptrace/mcptrace/internal/outfile"
)

// Files are the user's: no command overwrites one of its inputs, every
// output is written whole or not at all (internal/outfile), and every
// write is checked. This file holds the CLI's side of it: which flags name
// files, the check that no output is an input (or another output) before
// any work, and the writes.

// fileFlags are the flags that name files, by name, for every command:
// outputs it writes (true), inputs it reads (false). Positional arguments
// are inputs. TestEveryFileFlagIsKnownToTheClashCheck fails for a flag of
// any command that names a file and is missing here.
var fileFlags = map[string]bool{
	// outputs
	"output": true, "junit": true, "summary": true, "html": true, "url-file": true, "dump": true,
	"cpuprofile": true, "memprofile": true, "exectrace": true,
	// inputs
	"config": false, "baseline": false, "backend-credential-file": false, "backend-ca-file": false, "explain": false,
}

// namedFile is a file a command was given: the flag (or "input" for a
// positional argument) and the path.
type namedFile struct {
	flag, path string
}

// checkFileClashes refuses, before any work, an output that is the same
// file as an input (after symbolic and hard links) or as another output:
// writing it would destroy the input, or one output would overwrite the
// other. A clash is a usage error (exit 2) naming both. The root runs it
// before every command.
func checkFileClashes(cmd *cobra.Command, args []string) error {
	var outs, ins []namedFile
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		out, ok := fileFlags[fl.Name]
		if !ok {
			return
		}
		for _, p := range flagPaths(fl) {
			switch {
			case p == "" || out && p == "-":
			case out:
				outs = append(outs, namedFile{flagSpelling(fl), p})
			default:
				ins = append(ins, namedFile{flagSpelling(fl), p})
			}
		}
	})
	if err := checkStdinOnce(ins, args); err != nil {
		return err
	}
	if p := os.Getenv("GITHUB_STEP_SUMMARY"); p != "" && cmd.Name() == "check" {
		outs = append(outs, namedFile{"$GITHUB_STEP_SUMMARY", p}) // appended to by check
	}
	if len(outs) == 0 {
		return nil
	}
	for _, a := range args {
		ins = append(ins, namedFile{"input", a})
	}
	for i, a := range outs {
		for _, b := range outs[i+1:] {
			if outfile.Same(a.path, b.path) {
				return usageErrorf("%s %s and %s %s are the same file: give each output its own", a.flag, a.path, b.flag, b.path)
			}
		}
	}
	for _, o := range outs {
		if _, err := os.Stat(o.path); err != nil {
			continue // not there yet: it cannot be an input
		}
		if in, ok := clashingInput(cmd, o.path, ins); ok {
			return usageErrorf("%s %s is the %s %s: writing it would destroy the input; give the output another path", o.flag, o.path, in.flag, in.path)
		}
	}
	return nil
}

// flagPaths are the paths a file flag names: its value, or each of a
// repeated flag's values.
func flagPaths(fl *pflag.Flag) []string {
	if sv, ok := fl.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{fl.Value.String()}
}

// checkStdinOnce refuses standard input ("-") named by two inputs (a dump
// and --baseline, both sides of a diff): it can be read only once, and
// the second reader would find it empty.
func checkStdinOnce(ins []namedFile, args []string) error {
	var named []string
	for _, in := range ins {
		if in.path == "-" {
			named = append(named, in.flag)
		}
	}
	for _, a := range args {
		if a == "-" {
			named = append(named, "input")
		}
	}
	if len(named) > 1 {
		return usageErrorf("stdin (-) given twice, as %s: stdin can be read only once; give a file for all but one", strings.Join(named, " and "))
	}
	return nil
}

// flagSpelling is how a message names fl: -o/--output, --junit.
func flagSpelling(fl *pflag.Flag) string {
	if fl.Shorthand != "" {
		return "-" + fl.Shorthand + "/--" + fl.Name
	}
	return "--" + fl.Name
}

// clashingInput returns the input (a file, a file under a directory, a
// glob's match, standard input) that is the same file as out.
func clashingInput(cmd *cobra.Command, out string, ins []namedFile) (namedFile, bool) {
	for _, in := range ins {
		if in.path == "-" {
			if f, ok := cmd.InOrStdin().(*os.File); ok {
				if fi, err := f.Stat(); err == nil && outfile.SameStat(out, fi) {
					return in, true
				}
			}
			continue
		}
		for _, p := range expandInput(in.path) {
			if outfile.Same(out, p) {
				return namedFile{in.flag, p}, true
			}
		}
	}
	return namedFile{}, false
}

// expandInput lists the files an input path reads: the file, a directory's
// files, a glob's matches (and their files).
func expandInput(p string) []string {
	paths := []string{p}
	if _, err := os.Stat(p); err != nil {
		matches, _ := filepath.Glob(p)
		paths = matches
	}
	var files []string
	for _, m := range paths {
		_ = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, path)
			}
			return nil
		})
	}
	return files
}

// writeFile writes the file at path with render, whole or not at all
// (outfile.Write): a render or write error, or a signal, leaves the
// previous file as it was.
func writeFile(path string, render func(io.Writer) error) error {
	return outfile.Write(path, func(w io.Writer) error { return render(&writingHook{w: w}) })
}

// phaseWriting is the phase phaseHook is told once an output file has
// its first bytes: the signal tests hold a write there.
const phaseWriting = "writing"

// writingHook tells phaseHook, on the first write, that a file is being
// written.
type writingHook struct {
	w    io.Writer
	told bool
}

func (h *writingHook) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	if !h.told && phaseHook != nil {
		h.told = true
		phaseHook(phaseWriting)
	}
	return n, err
}

// appendFile appends render's output to path ($GITHUB_STEP_SUMMARY, which
// is appended to by design), creating it if needed; a failed write or
// close is an error naming path.
func appendFile(path string, render func(io.Writer) error) error {
	out, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if err := render(out); err != nil {
		out.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkedWriter is the process's standard output: it keeps the first
// write error, so run exits 2 for a report that could not be delivered
// (a full disk, a closed pipe) even where a command did not look.
type checkedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = fmt.Errorf("write standard output: %w", unwrapPathErr(err))
	}
	return n, c.err
}

// failed is the first write error, nil for none.
func (c *checkedWriter) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// stdoutFailure folds out, the failed write on standard output (nil for
// none), into err, the command's outcome: a command that succeeded or gave
// a verdict (1, 3) exits 2 instead, its report not delivered; an error of
// its own (2, or 130) stands, naming the write too when it does not
// already.
func stdoutFailure(err, out error) error {
	var ee *exitError
	switch {
	case out == nil || errors.Is(err, out):
		return err
	case err == nil:
		return &exitError{code: 2, err: out}
	case errors.As(err, &ee) && (ee.code == 2 || ee.code == exitInterrupted):
		return &exitError{code: ee.code, err: fmt.Errorf("%w (and %v)", err, out)}
	}
	return &exitError{code: 2, err: fmt.Errorf("%w (and %v)", out, err)}
}

// unwrapPathErr drops the *fs.PathError of a write to /dev/stdout: the
// message says standard output already.
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
