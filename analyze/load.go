package analyze

import (
	"context"

	"github.com/mcptrace/mcptrace/analyze/ingest"
)

// LoadOptions configures Load. The zero value detects formats, keeps what a
// damaged input held before the damage, decodes on every CPU and keeps the
// vocabulary's attributes only.
type LoadOptions struct {
	// Read configures the readers (forced format, strictness, workers,
	// stdin).
	Read ReadOptions
	// Index names the attributes to keep beyond the vocabulary; use
	// [Config.IndexOptions] for the configuration that will analyze it.
	Index IndexOptions
	// Progress, when set, is called after each decoded batch with the input
	// being read and the spans read so far over all inputs, from the
	// goroutine that called Load.
	Progress func(in *Input, spansRead int)
}

// Load reads every path (files, directories, globs, "-" for stdin) into a
// new Index and returns it with what was read from each input. On error the
// index and inputs hold what was read before it; a bad input is a
// *ReadError naming the file and the place.
//
// The index may take half of the memory budget (ReadOptions.MaxMemory; the
// analysis needs about as much again): past it Load stops with a
// *ReadError wrapping ErrMemoryLimit, a clear error instead of the kernel's
// OOM killer.
func Load(ctx context.Context, paths []string, opts LoadOptions) (*Index, []Input, error) {
	idx := NewIndex(opts.Index)
	ropts := opts.Read
	ropts.Keep = opts.Index.keep() // the projection decoders keep what the index keeps
	sink := &loadSink{idx: idx, limit: ropts.MemoryBudget() / 2, progress: opts.Progress}
	inputs, err := ingest.Read(ctx, paths, ropts, sink)
	idx.SetInputs(inputs)
	return idx, inputs, err
}

// SetInputs records what was read into the index, for the report's inputs
// list. Load calls it; a caller building an index with Add may too.
func (x *Index) SetInputs(inputs []Input) {
	x.inputs = make([]InputReport, 0, len(inputs))
	for _, in := range inputs {
		x.inputs = append(x.inputs, InputReport{
			Path:        in.Path,
			Format:      string(in.Format),
			Compression: in.Compression,
			Spans:       in.Spans,
			Partial:     in.Partial,
			Warnings:    append([]string{}, in.Warnings...),
		})
	}
}

// AnalyzeFiles loads paths into an index keeping what cfg needs and
// analyzes it: the whole of `mcptrace analyze` but the rendering, for
// callers such as `mcptrace demo` that analyze a dump they just wrote. On a
// read error it returns the error (a *ReadError for bad input) and no report.
func AnalyzeFiles(ctx context.Context, paths []string, cfg Config, ropts ReadOptions) (*Report, error) {
	idx, _, err := Load(ctx, paths, LoadOptions{Read: ropts, Index: cfg.IndexOptions()})
	if err != nil {
		return nil, err
	}
	return Analyze(idx, cfg)
}
