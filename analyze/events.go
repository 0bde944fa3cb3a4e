package analyze

import (
	"context"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// The dump's events as plain values (package analyze/events): what the
// HTML report draws beside the report and what a replay of the pool
// (analyze/whatif) reads.
type (
	ReportEvents   = events.ReportEvents
	AcquireEvent   = events.AcquireEvent
	HandshakeEvent = events.HandshakeEvent
	CallEvent      = events.CallEvent
	Acquire        = events.Acquire
	PoolSettings   = events.PoolSettings
)

// CheckIdleTTL is events.CheckIdleTTL: the one rule for an idle TTL that
// the flags and the settings a pool recorded are both held to.
func CheckIdleTTL(ttl time.Duration) error { return events.CheckIdleTTL(ttl) }

// NewReportEvents is the HTML report's events of d under cfg.
func NewReportEvents(d *Dump, cfg rulefmt.Config) (*ReportEvents, error) {
	return engine.NewReportEvents(d, cfg)
}

// HandshakeEvents is every handshake of d under cfg, by scope, then start.
func HandshakeEvents(d *Dump, cfg rulefmt.Config) ([]HandshakeEvent, error) {
	return engine.HandshakeEvents(d, cfg)
}

// ReadAcquires reads src (files as ingest.Files(paths), or a backend's
// query) as `mcptrace analyze` does and hands every acquire, its cause
// attributed as the report's, to fn, pair by pair in time order, with the
// pre-warm dials the attribution replayed.
func ReadAcquires(ctx context.Context, src ingest.Source, cfg rulefmt.Config, lopts LoadOptions, fn func(*Acquire)) ([]ingest.Input, error) {
	return engine.ReadAcquires(ctx, src, cfg, lopts, fn)
}

// ReadAcquiresWriter is ReadAcquires, and also returns what the writer of
// the spans shows, as the analysis's report.Report.Writer: a replay asks
// it (report.Report.LacksWhy) whether the spans told its keys apart.
func ReadAcquiresWriter(ctx context.Context, src ingest.Source, cfg rulefmt.Config, lopts LoadOptions, fn func(*Acquire)) ([]ingest.Input, *report.WriterReport, error) {
	return engine.ReadAcquiresWriter(ctx, src, cfg, lopts, fn)
}
