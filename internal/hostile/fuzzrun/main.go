// Command fuzzrun drives the structure-aware fuzzer of package
// internal/hostile/fuzz against a built mcptrace binary for a bounded time
// and a bounded number of cases: each case is generated from a seed, run
// through check and analyze in every output format under --max-memory, a
// peak-RSS bound and a wall-time bound, and judged by the oracle. A finding
// whose signature an open reproducer of the corpus already has is known;
// any other is new: it is minimized, written with its manifest under -out,
// printed with the command that reproduces it, and makes the exit status 1.
//
// Usage:
//
//	fuzzrun -bin ./mcptrace -duration 60s                 # CI
//	fuzzrun -bin ./mcptrace -duration 10m -seed 42         # a long run
//	fuzzrun -bin ./mcptrace -family nesting -seed 7 -size 1000000 -mask 1   # one case
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mcptrace/mcptrace/internal/hostile/fuzz"
)

func main() {
	code, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "fuzzrun:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

// tally is one family's counts.
type tally struct {
	cases, runs, known, fresh int
	maxWall                   time.Duration
	maxRSS                    int64
	kinds                     map[string]int
}

type options struct {
	bin, out, corpus, family string
	duration, minimize       time.Duration
	cases                    int
	seed                     uint64
	size                     int
	mask                     uint64
	lim                      fuzz.Limits
	verbose                  bool
	write                    string
	judge                    string
	update                   bool
}

func parse() (options, error) {
	o := options{lim: fuzz.DefaultLimits()}
	var maxRSS int64
	flag.StringVar(&o.bin, "bin", "", "the mcptrace binary to run (required)")
	flag.DurationVar(&o.duration, "duration", time.Minute, "stop starting cases after this long")
	flag.IntVar(&o.cases, "cases", 100000, "stop after this many cases")
	flag.Uint64Var(&o.seed, "seed", 0, "the first case's seed (0: from the clock, printed); case i has seed+i")
	flag.StringVar(&o.family, "family", "", "only this family (with -size and -mask: exactly one case)")
	flag.IntVar(&o.size, "size", 0, "with -family: the size (0: the seed's)")
	flag.Uint64Var(&o.mask, "mask", 0, "with -family: the mask (0: the seed's)")
	flag.StringVar(&o.out, "out", "hostile-findings", "directory the new findings' reproducers are written to")
	flag.StringVar(&o.corpus, "corpus", "internal/hostile/fuzz/testdata/corpus", "the committed corpus (its known.txt lists the open reproducers)")
	flag.DurationVar(&o.minimize, "minimize", time.Minute, "time spent minimizing each new finding (0: none)")
	flag.StringVar(&o.lim.Budget, "budget", o.lim.Budget, "--max-memory given to every run")
	flag.Int64Var(&maxRSS, "max-rss-mib", o.lim.MaxRSS>>20, "peak RSS (MiB) past which a run is a finding")
	flag.DurationVar(&o.lim.Wall, "wall", o.lim.Wall, "wall time past which a run is killed and a finding")
	flag.BoolVar(&o.verbose, "v", false, "print every case")
	flag.StringVar(&o.judge, "judge", "", "judge one case directory (a reproducer with its case.json) on every run, print its findings and figures, and exit")
	flag.BoolVar(&o.update, "update", false, "with -judge: rewrite the case.json's found list with what this binary finds")
	flag.StringVar(&o.write, "write", "", "write each case's input (with its case.json) under this directory, to run by hand")
	flag.Parse()
	o.lim.MaxRSS = maxRSS << 20
	if o.bin == "" {
		return o, errors.New("give -bin, the built mcptrace")
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano()) & (1<<40 - 1)
	}
	return o, nil
}

func run() (int, error) {
	o, err := parse()
	if err != nil {
		return 0, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.judge != "" {
		return judgeOne(ctx, o)
	}
	knownSigs := map[string]string{}
	if corpus, err := fuzz.LoadCorpus(o.corpus); err == nil {
		known, err := fuzz.LoadKnown(filepath.Join(o.corpus, "known.txt"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
		knownSigs = fuzz.KnownSignatures(corpus, known)
	}
	tmp, err := os.MkdirTemp("", "fuzzrun-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("fuzzrun: seed %d, up to %d cases in %s; bounds: --max-memory %s, RSS %d MiB, wall %s per run\n",
		o.seed, o.cases, o.duration, o.lim.Budget, o.lim.MaxRSS>>20, o.lim.Wall)
	tallies := map[string]*tally{}
	seen := map[string]bool{}
	var fresh []string
	end := time.Now().Add(o.duration)
	for i := 0; i < o.cases && time.Now().Before(end) && ctx.Err() == nil; i++ {
		seed := o.seed + uint64(i)
		family, size, mask := fuzz.Pick(seed)
		if o.family != "" {
			if o.family != family && (o.size == 0 || o.mask == 0) {
				// Keep the seed's size and mask but force the family.
				f, err := fuzz.FamilyByName(o.family)
				if err != nil {
					return 0, err
				}
				mask &= 1<<uint(f.Parts) - 1
				if mask == 0 {
					mask = 1<<uint(f.Parts) - 1
				}
				size = min(size, f.MaxSize)
			}
			family = o.family
			if o.size > 0 {
				size = o.size
			}
			if o.mask > 0 {
				mask = o.mask
			}
		}
		c, err := fuzz.Generate(family, seed, size, mask)
		if err != nil {
			fmt.Printf("case %d: NEW fuzzer bug: %v\n", i, err)
			fresh = append(fresh, err.Error())
			continue
		}
		if o.write != "" {
			dir := filepath.Join(o.write, fmt.Sprintf("%s-%d", family, seed))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return 0, err
			}
			if err := c.Materialize(dir, true); err != nil {
				return 0, err
			}
		}
		// A case started before the end may finish a bounded while after
		// it: one run's wall bound, then it is abandoned without a verdict.
		cctx, cancel := context.WithDeadline(ctx, end.Add(o.lim.Wall))
		fs, stats, err := fuzz.Judge(cctx, o.bin, tmp, c, o.lim)
		abandoned := cctx.Err() != nil
		cancel()
		if abandoned {
			fmt.Printf("case %d: -family %s -seed %d: abandoned at the deadline\n", i, family, seed)
			break
		}
		if err != nil {
			return 0, fmt.Errorf("family %s seed %d: %w", family, seed, err)
		}
		t := tallies[family]
		if t == nil {
			t = &tally{kinds: map[string]int{}}
			tallies[family] = t
		}
		t.cases++
		t.runs += len(stats)
		for _, s := range stats {
			t.maxWall = max(t.maxWall, s.Wall)
			t.maxRSS = max(t.maxRSS, s.RSS)
		}
		if o.verbose || len(fs) > 0 {
			fmt.Printf("case %d: -family %s -seed %d -size %d -mask %d (budget %s): %s: %d findings\n", i, family, seed, c.Size, c.Mask, c.Budget, c.What, len(fs))
		}
		if o.verbose {
			for _, s := range stats {
				fmt.Printf("  %-16s exit %3d %6.2fs %5d MiB\n", s.Run, s.Code, s.Wall.Seconds(), s.RSS>>20)
			}
		}
		for _, f := range fs {
			sig := f.Signature(family)
			t.kinds[f.Kind]++
			if name, ok := knownSigs[sig]; ok {
				t.known++
				if o.verbose {
					fmt.Printf("  known (%s): %s\n", name, f)
				}
				continue
			}
			t.fresh++
			fmt.Printf("  NEW %s: %s\n", sig, f)
			if seen[sig] {
				continue
			}
			seen[sig] = true
			dir, err := keep(ctx, o, tmp, c, f, end.Add(o.lim.Wall))
			if err != nil {
				return 0, err
			}
			fresh = append(fresh, fmt.Sprintf("%s: %s (reproducer %s)", sig, f, dir))
		}
	}
	summarize(tallies)
	if len(fresh) > 0 {
		fmt.Printf("fuzzrun: %d new findings (signature: family/kind/run):\n", len(fresh))
		for _, f := range fresh {
			fmt.Println("  " + f)
		}
		return 1, nil
	}
	fmt.Println("fuzzrun: nothing new")
	return 0, nil
}

// judgeOne judges the case in o.judge on every run and prints what it
// found; exit 1 if anything.
func judgeOne(ctx context.Context, o options) (int, error) {
	c, err := fuzz.LoadCase(o.judge)
	if err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp("", "fuzzrun-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	fs, stats, err := fuzz.Judge(ctx, o.bin, tmp, c, o.lim)
	if err != nil {
		return 0, err
	}
	fmt.Printf("%s: %s\n", o.judge, c.What)
	for _, s := range stats {
		fmt.Printf("  %-16s exit %3d %6.2fs %5d MiB\n", s.Run, s.Code, s.Wall.Seconds(), s.RSS>>20)
	}
	var sigs []string
	for _, f := range fs {
		fmt.Printf("  %s: %s\n", f.Signature(c.Family), f)
		if sig := f.Signature(c.Family); !slices.Contains(sigs, sig) {
			sigs = append(sigs, sig)
		}
	}
	if o.update && len(sigs) > 0 {
		c.Found, c.Details = sigs, nil
		for _, f := range fs {
			c.Details = append(c.Details, f.String())
		}
		b, err := json.MarshalIndent(c, "", "  ")
		if err != nil {
			return 0, err
		}
		if err := os.WriteFile(filepath.Join(o.judge, "case.json"), append(b, '\n'), 0o644); err != nil {
			return 0, err
		}
	}
	if len(fs) > 0 {
		return 1, nil
	}
	return 0, nil
}

// keep minimizes c for sig and writes the reproducer under o.out.
func keep(ctx context.Context, o options, tmp string, c *fuzz.Case, orig fuzz.Finding, last time.Time) (string, error) {
	sig := orig.Signature(c.Family)
	best, fs := c, []fuzz.Finding{orig}
	if o.minimize > 0 {
		deadline := time.Now().Add(o.minimize)
		if deadline.After(last) {
			deadline = last
		}
		mctx, cancel := context.WithDeadline(ctx, deadline.Add(o.lim.Wall))
		if m, mfs := fuzz.Minimize(mctx, o.bin, tmp, c, sig, o.lim, deadline); len(mfs) > 0 {
			best, fs = m, mfs
		}
		cancel()
	}
	best.Found = []string{sig}
	for _, f := range fs {
		if f.Signature(best.Family) == sig {
			best.Details = append(best.Details, f.String())
		}
	}
	name := strings.ReplaceAll(sig, "/", "-") + fmt.Sprintf("-%d", best.Seed)
	dir := filepath.Join(o.out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := best.Materialize(dir, true); err != nil {
		return "", err
	}
	fmt.Printf("  minimized to -family %s -seed %d -size %d -mask %d (%s); written to %s\n", best.Family, best.Seed, best.Size, best.Mask, best.What, dir)
	fmt.Printf("  reproduce: go run ./internal/hostile/fuzzrun -bin %s -family %s -seed %d -size %d -mask %d -cases 1\n", o.bin, best.Family, best.Seed, best.Size, best.Mask)
	return dir, nil
}

func summarize(tallies map[string]*tally) {
	names := make([]string, 0, len(tallies))
	for n := range tallies {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Printf("%-14s %6s %6s %6s %6s %9s %8s  %s\n", "family", "cases", "runs", "known", "new", "max wall", "max RSS", "findings by kind")
	var cases, runs int
	for _, n := range names {
		t := tallies[n]
		cases += t.cases
		runs += t.runs
		var kinds []string
		for k, v := range t.kinds {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, v))
		}
		sort.Strings(kinds)
		fmt.Printf("%-14s %6d %6d %6d %6d %8.1fs %5d MiB  %s\n", n, t.cases, t.runs, t.known, t.fresh, t.maxWall.Seconds(), t.maxRSS>>20, strings.Join(kinds, ", "))
	}
	fmt.Printf("%-14s %6d %6d\n", "total", cases, runs)
}
