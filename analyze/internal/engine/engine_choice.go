package engine

import (
	"context"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/ruleobs"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// EngineKind is which of the analyzer's ways of reading spans a run takes.
type EngineKind int

const (
	// EngineIndex loads one index holding every span, then measures it and
	// judges the rules on it: rules may compare anything across the dump,
	// and the HTML report's events are read from it (RunOptions.Events).
	EngineIndex EngineKind = iota
	// EngineBatch is an Engine holding every trace until the end: for
	// input that cannot be read twice (stdin), or measures that may wait
	// on spans exported after a trace's root.
	EngineBatch
	// EngineSpeculative is a batch Engine that measures each trace once its
	// root span has arrived and reads the input again, holding every trace,
	// should a span come after its trace was measured
	// (newSpeculativeEngine): the batch report in the memory of the open
	// traces.
	EngineSpeculative
	// EngineStream finalizes traces by a window or a bound (a streaming
	// Engine, or the Collector connector's wall-clock buffer): its retained
	// state depends on them, not on the length of the input.
	EngineStream
)

// String names the kind, for messages and tests.
func (k EngineKind) String() string {
	switch k {
	case EngineIndex:
		return "index"
	case EngineBatch:
		return "batch"
	case EngineSpeculative:
		return "speculative"
	case EngineStream:
		return "stream"
	}
	return "unknown"
}

// EngineRequest is what the choice of engine is made from.
type EngineRequest struct {
	// Config is the analysis configuration (its measures decide whether a
	// trace is whole at its root).
	Config rulefmt.Config
	// Rules are the rules the run judges: for a stream, those judged one
	// trace at a time (InStream); for a dump, any rule needs the index.
	Rules []rulefmt.Rule
	// Options are the engine options the caller was given: a Window or
	// MaxOpenTraces makes a stream, HoldComplete keeps a stream's complete
	// traces open.
	Options EngineOptions
	// Live says the spans come as a live stream (the Collector connector):
	// never held to the end, whatever Options say.
	Live bool
	// Events says the caller wants the HTML report's events
	// (ReportEvents), which are read from one index holding every span.
	Events bool
	// Rereadable says the inputs can be read a second time (files, not
	// stdin): what a speculative run needs to give up.
	Rereadable bool
}

// EngineChoice is the engine a run takes and how it finalizes traces.
type EngineChoice struct {
	Kind EngineKind
	// FinalizeAtRoot says a trace is measured as soon as its root span has
	// arrived (CompleteAtRoot), rather than when a window, a bound or the
	// end of the input lets it go.
	FinalizeAtRoot bool
}

// ChooseEngine is the one choice of engine, for `mcptrace analyze`, check
// and diff (AnalyzeDumps), the engine's own batch runs (AnalyzeStream,
// ReadAcquires) and the Collector connector (which finalizes at the root
// exactly when a streaming Engine does):
//
//   - a live stream, or a Window or MaxOpenTraces: a stream, finalizing at
//     the root unless HoldComplete or CompleteAtRoot says otherwise;
//   - otherwise rules, or a caller asking for the report's events: one
//     index;
//   - otherwise input that can be read twice, and traces whole at their
//     root: a speculative batch run;
//   - otherwise a batch run holding every trace.
func ChooseEngine(r EngineRequest) EngineChoice {
	switch {
	case r.Live || r.Options.streaming():
		return EngineChoice{Kind: EngineStream, FinalizeAtRoot: !r.Options.HoldComplete && CompleteAtRoot(r.Config, r.Rules)}
	case len(r.Rules) > 0 || r.Events:
		return EngineChoice{Kind: EngineIndex}
	case r.Rereadable && CompleteAtRoot(r.Config, nil):
		return EngineChoice{Kind: EngineSpeculative, FinalizeAtRoot: true}
	}
	return EngineChoice{Kind: EngineBatch}
}

// The phases of AnalyzeDumps, as RunOptions.Phase is told them.
const (
	PhaseRead     = "read"     // reading the inputs (and, for an engine, measuring them)
	PhaseIndex    = "index"    // finishing the index: grouping, sorting, linking
	PhaseMeasures = "measures" // measuring the index (and, when asked, reading the report's events)
	PhaseRules    = "rules"    // judging the rules on it
)

// RunOptions configures AnalyzeDumps.
type RunOptions struct {
	// Load configures the readers and progress; its Index is ignored (the
	// run keeps what the configuration and the rules read).
	Load LoadOptions
	// Engine is the engine options (shards, and a stream's window, bound
	// and HoldComplete).
	Engine EngineOptions
	// Rules are the rules to judge; Observe how their observations name
	// offenders.
	Rules   []rulefmt.Rule
	Observe ObserveOptions
	// Events asks for the HTML report's events (DumpRun.Events), read from
	// the same index in the measures phase: the caller draws them beside
	// the report and never holds the index.
	Events bool
	// Phase, when set, runs each phase of the run (PhaseRead and so on) by
	// calling fn: the CLI wraps them to say where an interruption stopped.
	// nil runs fn directly.
	Phase func(name string, fn func() error) error
	// AfterRead, when set, is called once the inputs are read (and an
	// index finished), with what was read and the read's error: before
	// the measures, so warnings about the inputs come first.
	AfterRead func(inputs []Input, err error)
}

// DumpRun is what AnalyzeDumps returns.
type DumpRun struct {
	// Choice is the engine the run took (ChooseEngine).
	Choice EngineChoice
	// Analysis is the report and the rules' observations.
	Analysis *report.Analysis
	// Inputs is what was read from each input.
	Inputs []Input
	// Events are the HTML report's events when RunOptions.Events asked for
	// them; nil otherwise.
	Events *ReportEvents
}

// AnalyzeDumps reads src (files, or a backend's query) and analyzes it with cfg and opts' rules in
// the engine ChooseEngine picks: the whole of `mcptrace analyze`, check
// and diff but the flags and the rendering. On error the run holds what
// was read (its Inputs) and the error names the phase's cause: a
// *ReadError for bad input.
func AnalyzeDumps(ctx context.Context, src ingest.Source, cfg rulefmt.Config, opts RunOptions) (*DumpRun, error) {
	run := &DumpRun{Choice: ChooseEngine(EngineRequest{Config: cfg, Rules: opts.Rules, Options: opts.Engine,
		Events: opts.Events, Rereadable: src.Rereadable()})}
	phase := opts.Phase
	if phase == nil {
		phase = func(_ string, fn func() error) error { return fn() }
	}
	read := func(err error) error {
		if opts.AfterRead != nil {
			opts.AfterRead(run.Inputs, err)
		}
		return err
	}
	if run.Choice.Kind != EngineIndex {
		var rep *report.Report
		err := phase(PhaseRead, func() (err error) {
			rep, run.Inputs, err = AnalyzeStream(ctx, src, cfg, opts.Load, opts.Engine)
			return err
		})
		if err := read(err); err != nil {
			return run, err
		}
		run.Analysis = &report.Analysis{Report: rep}
		return run, nil
	}
	x, err := readIndex(ctx, run, src, cfg, opts, phase)
	if err := read(err); err != nil {
		return run, err
	}
	a, err := measureIndex(ctx, run, x, cfg, opts, phase)
	if err != nil {
		return run, err
	}
	run.Analysis = a
	return run, nil
}

// readIndex is the index engine's read: src loaded into one index with
// what cfg and the rules need of it (into run.Inputs), then finished as a
// phase of its own, since grouping, sorting and linking every span takes
// a while on a large dump.
func readIndex(ctx context.Context, run *DumpRun, src ingest.Source, cfg rulefmt.Config, opts RunOptions,
	phase func(string, func() error) error) (*index.Index, error) {
	lopts := opts.Load
	lopts.Index = rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(opts.Rules))
	var x *index.Index
	err := phase(PhaseRead, func() (err error) {
		x, run.Inputs, err = load(ctx, src, lopts)
		return err
	})
	if err == nil {
		err = phase(PhaseIndex, func() error { x.Spans(); return nil })
	}
	return x, err
}

// measureIndex runs the measures (and the events, when opts asks for
// them, into run.Events) and then judges the rules over read index x,
// each a phase of its own so an interruption names where it stopped.
func measureIndex(ctx context.Context, run *DumpRun, x *index.Index, cfg rulefmt.Config, opts RunOptions,
	phase func(string, func() error) error) (*report.Analysis, error) {
	var a report.Analysis
	limit := opts.Load.Read.MemoryBudget() / 2 // the index holds the other half
	if err := phase(PhaseMeasures, func() (err error) {
		if !opts.Events {
			a.Report, err = analyzeIndexWithin(ctx, x, cfg, limit)
			return err
		}
		// Without rules nothing reads the index after the events.
		a.Report, run.Events, err = analyzeIndexEvents(ctx, &x, cfg, len(opts.Rules) == 0, limit)
		return err
	}); err != nil {
		return nil, err
	}
	if err := phase(PhaseRules, func() (err error) {
		if x == nil { // let go with the events: no rule to judge
			a.Rules = []report.RuleObservation{}
			return nil
		}
		oo := opts.Observe
		if oo.MemoryBudget == 0 {
			oo.MemoryBudget = opts.Load.Read.MemoryBudget()
		}
		a.Rules, err = ruleobs.Observe(ctx, x, cfg, opts.Rules, oo, a.Report)
		return err
	}); err != nil {
		return nil, err
	}
	return &a, nil
}
