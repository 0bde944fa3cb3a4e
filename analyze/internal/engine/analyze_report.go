package engine

import (
	"context"
	"fmt"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// Analyze computes every measure of cfg over d. It is pure: it reads no
// file and no clock, so the same dump and configuration always give the
// same report. It fails only when cfg is invalid or d was built without
// the attributes cfg's selectors read (see [rulefmt.Config.IndexOptions]).
func Analyze(d *Dump, cfg rulefmt.Config) (*report.Report, error) {
	return analyzeIndex(context.Background(), d.x, cfg)
}

// AnalyzeContext is [Analyze] stopped by ctx: the measures' loops over the
// spans and traces look at ctx every few thousand steps, so a cancelled
// analysis of a large dump returns ctx's error (wrapped) within
// microseconds of work rather than after the whole pass. The report of an
// analysis that was not cancelled is Analyze's, byte for byte.
func AnalyzeContext(ctx context.Context, d *Dump, cfg rulefmt.Config) (*report.Report, error) {
	return analyzeIndex(ctx, d.x, cfg)
}

// analyzeIndex is AnalyzeContext over the index itself.
func analyzeIndex(ctx context.Context, idx *index.Index, cfg rulefmt.Config) (*report.Report, error) {
	return analyzeIndexWithin(ctx, idx, cfg, 0)
}

// analyzeIndexWithin is analyzeIndex that stops with ErrMemoryLimit,
// before it attributes and reports, when the state across traces would
// take more than limit bytes (0: no limit): the index engine's run holds
// its index and that state together, each within half of the budget.
func analyzeIndexWithin(ctx context.Context, idx *index.Index, cfg rulefmt.Config, limit int64) (*report.Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	cfg = cfg.WithDefaults()
	o, err := observeContext(ctx, idx, cfg)
	if err != nil {
		return nil, err
	}
	agg := newAggregate(cfg)
	agg.pairs = measure.NewBatchPairStage(cfg)
	agg.useProfile(o.profile)
	agg.adopt(o)
	agg.merge(o)
	if err := agg.checkBudget(limit); err != nil {
		return nil, err
	}
	return agg.report(idx.Inputs()), nil
}
