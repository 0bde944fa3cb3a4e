package mcptraceconnector

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// sweepEvery is how often open traces are checked for expiry and the
// counters are emitted: a trace is finalized between wait and wait +
// sweepEvery after its last span. A wait shorter than this sweeps every
// wait instead.
const sweepEvery = time.Second

// completeGroup is how many complete traces the connector hands to the
// analyzer before it measures them as one group; fewer are measured at the
// next sweep. Measuring each batch's few traces alone would cost a group's
// fixed cost per batch (as the engine's rootedBatch); the counters are
// only emitted at sweeps anyway.
const completeGroup = 256

// heartbeatSweeps: the counters are emitted at the first sweep, at every
// sweep after which they changed, and at least every heartbeatSweeps
// sweeps, so the Prometheus exporter's metric expiry (5 minutes by default)
// never drops an idle series.
const heartbeatSweeps = 30

// mcptraceConnector is one leg of the connector: traces → metrics (metrics
// set) or traces → logs (logs set). The Collector creates one value per leg
// configured; each buffers the traces it is given on its own.
//
// Spans are grouped per trace in a traceBuffer; ConsumeTraces finalizes
// the traces a batch completed (their root arrived); a sweep goroutine
// started by Start finalizes traces wait after their last span, measures
// the complete traces waiting for their group and encodes the spans that
// have waited encodeAfter; Shutdown stops it and finalizes every open
// trace. Each finalized trace goes to the traceAnalyzer, whose outcome is
// summed into counters (metrics leg) or turned into log records (logs leg).
type mcptraceConnector struct {
	logger   *zap.Logger
	set      settings
	buf      *traceBuffer
	analyzer traceAnalyzer
	metrics  consumer.Metrics // nil on the logs leg
	logs     consumer.Logs    // nil on the metrics leg

	// finMu serializes finalization and emission: the analyzer is never
	// called concurrently, and counters are emitted in order.
	finMu   sync.Mutex
	pending int // traces handed to the analyzer and not yet measured
	// measured counts the traces whose figures are in agg: the finalized
	// count the counters carry, so that one emission's counters describe
	// the same traces (a complete trace leaves the buffer before its group
	// is measured).
	measured   int64
	agg        *aggregates
	emitted    bool
	lastCounts bufferCounts
	idleSweeps int

	sweeper *sweeper
}

var _ consumer.Traces = (*mcptraceConnector)(nil)

// newConnector returns a leg over s that hands finalized traces to a.
func newConnector(logger *zap.Logger, s settings, a traceAnalyzer) *mcptraceConnector {
	return &mcptraceConnector{
		logger:   logger,
		set:      s,
		buf:      newTraceBuffer(s.wait, s.maxOpenTraces, s.completeAtRoot),
		analyzer: a,
		agg:      newAggregates(time.Now()),
		sweeper:  newSweeper(),
	}
}

// Capabilities reports that the connector only reads what it is given.
func (c *mcptraceConnector) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start logs the rules that cannot be evaluated in-stream and starts the
// sweep goroutine. It does not block.
func (c *mcptraceConnector) Start(context.Context, component.Host) error {
	perTrace, dumpScoped := inStreamRules(c.set.rules)
	if len(dumpScoped) > 0 {
		ids := make([]string, len(dumpScoped))
		for i, r := range dumpScoped {
			ids[i] = r.ID
		}
		c.logger.Warn("dump-scoped rules are not evaluated in-stream; run `mcptrace check` on a dump for them",
			zap.String("rules", c.set.rulesSource), zap.Strings("skipped", ids))
	}
	attribution := AttributionLocal
	if c.set.forward {
		attribution = AttributionForward
	}
	c.logger.Info("mcptrace connector started",
		zap.Duration("wait", c.set.wait), zap.Int("max_open_traces", c.set.maxOpenTraces),
		zap.String("profile", string(c.set.analyze.Profile)), zap.Int("per_trace_rules", len(perTrace)),
		zap.String("attribution", attribution))
	if c.set.forward && c.metrics != nil {
		c.logger.Info("attribution: forward: this traces → metrics leg counts no acquires; the traces → logs leg sends them as records for a logs → metrics leg of this connector routed by pool scope (docs/collector.md)")
	}
	c.sweeper.start(min(sweepEvery, c.set.wait), c.sweep)
	return nil
}

// sweep finalizes expired traces, encodes the spans that have waited
// encodeAfter and emits the counters.
func (c *mcptraceConnector) sweep(now time.Time) {
	ctx := context.Background()
	if err := c.finalize(ctx, c.buf.expire(now), true); err != nil {
		c.logger.Warn("mcptrace: finalizing expired traces", zap.Error(err))
	}
	c.buf.encodeOlder(now.Add(-encodeAfter))
	if err := c.emitCounters(ctx, false); err != nil {
		c.logger.Warn("mcptrace: emitting counters", zap.Error(err))
	}
}

// ConsumeTraces files the spans under their traces. Traces cut to keep
// max_open_traces are finalized and measured before it returns; traces the
// batch completed (their root arrived) are finalized before it returns and
// measured with the next group (see completeGroup).
func (c *mcptraceConnector) ConsumeTraces(ctx context.Context, td ptrace.Traces) error {
	cut, complete, noTraceID := c.buf.add(td, time.Now())
	if noTraceID > 0 {
		// Not an error of the batch as a whole: the other spans are kept.
		c.logger.Warn("mcptrace: spans without a trace id cannot be grouped and are not analysed",
			zap.Int("spans", noTraceID))
	}
	// A cut measures at once (as before complete traces existed); complete
	// traces alone wait for their group.
	return c.finalize(ctx, append(cut, complete...), len(cut) > 0)
}

// Shutdown stops the sweep, finalizes every open trace and emits the final
// counters. It is idempotent and safe without Start; it returns ctx's error
// if the sweep does not stop in time, leaving the open traces unflushed.
func (c *mcptraceConnector) Shutdown(ctx context.Context) error {
	return c.sweeper.shutdown(ctx, func() error {
		err := c.finalize(ctx, c.buf.flush(), true)
		return errors.Join(err, c.emitCounters(ctx, true))
	})
}
