// Command mutate is the project's mutation tester: it makes small semantic
// changes (mutants) to a package's source, one at a time, and runs the
// package's own tests against each; a mutant the tests still pass on (a
// survivor) is a behaviour no test pins. scripts/mutation.sh runs it on the
// pool, the analyzer and the connector; TESTING.md records the scores.
//
// Its operators are of two kinds. The boundary operators (sites.go) read
// only the syntax: a conditional boundary, a negated ==, a dropped && or
// || operand, a removed ++ or --, a removed min/max clamp, a time
// boundary. The typed operators (ops.go) need the package's types, read
// from go/types over its dependencies' export data: the bodies of two
// branches swapped, a sibling field of the same type read, a call that
// returns its argument's type dropped, a context check dropped, a field's
// reset dropped, a parsed boolean inverted. Every mutant drawn is
// type-checked before it is built: one that does not compile is skipped
// and another drawn in its place.
//
// It is bounded by principle, for a small shared machine:
//   - the tree is never modified: each mutant reaches the compiler through
//     go test -overlay, so mutants run side by side (-jobs);
//   - only mutants on lines the package's tests cover are tried (one
//     coverage run per package): an uncovered mutant survives by
//     construction and says nothing a cover report does not;
//   - each mutant's test binary runs with -test.failfast, so a killed
//     mutant costs its first failing test, and -test.timeout, so a mutant
//     that hangs the tests is killed, not waited for;
//   - -budget N takes a deterministic sample of N covered mutants per
//     package (seeded by -seed and the package path), stratified by
//     operator (each operator's mutants drawn in turn, so a rare operator
//     is tried beside the commonest), -files restricts the
//     files and -exclude leaves some out (analyze's HTML renderers, which
//     its slowest tests pin, measured on their own).
//
// It writes the result as JSON (-out) and a table on stdout: per package
// and per operator, killed, survived and total, and each survivor as
// file:line operator. It exits 1 on
// a tool error (a package's tests failing unmutated included), never on a
// low score: a score is a measurement.
//
// Usage:
//
//	go run ./internal/mutate [-budget N] [-seed S] [-files RE] [-exclude RE] [-jobs J] [-out FILE] DIR...
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mutate:", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	budget  int
	seed    uint64
	files   fileFilter
	jobs    int
	timeout time.Duration
	out     string
	// tests, when set, is the package directory whose tests run against
	// every mutant (coverage read with -coverpkg) instead of the mutated
	// package's own: for a package whose behaviour its importer's tests
	// pin end to end, as the analyzer's stages are pinned by the engine's.
	tests string
	// testsFor maps a package directory (as given) to the directory whose
	// tests pin it, for packages measured in one run with others that use
	// their own tests; tests, when set, wins.
	testsFor map[string]string
}

func run() error {
	var o options
	files := flag.String("files", "", "only mutate files whose base name matches this regexp")
	exclude := flag.String("exclude", "", "never mutate files whose base name matches this regexp")
	flag.IntVar(&o.budget, "budget", 30, "mutants tried per package, a deterministic sample of the covered ones (0: all)")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the sample")
	flag.IntVar(&o.jobs, "jobs", 2, "mutants built and tested at a time")
	flag.DurationVar(&o.timeout, "timeout", 3*time.Minute, "a mutant's test run longer than this is killed (a hang)")
	flag.StringVar(&o.out, "out", "mutation.json", "where the JSON result goes")
	flag.StringVar(&o.tests, "tests", "", "the package directory whose tests run against the mutants (default: each mutated package's own)")
	testsFor := flag.String("tests-for", "", "DIR=TESTDIR,...: packages pinned by another package's tests, when -tests is not given")
	flag.Parse()
	if flag.NArg() == 0 {
		return fmt.Errorf("usage: mutate [flags] DIR... (package directories)")
	}
	for _, f := range []struct {
		name, expr string
		re         **regexp.Regexp
	}{{"-files", *files, &o.files.only}, {"-exclude", *exclude, &o.files.skip}} {
		if f.expr == "" {
			continue
		}
		re, err := regexp.Compile(f.expr)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		*f.re = re
	}
	var err error
	if o.testsFor, err = parseTestsFor(*testsFor); err != nil {
		return err
	}
	if o.jobs < 1 || o.budget < 0 {
		return fmt.Errorf("-jobs must be ≥ 1 and -budget ≥ 0")
	}
	// An interrupt stops the running builds and tests, and the temporary
	// directories are still removed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	began := time.Now()
	res := result{Seed: o.seed, Budget: o.budget}
	for _, dir := range flag.Args() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		pr, err := mutatePackage(ctx, abs, dir, o)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		res.Packages = append(res.Packages, pr)
	}
	res.WallSeconds = time.Since(began).Seconds()
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	printTable(os.Stdout, res)
	return nil
}

// parseTestsFor reads -tests-for: DIR=TESTDIR pairs, comma-separated.
func parseTestsFor(s string) (map[string]string, error) {
	m := map[string]string{}
	for _, pair := range strings.Split(s, ",") {
		if pair == "" {
			continue
		}
		dir, tests, ok := strings.Cut(pair, "=")
		if !ok || dir == "" || tests == "" {
			return nil, fmt.Errorf("-tests-for %q: want DIR=TESTDIR", pair)
		}
		m[filepath.Clean(dir)] = tests
	}
	return m, nil
}
