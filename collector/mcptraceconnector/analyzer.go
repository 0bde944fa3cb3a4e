package mcptraceconnector

import (
	"encoding/hex"
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// traceAnalyzer is where the analysis engine plugs in. The connector owns
// the wall-clock side (grouping spans by trace, wait, max_open_traces, late
// spans, Shutdown); the analyzer owns the measures.
//
// Finalize is called once per finalized trace, never for the same trace
// twice, from any goroutine but never concurrently for one connector
// instance. spans holds every span the connector gathered for the trace,
// regrouped under their resources and scopes; the analyzer may read it but
// must not keep it. reason says why the trace was finalized: reasonCut and
// reasonShutdown traces may be incomplete, and the analyzer must not judge
// an incomplete trace as if it were whole (a verdict is never green on
// missing data).
//
// Attribute is called after each group of traces finalized together (the
// complete traces gathered until completeGroup of them or the next sweep,
// the traces one sweep waited out, one cut, Shutdown) and returns what the
// group adds that Finalize did not return. A miss's cause depends on its (pool, key) pair's acquires
// in earlier traces, so the analyzer attributes a group's acquires
// together, in time order, against the pairs' history; the stream analyzer
// also measures the whole group as one index, so it returns everything
// from Attribute.
type traceAnalyzer interface {
	Finalize(id pcommon.TraceID, spans ptrace.Traces, reason finalizeReason) traceOutcome
	Attribute() traceOutcome
}

// traceOutcome is what one finalized trace adds to the connector's output.
// Every field is additive, so outcomes sum across traces and, because the
// loadbalancing exporter routes each trace to one collector, across
// collectors. The zero value adds nothing.
type traceOutcome struct {
	// Acquires are the trace's acquires by pool, hit and miss cause.
	Acquires []acquireCount
	// Handshakes are the trace's handshakes by pool.
	Handshakes []poolCount
	// Executions are the trace's executions by pool and whether they ran
	// on more than one session.
	Executions []executionCount
	// Violations are the rule violations found in the trace.
	Violations []ruleViolation
	// Pairs are the acquires to forward, unattributed (attribution:
	// forward); Acquires is then empty.
	Pairs []analyze.PairEvent
}

// acquireCount is a number of acquires sharing one attribute set of
// mcptrace.pool.acquires.
type acquireCount struct {
	PoolID   string
	CacheHit bool
	// MissCause is the analyzer's attribution (cold, concurrent, ttl,
	// redial, after_failure, health_check, evicted, unexplained), or
	// MissCauseUnknown where the spans cannot show the cause
	// (unknownCauses); empty on hits.
	MissCause string
	N         int64
}

// poolCount is a number of events in one pool (mcptrace.pool.handshakes).
type poolCount struct {
	PoolID string
	N      int64
}

// executionCount is a number of executions sharing one attribute set of
// mcptrace.executions.
type executionCount struct {
	PoolID       string
	MultiSession bool
	N            int64
}

// ruleViolation is one finding of a per-trace rule: a log record and one
// increment of mcptrace.rule.violations.
type ruleViolation struct {
	RuleID   string
	Severity string
	// Finding is the finding text, as `mcptrace check` prints it.
	Finding string
	// TraceQL finds the offending spans in Tempo.
	TraceQL string
	TraceID pcommon.TraceID
	SpanID  pcommon.SpanID
}

// streamAnalyzer is the analyzer: analyze.TraceStream, the engine's
// observation and pair attribution over one trace at a time, with the
// in-stream rules (per trace and per subtree).
type streamAnalyzer struct {
	logger  *zap.Logger
	ts      *analyze.TraceStream
	late    int // late acquires already logged
	unknown unknownCauses
}

// newAnalyzer returns the analyzer for the resolved settings, judging the
// rules that can be judged one trace at a time. With attribution: forward,
// the analyzer of a logs leg hands its acquires out as Pairs and that of a
// metrics leg drops them (the logs leg forwards the same ones).
func newAnalyzer(logger *zap.Logger, s settings, logsLeg bool) (traceAnalyzer, error) {
	perTrace, _ := inStreamRules(s.rules)
	ts, err := analyze.NewTraceStream(s.analyze, perTrace, judgeRules)
	if err != nil {
		return nil, fmt.Errorf("mcptrace: %w", err)
	}
	switch {
	case s.forward && logsLeg:
		ts.ForwardPairs()
	case s.forward:
		ts.DropPairs()
	}
	return &streamAnalyzer{logger: logger, ts: ts}, nil
}

// Finalize files the trace for the group's Attribute; it adds nothing by
// itself.
func (a *streamAnalyzer) Finalize(_ pcommon.TraceID, spans ptrace.Traces, _ finalizeReason) traceOutcome {
	a.ts.Add(spans)
	return traceOutcome{}
}

// Attribute measures the traces finalized since the last call, as one
// group: acquires (misses attributed), handshakes, executions and rule
// violations. A group the engine cannot measure (it never should: the
// selectors were compiled at start) is logged and adds nothing.
func (a *streamAnalyzer) Attribute() traceOutcome {
	o, err := a.ts.Flush()
	if err != nil {
		a.logger.Warn("mcptrace: measuring finalized traces", zap.Error(err))
		return traceOutcome{}
	}
	if late := a.ts.LateAcquires(); late > a.late {
		// No contract metric carries this: say it where an operator looks.
		a.logger.Info("mcptrace: acquires attributed after a later acquire of their pool and key (a long trace finalized after a shorter one); their miss cause may differ from mcptrace analyze on a dump",
			zap.Int("acquires", late-a.late), zap.Int("total", late))
		a.late = late
	}
	out := a.unknown.poolOutcome(o.Acquires, o.Handshakes)
	a.unknown.log(a.logger)
	out.Pairs = o.Pairs
	for _, e := range o.Executions {
		out.Executions = append(out.Executions, executionCount{PoolID: e.Pool, MultiSession: e.MultiSession, N: int64(e.N)})
	}
	for _, v := range o.Violations {
		rv := ruleViolation{RuleID: v.RuleID, Severity: string(v.Severity), Finding: v.Finding, TraceQL: v.TraceQL}
		if tid, ok := parseTraceID(v.TraceID); ok {
			rv.TraceID = tid
		}
		if sid, ok := parseSpanID(v.SpanID); ok {
			rv.SpanID = sid
		}
		out.Violations = append(out.Violations, rv)
	}
	return out
}

// poolOutcome is the outcome of attributed acquires and handshakes, a
// miss whose cause the spans cannot show counted under MissCauseUnknown
// (u.cause).
func (u *unknownCauses) poolOutcome(acquires []analyze.AcquireCount, handshakes []analyze.PoolCount) traceOutcome {
	var out traceOutcome
	for _, x := range acquires {
		out.Acquires = append(out.Acquires, acquireCount{PoolID: x.Pool, CacheHit: x.Hit, MissCause: u.cause(x), N: int64(x.N)})
	}
	for _, x := range handshakes {
		out.Handshakes = append(out.Handshakes, poolCount{PoolID: x.Pool, N: int64(x.N)})
	}
	return out
}

// unknownCauses labels the misses whose cause the spans cannot show
// MissCauseUnknown and says why in the log, once per reason: the metric
// says how many.
type unknownCauses struct {
	why    string // the reason of the last miss labelled unknown
	logged string // the last reason logged; "" when none was
}

// cause is the MissCause of x: the analyzer's attribution, or
// MissCauseUnknown where the spans of its pool cannot show that this miss
// had it. The analyzer decides which (report.Report.FigureOf of the
// cause's figure, report.MissCauseFigure, for the pool's writer,
// AcquireCount.Writer), as it does for mcptrace analyze's misses by cause;
// a label is kept only where every miss the figure counts certainly has
// that cause (FigureState.Certain: exact, or a lower bound). Without a
// target identity (an acquire span of the pool without a cache key, a
// client's calls without the server's address) every target of the pool
// reads as one key, so concurrent, ttl, after_failure, health_check,
// evicted and unexplained may each have been another cause (not
// measurable); a server-side writer never sees an attempt refused before
// its handler, so its unexplained misses may be redials (an upper bound);
// a cold miss is still cold (the pool's cold series is then a lower
// bound). "" on hits.
func (u *unknownCauses) cause(x analyze.AcquireCount) string {
	if x.Hit {
		return ""
	}
	if f := (&report.Report{Writer: x.Writer}).FigureOf(report.MissCauseFigure(x.MissCause)); !f.Certain() {
		u.why = f.Why
		return MissCauseUnknown
	}
	return x.MissCause
}

// log says why misses were counted under MissCauseUnknown, when that
// reason was not the last one logged.
func (u *unknownCauses) log(logger *zap.Logger) {
	if u.why != "" && u.why != u.logged {
		logger.Info("mcptrace: misses whose cause the spans cannot show are counted with "+AttrMissCause+"="+MissCauseUnknown,
			zap.String("why", u.why))
		u.logged = u.why
	}
}

// parseTraceID and parseSpanID read an id in hex; false for "" or
// anything else.
func parseTraceID(s string) (pcommon.TraceID, bool) {
	var id pcommon.TraceID
	ok := decodeID(id[:], s)
	return id, ok
}

func parseSpanID(s string) (pcommon.SpanID, bool) {
	var id pcommon.SpanID
	ok := decodeID(id[:], s)
	return id, ok
}

// decodeID fills dst from s, exactly 2*len(dst) hex digits.
func decodeID(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// judgeRules is the stream's rule judge: the gate's own verdicts
// (gate.Evaluate, report.RuleVerdict as they are), so a violation reads
// as `mcptrace check` words it.
func judgeRules(a *report.Analysis, rules []rulefmt.Rule) ([]report.RuleVerdict, error) {
	return gate.Evaluate(a, rules)
}
