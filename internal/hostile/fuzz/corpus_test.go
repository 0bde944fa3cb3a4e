package fuzz

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// corpusDir holds the minimized reproducers of the fuzzer's findings, one
// directory each, named for what it found; known.txt lists those still
// open, with the issue and the reason.
const corpusDir = "testdata/corpus"

// mcptraceBin returns the binary to replay the corpus against: $MCPTRACE_BIN
// when set (CI passes the one it built), else one built from this tree.
func mcptraceBin(t *testing.T) string {
	if bin := os.Getenv("MCPTRACE_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "mcptrace")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/mcptrace/mcptrace/cmd/mcptrace")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build mcptrace: %v\n%s", err, out)
	}
	return bin
}

// Every reproducer replays through the built binary: one that still finds
// what it was committed for fails, unless known.txt lists it as open (then
// it is logged with its reason, never silently skipped); an open one that
// now passes is logged so the list can shrink.
func TestCorpusReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the hostile corpus replayed through the built binary (about 20 s)")
	}
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	known, err := LoadKnown(filepath.Join(corpusDir, "known.txt"))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range corpus {
		names[e.Name] = true
	}
	for name := range known {
		if !names[name] {
			t.Errorf("known.txt lists %s, which is not in %s", name, corpusDir)
		}
	}
	if len(corpus) == 0 {
		t.Fatalf("no reproducers under %s", corpusDir)
	}
	bin := mcptraceBin(t)
	tmp := t.TempDir()
	for _, e := range corpus {
		t.Run(e.Name, func(t *testing.T) {
			if len(e.Case.Found) == 0 {
				t.Fatalf("%s/case.json names no finding (found: [family/kind/run])", e.Name)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			fs, _, err := Judge(ctx, bin, tmp, e.Case, DefaultLimits(), RunsOf(e.Case.Found)...)
			if err != nil {
				t.Fatal(err)
			}
			reason, open := known[e.Name]
			switch {
			case len(fs) > 0 && open:
				t.Logf("KNOWN OPEN (%s): %d findings, first: %s", reason, len(fs), fs[0])
			case len(fs) > 0:
				for _, f := range fs {
					t.Errorf("%s: %s", f.Signature(e.Case.Family), f)
				}
				t.Logf("reproduce: go run ./internal/hostile/fuzzrun -bin BIN -family %s -seed %d -size %d -mask %d -cases 1 (or replay %s)",
					e.Case.Family, e.Case.Seed, e.Case.Size, e.Case.Mask, e.Dir)
			case open:
				t.Logf("NOW PASSES: remove %s from known.txt (%s)", e.Name, reason)
			}
		})
	}
}

// The corpus's manifests are what the generator would write for their four
// arguments, so a reproducer can also be regenerated and minimized again;
// a manifest that disagrees was edited by hand or the generator changed
// under it (then the committed bytes still replay, and this says so).
func TestCorpusManifestsNameTheirFindings(t *testing.T) {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range corpus {
		if _, err := FamilyByName(e.Case.Family); err != nil {
			t.Errorf("%s: %v", e.Name, err)
		}
		for _, sig := range e.Case.Found {
			if !strings.HasPrefix(sig, e.Case.Family+"/") || strings.Count(sig, "/") != 2 {
				t.Errorf("%s: signature %q is not %s/KIND/RUN", e.Name, sig, e.Case.Family)
			}
		}
		for _, in := range e.Case.Inputs {
			if _, err := os.Lstat(filepath.Join(e.Dir, in)); err != nil && !hasSpecial(e.Case, in) {
				t.Errorf("%s: input %s: %v", e.Name, in, err)
			}
		}
	}
}

func hasSpecial(c *Case, path string) bool {
	for _, s := range c.Special {
		if s.Path == path || strings.HasPrefix(s.Path, path+"/") {
			return true
		}
	}
	return false
}
