package main

import (
	"math"
	"runtime/debug"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/spf13/pflag"
)

// limitFlags bound what reading a dump may cost; analyze, check and diff
// share them through dumpFlags.
type limitFlags struct {
	maxMemory        string
	maxDecompression float64
}

// minMemoryBudget is the smallest --max-memory accepted. The Go runtime
// and the reader's buffers take several MiB before the first span, and the
// budget becomes the runtime's memory limit: below this a run would spend
// itself in the garbage collector and stop on its first spans with a
// message about fractions of a MiB, never having measured anything.
const minMemoryBudget = 16 << 20

func addLimitFlags(fl *pflag.FlagSet, f *limitFlags) {
	fl.StringVar(&f.maxMemory, "max-memory", "", "memory budget (512MiB, 2GiB; at least 16MiB); past it reading stops with a clear error (default: a quarter of the machine's memory, at most 1GiB)")
	fl.Float64Var(&f.maxDecompression, "max-decompression-ratio", ingest.DefaultMaxDecompressionRatio, "how many times its size a gzip or zstd input may expand to; -1 for no bound")
}

// apply sets the limits on ropts and makes the budget the Go runtime's
// soft memory limit, so the garbage collector works harder near it rather
// than letting the process grow into the OOM killer. A bad size is a usage
// error.
func (f limitFlags) apply(ropts *ingest.ReadOptions) error {
	budget := ingest.DefaultMaxMemory()
	if f.maxMemory != "" {
		n, err := ingest.ParseByteSize(f.maxMemory)
		if err != nil {
			return usageErrorf("--max-memory: %w", err)
		}
		if n < minMemoryBudget {
			return usageErrorf("--max-memory %s is %s: want at least 16MiB (the runtime and the reader's buffers alone take several MiB)", clipQuoted(f.maxMemory), humanBytes(n))
		}
		budget = n
	}
	if r := f.maxDecompression; math.IsNaN(r) || math.IsInf(r, 0) || r <= 0 && r != -1 {
		// NaN compares false with everything and a negative ratio means
		// no bound: either would switch the guard off unasked.
		return usageErrorf("--max-decompression-ratio %v: want a ratio above 0, or -1 for no bound", r)
	}
	ropts.MaxMemory = budget
	ropts.MaxDecompressionRatio = f.maxDecompression
	debug.SetMemoryLimit(budget + budget/4) // the budget, and the runtime's own share
	return nil
}
