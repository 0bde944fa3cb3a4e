package analyze

import (
	"context"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Dump is an opened dump: the spans the measures need, held in the
// analyzer's private index. Build one with [Load] or [NewDump] and hand it to
// [Analyze] or [AnalyzeRules].
type Dump = engine.Dump

// LoadOptions configures [Load] and [ReadAcquires]: the readers, the index
// and progress.
type LoadOptions = engine.LoadOptions

// ObserveOptions configures what [AnalyzeRules] reads for each rule (how
// many example spans to name).
type ObserveOptions = engine.ObserveOptions

// DefaultMaxExamples is how many example spans a rule names by default.
const DefaultMaxExamples = engine.DefaultMaxExamples

// Load reads paths (files, directories or globs, any format package ingest
// reads) into one [Dump] and says what was read from each input. A bad
// input is an [*ingest.ReadError] naming the file and the place.
func Load(ctx context.Context, paths []string, opts LoadOptions) (*Dump, []ingest.Input, error) {
	return engine.Load(ctx, paths, opts)
}

// NewDump is an empty [Dump] keeping what opts asks; Dump.Add adds
// batches to it. The Collector connector and tests build dumps this way.
func NewDump(opts rulefmt.IndexOptions) *Dump { return engine.NewDump(opts) }

// Analyze computes the report of d under cfg. It is pure: no I/O, no clock,
// every time from the spans.
func Analyze(d *Dump, cfg rulefmt.Config) (*report.Report, error) { return engine.Analyze(d, cfg) }

// AnalyzeContext is [Analyze] stopped by ctx.
func AnalyzeContext(ctx context.Context, d *Dump, cfg rulefmt.Config) (*report.Report, error) {
	return engine.AnalyzeContext(ctx, d, cfg)
}

// AnalyzeRules is [Analyze] with what each rule's scopes hold, as one
// [report.Analysis] the gate (package analyze/gate) judges. Build d with
// cfg's and the rules' index options merged.
func AnalyzeRules(d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) (*report.Analysis, error) {
	return engine.AnalyzeRules(d, cfg, rules, opts)
}

// AnalyzeRulesContext is [AnalyzeRules] stopped by ctx.
func AnalyzeRulesContext(ctx context.Context, d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) (*report.Analysis, error) {
	return engine.AnalyzeRulesContext(ctx, d, cfg, rules, opts)
}

// ObserveRulesOf reads the rules' observations for a caller that already
// has r, the [Analyze] of the same d and cfg (a command running its
// measures and its rules as two phases).
func ObserveRulesOf(ctx context.Context, d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions, r *report.Report) ([]report.RuleObservation, error) {
	return engine.ObserveRulesOf(ctx, d, cfg, rules, opts, r)
}
