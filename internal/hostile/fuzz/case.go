// Package fuzz is a structure-aware fuzzer of the mcptrace binary: it
// generates hostile inputs by family (markup, nesting, cardinality,
// amplification, ids and times, encodings, special files, sources that say
// data is missing, rules files), runs the built binary's check and analyze
// on each in every output format under a memory and a time bound, and judges
// the answers with one oracle (oracle.go): no crash, no budget overrun, no
// wall time past the bound, no escape byte or live markup from the dump in
// any output, no exit 0 on a dump a source said was broken.
//
// Every case is a pure function of (family, seed, size, mask): a failing
// case prints the four, and the fuzzer's driver (internal/hostile/fuzzrun)
// minimizes it by clearing mask bits and halving the size, then writes the
// input with its manifest into the corpus (testdata/corpus), which
// TestCorpus replays against the built binary.
package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// Case is one generated input: files under a directory, the paths given to
// mcptrace, and what the oracle may expect of the answer.
type Case struct {
	// Family, Seed, Size and Mask regenerate the case (see Generate).
	Family string `json:"family"`
	Seed   uint64 `json:"seed"`
	Size   int    `json:"size"`
	Mask   uint64 `json:"mask"`
	// What says, in words, what the case holds.
	What string `json:"what"`
	// Broken is true when a source said data is missing (a truncated
	// stream, a Jaeger errors array, an empty or NUL-filled dump in a
	// directory): check must not exit 0 and analyze must mark the report
	// partial (or refuse the input).
	Broken bool `json:"broken"`
	// Inputs are the paths, relative to the case directory, given to
	// mcptrace (files or directories).
	Inputs []string `json:"inputs"`
	// Config is a rules file, relative to the case directory, for check.
	Config string `json:"config,omitempty"`
	// Budget is the --max-memory of every run: a byte size, or "default"
	// for none (mcptrace's own default, a quarter of the machine's memory
	// up to 1 GiB); "" takes the driver's.
	Budget string `json:"budget,omitempty"`
	// Args are extra flags for every run.
	Args []string `json:"args,omitempty"`
	// Special lists the files git cannot hold (FIFOs, symlinks), made when
	// the case is written out.
	Special []Special `json:"special,omitempty"`
	// RawBytes is the decompressed size of the input, which bounds the
	// size of each output (see OutputBound).
	RawBytes int64 `json:"raw_bytes"`
	// Found lists, in a corpus reproducer, the signatures of the findings
	// it was minimized for (Finding.Signature), and Details what they said.
	Found   []string `json:"found,omitempty"`
	Details []string `json:"details,omitempty"`
	// Files are the regular files, by path relative to the case directory.
	Files map[string][]byte `json:"-"`
}

// Special is a file that is not a regular file.
type Special struct {
	// Path is relative to the case directory.
	Path string `json:"path"`
	// Kind is "fifo", "symlink" or "empty" (an empty regular file whose
	// name is itself hostile: ESC, U+202E; kept out of the repository).
	Kind string `json:"kind"`
	// Target is a symlink's target, as given to os.Symlink.
	Target string `json:"target,omitempty"`
}

// manifestName is the file in a corpus directory that describes its case.
const manifestName = "case.json"

// Materialize writes the case under dir (which must exist): its files,
// and either its special files (to run it) or, when manifest is true, its
// case.json (to keep it: the special files are made when it is replayed).
func (c *Case) Materialize(dir string, manifest bool) error {
	paths := make([]string, 0, len(c.Files))
	for p := range c.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("case %s: %w", c.Family, err)
		}
		if err := os.WriteFile(full, c.Files[p], 0o644); err != nil {
			return fmt.Errorf("case %s: %w", c.Family, err)
		}
	}
	for _, s := range c.Special {
		if manifest {
			// A reproducer's directory holds only regular files: git
			// would keep a symlink to /dev/zero or to the directory
			// above, which other tools then follow. The manifest lists
			// them and a replay makes them.
			break
		}
		full := filepath.Join(dir, s.Path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("case %s: %w", c.Family, err)
		}
		var err error
		switch s.Kind {
		case "fifo":
			err = syscall.Mkfifo(full, 0o644)
		case "symlink":
			err = os.Symlink(s.Target, full)
		case "empty":
			err = os.WriteFile(full, nil, 0o644)
		default:
			err = fmt.Errorf("unknown special file kind %q", s.Kind)
		}
		if err != nil {
			return fmt.Errorf("case %s: special file %s: %w", c.Family, s.Path, err)
		}
	}
	if !manifest {
		return nil
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, manifestName), append(b, '\n'), 0o644)
}

// LoadCase reads a corpus directory: its case.json and every other regular
// file in it, so a reproducer replays the bytes committed, whatever the
// generator writes today.
func LoadCase(dir string) (*Case, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, err
	}
	var c Case
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, manifestName), err)
	}
	c.Files = map[string][]byte{}
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == manifestName {
			return nil
		}
		data, err := os.ReadFile(p)
		c.Files[rel] = data
		return err
	})
	return &c, err
}
