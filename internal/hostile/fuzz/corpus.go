package fuzz

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Pick returns the family, size and mask the driver tries for seed: a
// family in turn, a log-uniform size up to its MaxSize, a random subset of
// its parts (all of them one time in four); the largest size one time in
// four.
func Pick(seed uint64) (string, int, uint64) {
	fs := Families()
	rng := rand.New(rand.NewPCG(seed, 0x7069636b)) // "pick"
	f := fs[seed%uint64(len(fs))]
	all := uint64(1)<<uint(f.Parts) - 1
	mask := rng.Uint64() & all
	if mask == 0 || rng.IntN(4) == 0 {
		mask = all
	}
	size := logSize(rng, f.MaxSize)
	if rng.IntN(4) == 0 {
		// The largest size, a quarter of the time: the shapes that break
		// a defence by size (a million levels, 40k scopes) are rare
		// under a log-uniform draw alone.
		size = f.MaxSize
	}
	return f.Name, size, mask
}

// Entry is one reproducer of the corpus.
type Entry struct {
	// Name is the directory's name: what it found.
	Name string
	// Dir is its path.
	Dir  string
	Case *Case
}

// LoadCorpus reads every reproducer under dir (one directory each, with a
// case.json), sorted by name.
func LoadCorpus(dir string) ([]Entry, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		if !de.IsDir() {
			continue
		}
		p := filepath.Join(dir, de.Name())
		c, err := LoadCase(p)
		if err != nil {
			return nil, fmt.Errorf("corpus %s: %w", de.Name(), err)
		}
		out = append(out, Entry{Name: de.Name(), Dir: p, Case: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// LoadKnown reads the list of reproducers still open: one per line, the
// reproducer's name, a tab, the issue, a tab, the reason; # starts a
// comment.
func LoadKnown(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	known := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, rest, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(rest) == "" {
			return nil, fmt.Errorf("%s:%d: expected NAME<tab>ISSUE<tab>REASON", path, n)
		}
		known[name] = strings.ReplaceAll(strings.TrimSpace(rest), "\t", ": ")
	}
	return known, sc.Err()
}

// KnownSignatures returns the signatures the open reproducers were found
// for: a fuzz run that finds one of them finds nothing new.
func KnownSignatures(corpus []Entry, known map[string]string) map[string]string {
	sigs := map[string]string{}
	for _, e := range corpus {
		if _, open := known[e.Name]; !open {
			continue
		}
		for _, s := range e.Case.Found {
			sigs[s] = e.Name
		}
	}
	return sigs
}
