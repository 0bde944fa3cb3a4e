package engine

import (
	"context"
	"errors"
	"runtime"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// LoadOptions configures Load. The zero value detects formats, keeps what a
// damaged input held before the damage, decodes on every CPU and keeps the
// vocabulary's attributes only.
type LoadOptions struct {
	// Read configures the readers (forced format, strictness, workers,
	// stdin).
	Read ReadOptions
	// Index names the attributes to keep beyond the vocabulary; use
	// [rulefmt.Config.IndexOptions] for the configuration that will analyze it.
	Index rulefmt.IndexOptions
	// Progress, when set, is called after each decoded batch with the input
	// being read and the spans read so far over all inputs, from the
	// goroutine that called Load.
	Progress func(in *Input, spansRead int)
	// Reread, when set, is told that AnalyzeStream's speculative batch run
	// gave up (a span came after its trace was measured) and that the
	// inputs are being read again from the start, with why: progress
	// restarts from zero.
	Reread func(reason error)
}

// Dump is a trace dump held for analysis: the spans of any number of files
// ([Load]) or ptrace batches ([NewDump], [Dump.Add]) in the analyzer's
// private index, which keeps only what the measures, the rules and the
// HTML report's events read. [Analyze], [AnalyzeRules], [ObserveRules] and
// [NewReportEvents] read it; nothing outside analyze reads the index
// itself, so its layout can change without a caller noticing.
//
// A Dump is not safe for concurrent use: Add from one goroutine, then
// analyze it. The zero value is not usable; call NewDump or Load.
type Dump struct {
	x *index.Index
}

// NewDump returns an empty Dump keeping the vocabulary's attributes plus
// those opts names: build opts with [rulefmt.Config.IndexOptions] for the
// configuration that will analyze it (merged with RulesIndexOptions for
// rules).
func NewDump(opts rulefmt.IndexOptions) *Dump { return &Dump{x: index.New(opts)} }

// Add indexes every span of td. It copies what it keeps, so td may be
// reused or dropped afterwards. Spans already in the dump (same trace and
// span id) are counted once.
func (d *Dump) Add(td ptrace.Traces) { d.x.Add(td) }

// Load reads every path (files, directories, globs, "-" for stdin) into a
// new Dump and returns it with what was read from each input. On error the
// dump and inputs hold what was read before it; a bad input is a
// *ReadError naming the file and the place.
//
// The dump may take half of the memory budget (ReadOptions.MaxMemory; the
// analysis needs about as much again): past it Load stops with a
// *ReadError wrapping ErrMemoryLimit, a clear error instead of the kernel's
// OOM killer. Before a big read (regular files of 64 MiB or more) Load
// readies the heap for transparent huge pages (heap.go), which spares most
// of the page faults of the memory the index then takes.
func Load(ctx context.Context, paths []string, opts LoadOptions) (*Dump, []Input, error) {
	x, inputs, err := load(ctx, ingest.Files(paths), opts)
	return &Dump{x: x}, inputs, err
}

// load is Load of any source into the index itself, for the engine's
// own runs (AnalyzeDumps) and analyze's tests.
func load(ctx context.Context, src ingest.Source, opts LoadOptions) (*index.Index, []Input, error) {
	idx := index.New(opts.Index)
	ropts := opts.Read
	ropts.Keep = index.KeepOf(opts.Index) // the projection decoders keep what the index keeps
	sink := &loadSink{idx: idx, limit: ropts.MemoryBudget() / 2, progress: opts.Progress}
	prepareHeap(src.Bytes(), ropts.MemoryBudget(), 1)
	inputs, err := src.Read(ctx, ropts, sink)
	idx.SetInputs(inputs)
	return idx, inputs, err
}

// Feed reads src (as Load does) into eng: the fast JSON path's
// batches and every other batch go to its shards, and what was read is
// recorded for the report. It does not flush eng. On error the inputs
// still describe what was read; a bad input is a *ReadError.
//
// The memory budget holds across the shards: past half of it (the open
// traces of every shard together once they have read a batch:
// engine_budget.go) Feed stops with a
// *ReadError wrapping ErrMemoryLimit, at the same batch on every run. A
// stream with a Window or MaxOpenTraces holds only its open traces, so a
// time-ordered dump of any length fits. Feed readies the heap for a big
// read as Load does. Unless ReadOptions.Workers says otherwise, it
// decodes on the CPUs the engine's shards leave.
func Feed(ctx context.Context, src ingest.Source, opts LoadOptions, eng *Engine) ([]Input, error) {
	ropts := opts.Read
	ropts.Keep = index.KeepOf(eng.cfg.IndexOptions()) // the projection decoders keep what the shards keep
	if ropts.Workers == 0 {
		ropts.Workers = feedWorkers(eng)
	}
	sink := &feedSink{eng: eng, progress: opts.Progress}
	eng.memLimit = ropts.MemoryBudget() / 2
	per := int64(1)
	if eng.speculative {
		per = speculativeHeapShare
	}
	prepareHeap(src.Bytes(), ropts.MemoryBudget(), per)
	inputs, err := src.Read(ctx, ropts, sink)
	eng.SetInputs(inputs)
	return inputs, err
}

// feedWorkers is how many goroutines decode for eng: the CPUs its shards
// leave, at least one.
func feedWorkers(eng *Engine) int { return max(1, runtime.GOMAXPROCS(0)-len(eng.shards)) }

// AnalyzeFiles reads paths into a batch engine (speculative, as
// AnalyzeStream's) and reports: the whole of `mcptrace analyze` but the
// rendering, for callers such as `mcptrace demo` that analyze a dump they
// just wrote. On a read error it
// returns the error (a *ReadError for bad input) and no report.
func AnalyzeFiles(ctx context.Context, paths []string, cfg rulefmt.Config, ropts ReadOptions) (*report.Report, error) {
	r, _, err := AnalyzeStream(ctx, ingest.Files(paths), cfg, LoadOptions{Read: ropts}, EngineOptions{})
	return r, err
}

// AnalyzeStream reads src into an engine with opts and returns its
// report and what was read. LoadOptions.Index is ignored: the engine keeps
// what cfg needs. On a read error it returns the inputs read and the error,
// no report.
//
// A batch run (opts without a Window or MaxOpenTraces) over a source that
// can be read twice (files, no stdin) is speculative (newSpeculativeEngine): it
// measures each trace once its root span has arrived and frees its spans,
// which overlaps the measures with the read and keeps the memory to the
// open traces. If a span then arrives for a trace already measured, the
// figures could differ from holding every trace, so it stops and reads
// the inputs again with every trace held (LoadOptions.Reread is told).
// The report is the same either way.
func AnalyzeStream(ctx context.Context, src ingest.Source, cfg rulefmt.Config, lopts LoadOptions, opts EngineOptions) (*report.Report, []Input, error) {
	if ChooseEngine(EngineRequest{Config: cfg, Options: opts, Rereadable: src.Rereadable()}).Kind == EngineSpeculative {
		eng, err := newSpeculativeEngine(cfg, opts)
		if err != nil {
			return nil, nil, err
		}
		r, inputs, err := analyzeWith(ctx, eng, src, lopts)
		if !errors.Is(err, errSpoiled) {
			return r, inputs, err
		}
		if lopts.Reread != nil {
			lopts.Reread(errSpoiled)
		}
	}
	eng, err := NewEngine(cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	return analyzeWith(ctx, eng, src, lopts)
}

// analyzeWith feeds src into eng and reports.
func analyzeWith(ctx context.Context, eng *Engine, src ingest.Source, lopts LoadOptions) (*report.Report, []Input, error) {
	inputs, err := Feed(ctx, src, lopts, eng)
	if err != nil {
		return nil, inputs, eng.abandon(err)
	}
	r, err := eng.Report()
	return r, inputs, err
}
