package engine

import (
	"context"
	"fmt"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/ruleobs"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// AnalyzeRules computes the Analysis of d: [Analyze] with cfg, then
// [ObserveRules] for rules on the same dump. Build d with
// MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(rules)). Like
// Analyze it is pure.
func AnalyzeRules(d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) (*report.Analysis, error) {
	return analyzeRules(context.Background(), d.x, cfg, rules, opts)
}

// AnalyzeRulesContext is [AnalyzeRules] stopped by ctx: it returns ctx's
// error (wrapped) once ctx is done, looking at it between the measures and
// the rules and throughout the rules' loops ([ObserveRulesContext]).
func AnalyzeRulesContext(ctx context.Context, d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) (*report.Analysis, error) {
	return analyzeRules(ctx, d.x, cfg, rules, opts)
}

// analyzeRules is AnalyzeRulesContext over the index itself.
func analyzeRules(ctx context.Context, idx *index.Index, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) (*report.Analysis, error) {
	r, err := analyzeIndex(ctx, idx, cfg)
	if err != nil {
		return nil, err
	}
	obs, err := ruleobs.Observe(ctx, idx, cfg, rules, opts, r)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	return &report.Analysis{Report: r, Rules: obs}, nil
}

// ObserveRulesOf is [ObserveRulesContext] for a caller that already has r,
// the [Analyze] of the same d and cfg (a command running its measures
// and its rules as two phases): r's miss counts spare attributing the
// acquires a second time when no miss needs naming.
func ObserveRulesOf(ctx context.Context, d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions, r *report.Report) ([]report.RuleObservation, error) {
	return ruleobs.Observe(ctx, d.x, cfg, rules, opts, r)
}

// ObserveRules reads from d what each rule needs to be judged: for each
// of its scopes whether it is complete and the value of each count,
// distinct, pool_sessions and lost_sessions expectation, with the spans to
// name if it fails. cfg gives the profile and the reads-per-request
// selectors. Like Analyze it is pure. It fails only when d was built
// without an attribute a rule reads (build it with
// MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(rules))).
func ObserveRules(d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) ([]report.RuleObservation, error) {
	return ruleobs.Observe(context.Background(), d.x, cfg, rules, opts, nil)
}

// ObserveRulesContext is [ObserveRules] stopped by ctx: every loop over
// scopes and spans looks at it, so a canceled observation returns ctx's
// error within milliseconds however large the dump.
func ObserveRulesContext(ctx context.Context, d *Dump, cfg rulefmt.Config, rules []rulefmt.Rule, opts ObserveOptions) ([]report.RuleObservation, error) {
	return ruleobs.Observe(ctx, d.x, cfg, rules, opts, nil)
}

// ObserveOptions tunes ObserveRules: see [ruleobs.ObserveOptions].
type ObserveOptions = ruleobs.ObserveOptions

// DefaultMaxExamples is how many offending spans an observation keeps per
// expectation when ObserveOptions.MaxExamples is 0.
const DefaultMaxExamples = ruleobs.DefaultMaxExamples
