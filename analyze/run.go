package analyze

import (
	"context"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// RunOptions configures [AnalyzeDumps]: the readers, the engine's bounds,
// the rules, whether to build the report's events, and progress.
type RunOptions = engine.RunOptions

// DumpRun is what [AnalyzeDumps] returns: the analysis, the inputs read,
// the engine it chose and, when asked, the report's events.
type DumpRun = engine.DumpRun

// The phases of [AnalyzeDumps], as RunOptions.Phase is told them.
const (
	PhaseRead     = engine.PhaseRead
	PhaseIndex    = engine.PhaseIndex
	PhaseMeasures = engine.PhaseMeasures
	PhaseRules    = engine.PhaseRules
)

// AnalyzeDumps is the whole analysis of a source, as the CLI runs it: it
// chooses the engine ([ChooseEngine]), reads src (files as
// ingest.Files(paths), or a backend's query from package analyze/backend),
// measures it and, when opts holds rules, observes them. Every choice,
// and every source of the same spans, reports the same figures.
func AnalyzeDumps(ctx context.Context, src ingest.Source, cfg rulefmt.Config, opts RunOptions) (*DumpRun, error) {
	return engine.AnalyzeDumps(ctx, src, cfg, opts)
}

// AnalyzeFiles is the report of paths under cfg with default bounds: what
// `mcptrace analyze` prints for them.
func AnalyzeFiles(ctx context.Context, paths []string, cfg rulefmt.Config, ropts ingest.ReadOptions) (*report.Report, error) {
	return engine.AnalyzeFiles(ctx, paths, cfg, ropts)
}

// EngineOptions bounds the incremental engine: shards, memory, the window
// after which a trace is finalized, the open traces held.
type EngineOptions = engine.EngineOptions

// EngineRequest is what a caller knows when it picks an engine; EngineChoice
// and EngineKind are the answer.
type (
	EngineRequest = engine.EngineRequest
	EngineChoice  = engine.EngineChoice
	EngineKind    = engine.EngineKind
)

// ChooseEngine is the one choice between one index, a speculative or held
// batch run and a stream, for the CLI, the engine's own batch runs and the
// Collector connector.
func ChooseEngine(r EngineRequest) EngineChoice { return engine.ChooseEngine(r) }
