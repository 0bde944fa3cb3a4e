package mcptraceconnector

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze"
)

// pairsLeg is the logs → metrics leg, the pair tier of attribution:
// forward. The traces legs of a fleet routed by trace id forward each
// acquire as a record (pairLogs); a routing exporter sends every record of
// one (scope, key) pair to one instance, whose pairs leg attributes the
// misses in time order against the pair's whole history (an
// analyze.PairStream) and counts mcptrace.pool.acquires (and, under the
// semconv profile, mcptrace.pool.handshakes). Summed over the fleet those
// counts equal `mcptrace analyze` on a dump of every span.
//
// Records arrive as the traces they come from are finalized, not in start
// order: an acquire of a long trace (finalized after its wait) arrives
// after acquires of its pair that started later in short traces. So the
// leg holds every acquire for pair_wait on the wall clock and, at each
// sweep, attributes only the acquires that started before every acquire
// still held. An acquire that arrives after a later one of its pair was
// attributed is attributed against the pair's state then and counted late
// (logged).
type pairsLeg struct {
	logger *zap.Logger
	set    settings
	next   consumer.Metrics

	mu   sync.Mutex
	ps   *analyze.PairStream
	held []heldPairs // in arrival order
	agg  *aggregates
	// late is the late acquires already logged.
	late int
	// unknown relabels the misses whose cause the forwarders' spans cannot
	// show.
	unknown unknownCauses
	// pending is the held acquires the last emission reported.
	pending    int
	emitted    bool
	idleSweeps int

	sweeper *sweeper
}

// heldPairs is one delivery of acquires still held: when it arrived and
// the earliest start in it.
type heldPairs struct {
	arrived  time.Time
	minStart int64
}

var _ consumer.Logs = (*pairsLeg)(nil)

// newPairsLeg returns a pairs leg over s attributing with ps and sending
// its counters to next.
func newPairsLeg(logger *zap.Logger, s settings, ps *analyze.PairStream, next consumer.Metrics) *pairsLeg {
	return &pairsLeg{
		logger:  logger,
		set:     s,
		next:    next,
		ps:      ps,
		agg:     newAggregates(time.Now()),
		sweeper: newSweeper(),
	}
}

// Capabilities reports that the leg only reads what it is given.
func (l *pairsLeg) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

// Start starts the sweep goroutine. It does not block.
func (l *pairsLeg) Start(context.Context, component.Host) error {
	l.logger.Info("mcptrace connector started: attributing forwarded acquires (logs → metrics)",
		zap.Duration("pair_wait", l.set.pairWait), zap.String("profile", string(l.set.analyze.Profile)))
	l.sweeper.start(min(sweepEvery, l.set.pairWait), func(now time.Time) {
		if err := l.sweep(context.Background(), now, false); err != nil {
			l.logger.Warn("mcptrace: emitting counters", zap.Error(err))
		}
	})
	return nil
}

// ConsumeLogs holds the acquire records of ld for attribution. Other
// records (violation records share the logs pipeline) are skipped;
// acquire records that do not read are logged with the first one's place
// and problem and skipped, and the rest are kept.
func (l *pairsLeg) ConsumeLogs(_ context.Context, ld plog.Logs) error {
	b := readPairs(ld)
	if b.bad > 0 {
		l.logger.Warn("mcptrace: acquire records that do not read were skipped",
			zap.Int("records", b.bad), zap.Error(b.firstBad))
	}
	if len(b.events) == 0 {
		return nil
	}
	minStart := int64(math.MaxInt64)
	for i := range b.events {
		minStart = min(minStart, b.events[i].Start)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ps.Add(b.events)
	l.held = append(l.held, heldPairs{arrived: time.Now(), minStart: minStart})
	return nil
}

// sweep attributes every held acquire that started before the earliest
// start of the deliveries that arrived within pair_wait of now (all of
// them when final) and emits the counters when they changed, at the first
// sweep, at the heartbeat, or when final.
func (l *pairsLeg) sweep(ctx context.Context, now time.Time, final bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	before := int64(math.MaxInt64)
	if !final {
		due := 0
		for due < len(l.held) && !l.held[due].arrived.After(now.Add(-l.set.pairWait)) {
			due++
		}
		l.held = l.held[due:]
		for _, h := range l.held {
			before = min(before, h.minStart)
		}
	}
	l.agg.add(l.unknown.poolOutcome(l.ps.Attribute(before)))
	l.unknown.log(l.logger)
	if late := l.ps.LateAcquires(); late > l.late {
		l.logger.Info("mcptrace: forwarded acquires arrived after a later acquire of their pool and key was attributed (raise pair_wait above the trace tier's wait); their miss cause may differ from mcptrace analyze on a dump",
			zap.Int("acquires", late-l.late), zap.Int("total", late))
		l.late = late
	}
	l.idleSweeps++
	pending := l.ps.Pending()
	if !final && l.emitted && l.idleSweeps < heartbeatSweeps && !l.agg.dirty && pending == l.pending {
		return nil
	}
	ts := pcommon.NewTimestampFromTime(now)
	md := l.agg.metrics(nil, ts)
	m := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().AppendEmpty()
	m.SetName(MetricAcquiresPending)
	m.SetDescription("Forwarded acquires held for attribution (each waits pair_wait for earlier acquires of its pair).")
	m.SetUnit("{acquire}")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetIntValue(int64(pending))
	l.emitted, l.idleSweeps, l.agg.dirty, l.pending = true, 0, false, pending
	if err := l.next.ConsumeMetrics(ctx, md); err != nil {
		return fmt.Errorf("mcptrace: send counters: %w", err)
	}
	return nil
}

// Shutdown stops the sweep, attributes every held acquire and emits the
// final counters. It is idempotent and safe without Start; it returns
// ctx's error if the sweep does not stop in time.
func (l *pairsLeg) Shutdown(ctx context.Context) error {
	return l.sweeper.shutdown(ctx, func() error { return l.sweep(ctx, time.Now(), true) })
}
