package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"
)

// result is the JSON the command writes.
type result struct {
	Seed        uint64     `json:"seed"`
	Budget      int        `json:"budget"`
	WallSeconds float64    `json:"wall_seconds"`
	Packages    []pkgScore `json:"packages"`
}

// pkgScore is one package's measurement. Score is killed / (killed +
// survived); a mutant that does not compile (unviable) counts in neither.
type pkgScore struct {
	Dir         string   `json:"dir"`
	Sites       int      `json:"sites"`   // mutants found
	Covered     int      `json:"covered"` // on lines the tests run
	Tried       int      `json:"tried"`   // the sample
	Killed      int      `json:"killed"`
	Survived    int      `json:"survived"`
	Unviable    int      `json:"unviable"`
	Score       float64  `json:"score"`
	WallSeconds float64  `json:"wall_seconds"`
	Survivors   []mutant `json:"survivors"`
}

// mutatePackage measures the package in abs (named dir in the output).
func mutatePackage(ctx context.Context, abs, dir string, o options) (pkgScore, error) {
	began := time.Now()
	ps := pkgScore{Dir: dir, Survivors: []mutant{}}
	sites, srcs, err := findSites(abs, o.files)
	if err != nil {
		return ps, err
	}
	ps.Sites = len(sites)
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return ps, err
	}
	defer os.RemoveAll(tmp)
	fmt.Fprintf(os.Stderr, "%s: %d mutants; coverage run of its tests...\n", dir, len(sites))
	prof := filepath.Join(tmp, "cover.out")
	if out, err := goCmd(ctx, abs, "test", "-count=1", "-coverprofile="+prof, "."); err != nil {
		return ps, fmt.Errorf("the unmutated tests fail: %w\n%s", err, tail(out))
	}
	cov, err := coveredLines(prof)
	if err != nil {
		return ps, err
	}
	var covered []mutant
	for _, m := range sites {
		if cov[m.File][m.Line] {
			covered = append(covered, m)
		}
	}
	ps.Covered = len(covered)
	tried := sample(covered, o.budget, o.seed, dir)
	ps.Tried = len(tried)
	fmt.Fprintf(os.Stderr, "%s: %d on covered lines, trying %d\n", dir, ps.Covered, ps.Tried)
	verdicts := make([]string, len(tried))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	next, done := make(chan int), 0
	for w := 0; w < o.jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				v, err := tryMutant(ctx, abs, tmp, i, tried[i], srcs[tried[i].File], o.timeout)
				mu.Lock()
				done++
				if err != nil && firstErr == nil {
					firstErr = err
				}
				verdicts[i] = v
				fmt.Fprintf(os.Stderr, "  [%d/%d] %s:%d %s (%s): %s in %.0fs\n", done, len(tried),
					tried[i].File, tried[i].Line, tried[i].Op, tried[i].Desc, v, time.Since(t0).Seconds())
				mu.Unlock()
			}
		}()
	}
	for i := range tried {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return ps, firstErr
	}
	for i, v := range verdicts {
		switch v {
		case "killed", "timeout":
			ps.Killed++
		case "survived":
			ps.Survived++
			ps.Survivors = append(ps.Survivors, tried[i])
		default:
			ps.Unviable++
		}
	}
	if n := ps.Killed + ps.Survived; n > 0 {
		ps.Score = float64(ps.Killed) / float64(n)
	}
	ps.WallSeconds = time.Since(began).Seconds()
	return ps, nil
}

// sample returns n of ms, chosen by a generator seeded with seed and the
// package's name (so one package's sample does not move when another's
// file list changes), back in source order. n == 0 takes all.
func sample(ms []mutant, n int, seed uint64, pkg string) []mutant {
	if n == 0 || n >= len(ms) {
		return ms
	}
	h := fnv.New64a()
	io.WriteString(h, pkg)
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	idx := rng.Perm(len(ms))[:n]
	sort.Ints(idx)
	out := make([]mutant, n)
	for i, k := range idx {
		out[i] = ms[k]
	}
	return out
}

// tryMutant builds the package's test binary with m applied through an
// overlay and runs it: "killed" when a test fails, "timeout" when the run
// exceeds timeout, "survived" when every test passes, "unviable" when the
// mutant does not compile. err is a tool failure.
func tryMutant(ctx context.Context, abs, tmp string, i int, m mutant, src []byte, timeout time.Duration) (string, error) {
	dir := filepath.Join(tmp, fmt.Sprintf("m%d", i))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	mutated := append(append(append([]byte{}, src[:m.start]...), m.repl...), src[m.end:]...)
	file := filepath.Join(dir, m.File)
	if err := os.WriteFile(file, mutated, 0o644); err != nil {
		return "", err
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(abs, m.File): file}})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "pkg.test")
	if _, err := goCmd(ctx, abs, "test", "-c", "-overlay="+ovPath, "-o", bin, "."); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "unviable", nil
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, "-test.failfast", "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Dir = abs // the tests read testdata/ relative to the package
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return "survived", nil
	case ctx.Err() != nil:
		return "", ctx.Err()
	case runCtx.Err() != nil || strings.Contains(string(out), "test timed out after"):
		return "timeout", nil
	case errors.As(err, &exit):
		return "killed", nil
	}
	return "", fmt.Errorf("run %s: %w", m.File, err)
}

// goCmd runs the go command in dir and returns its combined output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// tail returns the last lines of out, for an error.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return strings.Join(lines, "\n")
}

// printTable writes the scores and the survivors for people.
func printTable(w io.Writer, r result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tmutants\tcovered\ttried\tkilled\tsurvived\tunviable\tscore\ttime")
	for _, p := range r.Packages {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%.0fs\n", p.Dir, p.Sites, p.Covered, p.Tried,
			p.Killed, p.Survived, p.Unviable, 100*p.Score, p.WallSeconds)
	}
	tw.Flush()
	for _, p := range r.Packages {
		for _, m := range p.Survivors {
			fmt.Fprintf(w, "survivor %s/%s:%d %s (%s)\n", p.Dir, m.File, m.Line, m.Op, m.Desc)
		}
	}
	fmt.Fprintf(w, "seed %d, budget %d per package, %.0fs\n", r.Seed, r.Budget, r.WallSeconds)
}
