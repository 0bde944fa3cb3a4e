package analyze

import (
	"github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TraceStream measures complete traces as they arrive and judges the rules
// that can be judged per trace: the Collector connector's engine.
// TraceOutcome is what one Flush measured; RuleJudge is the gate it is
// handed; ExecutionCount and Violation are parts of an outcome.
type (
	TraceStream    = engine.TraceStream
	TraceOutcome   = engine.TraceOutcome
	RuleJudge      = engine.RuleJudge
	ExecutionCount = engine.ExecutionCount
	Violation      = engine.Violation
)

// NewTraceStream is a [TraceStream] for cfg and rules, judged by judge.
func NewTraceStream(cfg rulefmt.Config, rules []rulefmt.Rule, judge RuleJudge) (*TraceStream, error) {
	return engine.NewTraceStream(cfg, rules, judge)
}

// InStream says whether rule r can be judged trace by trace.
func InStream(r rulefmt.Rule) bool { return engine.InStream(r) }

// CompleteAtRoot says whether, under cfg and rules, a trace is complete
// once its root span has arrived.
func CompleteAtRoot(cfg rulefmt.Config, rules []rulefmt.Rule) bool {
	return engine.CompleteAtRoot(cfg, rules)
}

// IsRootSpan says whether sp is a trace's root: it has no parent.
func IsRootSpan(sp ptrace.Span) bool { return engine.IsRootSpan(sp) }

// PairStream attributes the misses of (scope, key) pairs whose acquires
// arrive from many traces, in time order: the connector's tier that a
// trace-id sharded deployment routes by pool scope. PairEvent is one
// acquire handed to it; AcquireCount and PoolCount are what it attributed.
type (
	PairStream   = engine.PairStream
	PairEvent    = engine.PairEvent
	AcquireCount = engine.AcquireCount
	PoolCount    = engine.PoolCount
)

// NewPairStream is a [PairStream] under cfg.
func NewPairStream(cfg rulefmt.Config) (*PairStream, error) { return engine.NewPairStream(cfg) }
