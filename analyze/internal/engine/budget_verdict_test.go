package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestBudgetVerdictIsTheSameOnEveryRun pins that whether a run fits its
// memory budget depends on the input and the budget alone, not on how
// far each shard, or each shard's observer, got when the reader looked:
// at the smallest limit one run fits (found by bisection) and one byte
// under it, every run, on one to four CPUs, ends the same way as the
// first, for a batch run and for a speculative run and a stream, which
// merge what they finalize while they read.
func TestBudgetVerdictIsTheSameOnEveryRun(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("reads a 40k-span dump a hundred times per engine")
	}
	const runs = 48
	path := budgetDump(t, 40_000)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, kind := range []struct {
		name string
		make func() (*Engine, error)
	}{
		{"batch", func() (*Engine, error) { return NewEngine(rulefmt.Config{}, EngineOptions{Shards: 2}) }},
		{"speculative", func() (*Engine, error) { return newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: 2}) }},
		{"stream", func() (*Engine, error) {
			return NewEngine(rulefmt.Config{}, EngineOptions{Shards: 2, Window: time.Second})
		}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			fits := func(limit int64, procs int) bool {
				runtime.GOMAXPROCS(procs)
				eng, err := kind.make()
				if err != nil {
					t.Fatal(err)
				}
				_, _, err = analyzeWith(context.Background(), eng, ingest.Files{path}, LoadOptions{Read: ReadOptions{MaxMemory: 2 * limit}})
				if err != nil && !errors.Is(err, ErrMemoryLimit) {
					t.Fatal(err)
				}
				return err == nil
			}
			lo, hi := int64(1<<10), int64(256<<20) // lo stops, hi fits
			if fits(lo, 2) || !fits(hi, 2) {
				t.Fatalf("limits of %d and %d bytes: want the first to stop the run, the second to fit", lo, hi)
			}
			for hi-lo > 1 {
				if mid := lo + (hi-lo)/2; fits(mid, 2) {
					hi = mid
				} else {
					lo = mid
				}
			}
			for _, limit := range []int64{lo, hi} {
				want := fits(limit, 2)
				differ := 0
				for i := range runs {
					if fits(limit, 1+i%4) != want {
						differ++
					}
				}
				if differ > 0 {
					t.Errorf("limit %d bytes (the threshold is %d): %d of %d runs ended otherwise than the first (fits %v)", limit, hi, differ, runs, want)
				}
			}
		})
	}
}

// budgetDump writes the bench workload's first spans spans
// (tracegen.WriteBench) as OTLP JSON lines into the test's directory and
// returns the file's path.
func budgetDump(t *testing.T, spans int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bench.otlp.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tracegen.WriteBench(f, "otlp-jsonl", spans); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
