package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
// survived); a mutant that does not compile (unviable) counts in neither:
// one that does not type-check is skipped when the sample is drawn (the
// next one drawn instead), one the compiler still refuses is counted
// unviable after its build.
type pkgScore struct {
	Dir         string    `json:"dir"`
	Tests       string    `json:"tests,omitempty"` // whose tests ran, when not Dir's own
	Sites       int       `json:"sites"`           // mutants found
	Covered     int       `json:"covered"`         // on lines the tests run
	Tried       int       `json:"tried"`           // the sample
	Killed      int       `json:"killed"`
	Survived    int       `json:"survived"`
	Unviable    int       `json:"unviable"`
	Score       float64   `json:"score"`
	WallSeconds float64   `json:"wall_seconds"`
	Operators   []opScore `json:"operators"` // by operator name, those tried
	Survivors   []mutant  `json:"survivors"`
}

// opScore is one operator's part of a package's measurement: Total is
// killed + survived, the mutants of the operator the score counts.
type opScore struct {
	Op       string  `json:"op"`
	Killed   int     `json:"killed"`
	Survived int     `json:"survived"`
	Total    int     `json:"total"`
	Score    float64 `json:"score"`
}

// tally adds one verdict of the mutant m to ps.
func (ps *pkgScore) tally(m mutant, verdict string) {
	i := slices.IndexFunc(ps.Operators, func(o opScore) bool { return o.Op == m.Op })
	if i < 0 {
		i = len(ps.Operators)
		ps.Operators = append(ps.Operators, opScore{Op: m.Op})
	}
	o := &ps.Operators[i]
	switch verdict {
	case "killed", "timeout":
		ps.Killed++
		o.Killed++
	case "survived":
		ps.Survived++
		o.Survived++
		ps.Survivors = append(ps.Survivors, m)
	default:
		ps.Unviable++
		return
	}
	o.Total++
	o.Score = float64(o.Killed) / float64(o.Total)
}

// mutatePackage measures the package in abs (named dir in the output).
func mutatePackage(ctx context.Context, abs, dir string, o options) (pkgScore, error) {
	began := time.Now()
	ps := pkgScore{Dir: dir, Survivors: []mutant{}}
	sites, srcs, tp, err := findSites(ctx, abs, o.files)
	if err != nil {
		return ps, err
	}
	ps.Sites = len(sites)
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		return ps, err
	}
	defer os.RemoveAll(tmp)
	tests := o.tests
	if tests == "" {
		tests = o.testsFor[filepath.Clean(dir)]
	}
	runs, err := testRuns(ctx, abs, tests)
	if err != nil {
		return ps, err
	}
	ps.Tests = tests
	fmt.Fprintf(os.Stderr, "%s: %d mutants; coverage run of the tests...\n", dir, len(sites))
	cov, err := coverage(ctx, runs, tmp)
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
	tried, skipped := sampleViable(covered, o.budget, o.seed, dir, func(m mutant) bool { return tp.compiles(m, srcs[m.File]) })
	ps.Tried, ps.Unviable = len(tried), skipped
	fmt.Fprintf(os.Stderr, "%s: %d on covered lines, trying %d (%d drawn did not type-check, skipped)\n", dir, ps.Covered, ps.Tried, skipped)
	verdicts, err := runMutants(ctx, abs, runs, tmp, tried, srcs, o)
	if err != nil {
		return ps, err
	}
	for i, v := range verdicts {
		ps.tally(tried[i], v)
	}
	slices.SortFunc(ps.Operators, func(a, b opScore) int { return strings.Compare(a.Op, b.Op) })
	if n := ps.Killed + ps.Survived; n > 0 {
		ps.Score = float64(ps.Killed) / float64(n)
	}
	ps.WallSeconds = time.Since(began).Seconds()
	return ps, nil
}

// runMutants tries each mutant of tried, o.jobs at a time, printing
// progress, and returns their verdicts in order.
func runMutants(ctx context.Context, abs string, runs []testRun, tmp string, tried []mutant, srcs map[string][]byte, o options) ([]string, error) {
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
				v, err := tryMutant(ctx, abs, runs, tmp, i, tried[i], srcs[tried[i].File], o.timeout)
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
	return verdicts, firstErr
}

// sample returns n of ms, chosen by a generator seeded with seed and the
// package's name (so one package's sample does not move when another's
// file list changes), back in source order. n == 0 takes all.
func sample(ms []mutant, n int, seed uint64, pkg string) []mutant {
	out, _ := sampleViable(ms, n, seed, pkg, nil)
	return out
}

// sampleViable is sample keeping only the mutants ok accepts (nil: all),
// stratified by operator: each operator's mutants are drawn in their own
// seeded order, one operator after the other in turn (by name), until n
// are accepted. So a budget of 40 tries every operator that has a site,
// not mostly the commonest (sibling-field and negate outnumber
// drop-ctx-check a hundred to one), and a mutant that does not compile
// costs no test run and takes no place in the budget. skipped is how many
// drawn were refused.
func sampleViable(ms []mutant, n int, seed uint64, pkg string, ok func(mutant) bool) (out []mutant, skipped int) {
	if n == 0 || n > len(ms) {
		n = len(ms)
	}
	h := fnv.New64a()
	io.WriteString(h, pkg)
	rng := rand.New(rand.NewPCG(seed, h.Sum64()))
	byOp := map[string][]int{}
	for i, m := range ms {
		byOp[m.Op] = append(byOp[m.Op], i)
	}
	ops := slices.Sorted(maps.Keys(byOp))
	queues := make([][]int, len(ops))
	for j, op := range ops {
		for _, k := range rng.Perm(len(byOp[op])) {
			queues[j] = append(queues[j], byOp[op][k])
		}
	}
	var idx []int
	for drawn := true; drawn && len(idx) < n; {
		drawn = false
		for j := range queues {
			for len(queues[j]) > 0 && len(idx) < n {
				k := queues[j][0]
				queues[j] = queues[j][1:]
				drawn = true
				if ok == nil || ok(ms[k]) {
					idx = append(idx, k)
					break
				}
				skipped++
			}
		}
	}
	sort.Ints(idx)
	out = make([]mutant, len(idx))
	for i, k := range idx {
		out[i] = ms[k]
	}
	return out, skipped
}

// tryMutant builds the test binary of each of runs with m applied through
// an overlay and runs it: "killed" when a test fails, "timeout" when a run
// exceeds timeout, "survived" when every test of every run passes,
// "unviable" when the mutant does not compile. err is a tool failure.
func tryMutant(ctx context.Context, abs string, runs []testRun, tmp string, i int, m mutant, src []byte, timeout time.Duration) (string, error) {
	dir := filepath.Join(tmp, fmt.Sprintf("m%d", i))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, m.File)
	if err := os.WriteFile(file, applyMutant(src, m), 0o644); err != nil {
		return "", err
	}
	ov, _ := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(abs, m.File): file}})
	ovPath := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return "", err
	}
	for k, r := range runs {
		v, err := runTests(ctx, r.dir, ovPath, filepath.Join(dir, fmt.Sprintf("pkg%d.test", k)), m.File, timeout)
		if err != nil || v != "survived" {
			return v, err
		}
	}
	return "survived", nil
}

// runTests builds the tests of the package in testDir with the overlay
// ovPath into bin and runs them, as tryMutant reports one run.
func runTests(ctx context.Context, testDir, ovPath, bin, file string, timeout time.Duration) (string, error) {
	// -vet=off: go test -c runs vet, which would refuse a mutant that
	// compiles (a condition made redundant) and cost a vet run per mutant.
	if _, err := goCmd(ctx, testDir, "test", "-c", "-vet=off", "-overlay="+ovPath, "-o", bin, "."); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "unviable", nil
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout+time.Minute)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, "-test.failfast", "-test.count=1", "-test.timeout="+timeout.String())
	cmd.Dir = testDir // the tests read testdata/ relative to their package
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
	return "", fmt.Errorf("run %s: %w", file, err)
}

// testRun is one package's tests run against the mutants: its directory
// and the flags that make its coverage profile cover the mutated package.
type testRun struct {
	dir       string
	coverArgs []string
}

// testRuns returns the tests that run against the mutants of the package
// in abs: its own alone when tests is empty; else the tests of the package
// in tests (covering abs through -coverpkg), and abs's own as well when it
// has any, so a mutant either kills counts.
func testRuns(ctx context.Context, abs, tests string) ([]testRun, error) {
	if tests == "" {
		return []testRun{{dir: abs}}, nil
	}
	testAbs, err := filepath.Abs(tests)
	if err != nil {
		return nil, err
	}
	out, err := goCmd(ctx, abs, "list", "-f", "{{.ImportPath}} {{len .TestGoFiles}}{{len .XTestGoFiles}}", ".")
	if err != nil {
		return nil, fmt.Errorf("go list: %w\n%s", err, tail(out))
	}
	path, counts, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	runs := []testRun{{dir: testAbs, coverArgs: []string{"-coverpkg=" + path}}}
	if counts != "00" && testAbs != abs {
		runs = append(runs, testRun{dir: abs})
	}
	return runs, nil
}

// coverage runs each of runs once, unmutated, and returns the lines of
// the mutated package any of them covered. Their failing is a tool error.
func coverage(ctx context.Context, runs []testRun, tmp string) (map[string]map[int]bool, error) {
	all := map[string]map[int]bool{}
	for k, r := range runs {
		prof := filepath.Join(tmp, fmt.Sprintf("cover%d.out", k))
		if out, err := goCmd(ctx, r.dir, append([]string{"test", "-count=1", "-coverprofile=" + prof}, append(r.coverArgs, ".")...)...); err != nil {
			return nil, fmt.Errorf("the unmutated tests of %s fail: %w\n%s", r.dir, err, tail(out))
		}
		cov, err := coveredLines(prof)
		if err != nil {
			return nil, err
		}
		for file, lines := range cov {
			if all[file] == nil {
				all[file] = map[int]bool{}
			}
			for l := range lines {
				all[file][l] = true
			}
		}
	}
	return all, nil
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

// printTable writes the scores, per package and per operator, and the
// survivors for people.
func printTable(w io.Writer, r result) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "package\tmutants\tcovered\ttried\tkilled\tsurvived\tunviable\tscore\ttime")
	for _, p := range r.Packages {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%%\t%.0fs\n", p.Dir, p.Sites, p.Covered, p.Tried,
			p.Killed, p.Survived, p.Unviable, 100*p.Score, p.WallSeconds)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(tw, "package\toperator\tkilled\tsurvived\ttotal\tscore")
	for _, p := range r.Packages {
		for _, o := range p.Operators {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.0f%%\n", p.Dir, o.Op, o.Killed, o.Survived, o.Total, 100*o.Score)
		}
	}
	tw.Flush()
	for _, p := range r.Packages {
		for _, m := range p.Survivors {
			fmt.Fprintf(w, "survivor %s/%s:%d %s (%s)\n", p.Dir, m.File, m.Line, m.Op, m.Desc)
		}
	}
	fmt.Fprintf(w, "seed %d, budget %d per package, %.0fs\n", r.Seed, r.Budget, r.WallSeconds)
}
