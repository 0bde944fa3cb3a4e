package engine

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// TraceStream is the seam for a driver that finalizes traces itself, on
// the wall clock (the OpenTelemetry Collector connector): it measures
// finalized traces with the engine's own code (observe, the aggregate's
// pair stage, EvaluateRules) and returns plain values, so the driver never
// sees an index.
//
// The driver hands each finalized trace to Add and, after each group of
// traces finalized together, calls Flush, which measures the group as one
// index (an index costs a few megabytes of chunks to start, so one per
// trace would cost more than the trace) and returns what it adds. A miss's
// cause depends on its (scope, key) pair's earlier acquires in other
// traces: Flush attributes the group's acquires pair by pair in time order
// against what the stream attributed before (measure.PairStage).
// Within a group the causes are those of a batch run; an acquire flushed
// after a later acquire of its pair was attributed is judged against the
// pair's state then, as the Engine's late acquires are (LateAcquires).
//
// A TraceStream is not safe for concurrent use.
type TraceStream struct {
	cfg   rulefmt.Config
	rules []rulefmt.Rule
	judge RuleJudge
	opts  rulefmt.IndexOptions
	agg   *aggregate
	group *index.Index // the traces added since the last Flush; nil when none
	// spare is the index a Flush is done with, reset for the next group
	// (index.reset, as the Engine's shards reuse theirs): a fresh index
	// allocates, and the runtime zeroes, a span chunk, an attribute chunk
	// and its duplicate cache, about 2 MB, which cost more than measuring a
	// group of a few dozen traces (BenchmarkAnalyzerCost in the connector).
	spare *index.Index
	// pairs says what Flush does with the acquires: attribute them (the
	// default), hand them out (ForwardPairs) or drop them (DropPairs).
	pairs pairMode
}

// newIndex returns an empty index for a group: the spare one, reset, when
// there is one.
func (s *TraceStream) newIndex() *index.Index {
	x := s.spare
	s.spare = nil
	if x == nil {
		return index.New(s.opts)
	}
	x.Reset()
	return x
}

// recycle keeps x as the spare index. x must not be used again.
func (s *TraceStream) recycle(x *index.Index) { s.spare = x }

// TraceOutcome is what a group of traces adds to the counters.
type TraceOutcome struct {
	// Acquires are the group's acquires by pool, hit and miss cause.
	Acquires []AcquireCount
	// Handshakes are the group's handshakes by pool.
	Handshakes []PoolCount
	// Executions are the group's executions by pool and whether their
	// calls landed on more than one session.
	Executions []ExecutionCount
	// Violations are the failing scopes of the in-stream rules, one per
	// failing trace or subtree.
	Violations []Violation
	// Pairs are the group's acquires, unattributed, when the stream
	// forwards them (ForwardPairs); Acquires is then empty.
	Pairs []PairEvent
}

// ExecutionCount is a number of executions of one pool, on one session or
// several.
type ExecutionCount struct {
	// Pool is the pool scope of the trace's first tool call that names
	// one; "" when none does.
	Pool         string
	MultiSession bool
	N            int
}

// Violation is one failing scope of a rule.
type Violation struct {
	RuleID   string
	Severity rulefmt.Severity
	// Finding is what the trace holds, as `mcptrace check` words it.
	Finding string
	// TraceID and SpanID (hex) name the offending trace and the scope's
	// span; SpanID is "" when the rule names none.
	TraceID, SpanID string
	// TraceQL finds the offending span (or trace) in Tempo.
	TraceQL string
}

// AcquireCount is a number of acquires of one pool sharing hit and cause.
type AcquireCount struct {
	Pool string
	Hit  bool
	// MissCause is the miss attribution (spans.MissCold, ...); "" on hits.
	MissCause string
	N         int
	// Writer is what the spans of the pool's acquires so far show, as a
	// report's writer section says it (nil: everything): the cause is
	// worth what report.Report{Writer: Writer}.FigureOf says of its figure
	// (report.MissCauseFigure), the one decider, so that a driver counts
	// no cause the spans cannot show. As one analysis of those spans, one
	// acquire span of the pool without a cache key, and none of its keys
	// can be told apart; another pool's keys do not merge with its.
	Writer *report.WriterReport
}

// PoolCount is a number of events (handshakes) of one pool.
type PoolCount struct {
	Pool string
	N    int
}

// RuleJudge judges rules on the analysis of some traces (their Report and
// rule observations, from AnalyzeRules) and returns, for each rule in
// order, its verdict: report.RuleVerdict, the one verdict shape. The gate
// provides it (analyze/gate's Evaluate): this package cannot import the
// gate, which reads its analysis value.
type RuleJudge func(a *report.Analysis, rules []rulefmt.Rule) ([]report.RuleVerdict, error)

// InStream reports whether r can be judged on one finalized trace at a
// time: its scope is a trace or a subtree and it compares no dump-wide
// measure (a hit rate or an unexplained-miss count judged on one trace is
// not the rule's meaning).
func InStream(r rulefmt.Rule) bool {
	if r.Scope.Kind == rulefmt.ScopeDump {
		return false
	}
	for _, ex := range r.Expect {
		if ex.IsMeasure() || ex.Than.Measure != "" {
			return false
		}
	}
	return true
}

// CompleteAtRoot reports whether a trace measured with cfg and judged with
// rules is whole once its root span (IsRootSpan) has arrived: the rule a
// streaming Engine finalizes traces by (unless EngineOptions.HoldComplete),
// and the Collector connector too, so both cut a trace at the same point.
// The premise is export order: a process exports a span when it ends, and
// a parent ends after its children, so the pool's spans are exported no
// later than their trace's root. It is false when something must wait for
// spans that may come later from another process: a reads-per-request
// measure (its complete_when, and the server's reads), or a rule with
// complete_when.
func CompleteAtRoot(cfg rulefmt.Config, rules []rulefmt.Rule) bool {
	if len(cfg.Measures) > 0 {
		return false
	}
	for _, r := range rules {
		if r.CompleteWhen != nil {
			return false
		}
	}
	return true
}

// IsRootSpan reports whether sp is its trace's root: it has no parent span
// id (the index's parentID 0, the Engine's rooted traces).
func IsRootSpan(sp ptrace.Span) bool { return sp.ParentSpanID().IsEmpty() }

// NewTraceStream returns a stream measuring with cfg and judging each trace
// against rules, every one of which must be InStream, with judge (needed
// when there are rules).
func NewTraceStream(cfg rulefmt.Config, rules []rulefmt.Rule, judge RuleJudge) (*TraceStream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	for _, r := range rules {
		if !InStream(r) {
			return nil, fmt.Errorf("analyze: rule %q cannot be judged one trace at a time (dump scope or dump measure)", textfmt.ClipInput(r.ID))
		}
	}
	if len(rules) > 0 && judge == nil {
		return nil, fmt.Errorf("analyze: %d rules and no judge for them", len(rules))
	}
	cfg = cfg.WithDefaults()
	s := &TraceStream{
		cfg:   cfg,
		rules: rules,
		judge: judge,
		opts:  rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)),
		agg:   newAggregate(cfg),
	}
	s.agg.scopeKeyless = map[int32]int{}
	// Compile the selectors once, so a bad one fails here.
	s.Add(ptrace.NewTraces())
	if _, err := s.Flush(); err != nil {
		return nil, err
	}
	return s, nil
}

// Add files the spans of td, one finalized trace (or several), for the
// next Flush. It does not keep td.
func (s *TraceStream) Add(td ptrace.Traces) {
	if s.group == nil {
		s.group = s.newIndex()
	}
	s.group.Add(td)
}

// Flush measures the traces added since the last Flush, judges the rules
// on each and attributes their acquires; the pairs' history is kept for
// the next Flush.
func (s *TraceStream) Flush() (TraceOutcome, error) {
	idx := s.group
	s.group = nil
	var out TraceOutcome
	if idx == nil {
		return out, nil
	}
	defer s.recycle(idx)
	if len(s.rules) > 0 {
		v, err := s.violations(idx)
		if err != nil {
			return out, err
		}
		out.Violations = v
	}
	o, err := observe(idx, s.cfg)
	if err != nil {
		return out, err
	}
	out.Executions, err = s.executions(idx)
	if err != nil {
		return out, err
	}
	s.agg.merge(o)
	switch s.pairs {
	case pairsForward:
		out.Pairs, out.Handshakes = s.takePairs(true)
	case pairsDrop:
		_, out.Handshakes = s.takePairs(false)
	default:
		out.Acquires, out.Handshakes = s.agg.attributeAll()
	}
	return out, nil
}

// violations judges the rules on every trace of idx. Each trace is judged
// on its own (the rules are per trace or subtree); a trace with a failing
// rule is judged again alone, so its finding's words count that trace only,
// as `mcptrace check` on that trace would.
func (s *TraceStream) violations(idx *index.Index) ([]Violation, error) {
	results, err := s.judgeIndex(idx)
	if err != nil {
		return nil, err
	}
	failing := map[string]bool{}
	for _, res := range results {
		for _, ex := range res.Examples {
			failing[ex.TraceID] = true
		}
	}
	if len(failing) == 0 {
		return nil, nil
	}
	var out []Violation
	for t := range idx.TraceRecs {
		if !failing[idx.TraceID(int32(t))] {
			continue
		}
		one := s.newIndex()
		sel := make([]bool, len(idx.TraceRecs))
		sel[t] = true
		index.CopyTraces(one, idx, sel)
		results, err := s.judgeIndex(one)
		s.recycle(one)
		if err != nil {
			return nil, err
		}
		for i, res := range results {
			if res.Status != report.StatusFail {
				continue
			}
			for _, ex := range res.Examples {
				out = append(out, Violation{
					RuleID: s.rules[i].ID, Severity: s.rules[i].Severity, Finding: res.Found,
					TraceID: ex.TraceID, SpanID: ex.SpanID, TraceQL: ex.TraceQL,
				})
			}
		}
	}
	return out, nil
}

// judgeIndex evaluates the rules on idx, naming every failing scope.
func (s *TraceStream) judgeIndex(idx *index.Index) ([]report.RuleVerdict, error) {
	a, err := analyzeRules(context.Background(), idx, s.cfg, s.rules, ObserveOptions{MaxExamples: math.MaxInt32})
	if err != nil {
		return nil, err
	}
	results, err := s.judge(a, s.rules)
	if err != nil {
		return nil, fmt.Errorf("analyze: judge rules: %w", err)
	}
	if len(results) != len(s.rules) {
		return nil, fmt.Errorf("analyze: judge rules: %d verdicts for %d rules", len(results), len(s.rules))
	}
	return results, nil
}

// executions counts idx's executions by the pool of their trace's first
// tool call that names one, with the executions measure's own walk; none
// when the spans cannot show sessions per execution (Report.FigureOf):
// a counter the spans cannot vouch for is not emitted, not even as 0.
func (s *TraceStream) executions(idx *index.Index) ([]ExecutionCount, error) {
	ev, err := vocab.Stage(context.Background(), idx, s.cfg)
	if err != nil {
		return nil, err
	}
	type key struct {
		pool  string
		multi bool
	}
	counts := map[key]int{}
	pools := map[int32]string{}
	r := report.Report{PoolSpans: ev.PoolSpans}
	r.Executions = measure.Executions(ev, func(t int32, sessions int) {
		pool, ok := pools[t]
		if !ok {
			pool = callPool(ev, t)
			pools[t] = pool
		}
		counts[key{pool, sessions > 1}]++
	})
	r.Executions.ExecutionsWithoutCalls = measure.ExecutionsWithoutCalls(ev.ExecNames)
	cfg := vocab.Resolve(s.cfg, idx)
	r.Writer = measure.WriterReport(cfg.ActiveVocabulary(), measure.EvidenceOf(ev), cfg.Vocabulary != nil)
	measure.JudgeMeasurability(&r.Executions, ev.PoolSpans, rulefmt.CapabilitiesOf(r.Writer.Shows))
	if !r.FigureOf("multi_session_executions").Known() {
		return nil, nil // a figure the spans cannot show is not emitted, not even as 0
	}
	out := make([]ExecutionCount, 0, len(counts))
	for k, n := range counts {
		out = append(out, ExecutionCount{Pool: k.pool, MultiSession: k.multi, N: n})
	}
	slices.SortFunc(out, func(a, b ExecutionCount) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmpBool(a.MultiSession, b.MultiSession))
	})
	return out, nil
}

// callPool names the pool scope of trace t's first tool call that has one.
func callPool(e *record.Table, t int32) string {
	lo, _ := slices.BinarySearchFunc(e.Calls, t, func(c record.Call, t int32) int { return cmp.Compare(c.Trace, t) })
	for _, c := range e.Calls[lo:] {
		if c.Trace != t {
			break
		}
		if c.Scope >= 0 {
			return e.Str(c.Scope)
		}
	}
	return ""
}

// takeCounts returns what the pair stage attributed since the previous
// call, by pool: acquires by hit and cause, and the handshakes; it clears
// them.
func (a *aggregate) takeCounts() ([]AcquireCount, []PoolCount) {
	p := a.pairs
	name := func(id int32) string {
		if id < 0 {
			return ""
		}
		return a.strs[id]
	}
	var acquires []AcquireCount
	var handshakes []PoolCount
	for scope, st := range p.Scopes {
		w := a.writerOf(scope)
		if st.Hits > 0 {
			acquires = append(acquires, AcquireCount{Pool: name(scope), Hit: true, N: st.Hits, Writer: w})
		}
		for i, n := range st.Reasons[:len(spans.MissReasons)] {
			if cause := spans.MissReasons[i]; n > 0 {
				acquires = append(acquires, AcquireCount{Pool: name(scope), MissCause: cause, N: n, Writer: w})
			}
		}
	}
	for scope, n := range p.Handshakes {
		if n > 0 {
			handshakes = append(handshakes, PoolCount{Pool: name(scope), N: n})
		}
	}
	clear(p.Scopes)
	clear(p.Handshakes)
	slices.SortFunc(acquires, func(a, b AcquireCount) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmpBool(a.Hit, b.Hit), cmp.Compare(a.MissCause, b.MissCause))
	})
	slices.SortFunc(handshakes, func(a, b PoolCount) int { return cmp.Compare(a.Pool, b.Pool) })
	return acquires, handshakes
}

// LateAcquires counts the acquires attributed after a later acquire of
// their pair had been: their cause may differ from a batch run's.
func (s *TraceStream) LateAcquires() int { return s.agg.pairs.Late }

// writerOf is what the spans of pool scope (an id of a's strings) show:
// for a TraceStream, its writer as the report's (measure.WriterReport)
// but with the scope's own keyless acquires (SpanEvidence.ForScope); for
// a PairStream, every capability but those the scope's forwarders said
// their spans lacked (nil when none). Nil otherwise: everything.
func (a *aggregate) writerOf(scope int32) *report.WriterReport {
	switch {
	case a.scopeKeyless != nil:
		return measure.WriterReport(a.vocabulary(), a.seen.ForScope(a.scopeKeyless[scope]), a.cfg.Vocabulary != nil)
	case a.scopeLacks[scope] != 0:
		lacks := a.scopeLacks[scope]
		return &report.WriterReport{Shows: (allCapabilities &^ lacks).Names(), Lacks: lacks.Names()}
	}
	return nil
}

// allCapabilities is every capability there is.
var allCapabilities = rulefmt.CapabilitiesOf((^rulefmt.Capability(0)).Names())

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
