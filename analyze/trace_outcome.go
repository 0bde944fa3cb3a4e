package analyze

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TraceStream is the seam for a driver that finalizes traces itself, one
// at a time, on the wall clock (the OpenTelemetry Collector connector): it
// measures each finalized trace with the engine's own code (observe, the
// aggregate's pair stage, EvaluateRules) and returns plain values, so the
// driver never sees an Index.
//
// Per-trace figures (executions, rule violations) come back from Observe.
// The pool's acquires and handshakes come back from Attribute: a miss's
// cause depends on its (scope, key) pair's earlier acquires in other
// traces, so Observe only buffers a trace's acquires and Attribute
// attributes every buffered one, pair by pair in time order, against what
// the stream attributed before (measure_pool_pairs.go). Call Attribute
// after each group of traces finalized together: within a group the causes
// are those of a batch run; an acquire observed after a later acquire of
// its pair was attributed is judged against the pair's state then, as the
// Engine's late acquires are.
//
// A TraceStream is not safe for concurrent use.
type TraceStream struct {
	cfg   Config
	rules []Rule
	opts  IndexOptions
	agg   *aggregate
}

// TraceOutcome is what one trace adds, apart from the pool's acquires and
// handshakes (see Attribute).
type TraceOutcome struct {
	// Executions are the trace's executions by pool and whether their
	// calls landed on more than one session.
	Executions []ExecutionCount
	// Violations are the failing scopes of the in-stream rules, one per
	// failing trace or subtree.
	Violations []Violation
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
	Severity Severity
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
}

// PoolCount is a number of events (handshakes) of one pool.
type PoolCount struct {
	Pool string
	N    int
}

// Attributed is what Attribute returns: the acquires and handshakes of the
// traces observed since the previous call.
type Attributed struct {
	Acquires   []AcquireCount
	Handshakes []PoolCount
}

// InStream reports whether r can be judged on one finalized trace at a
// time: its scope is a trace or a subtree and it compares no dump-wide
// measure (a hit rate or an unexplained-miss count judged on one trace is
// not the rule's meaning).
func InStream(r Rule) bool {
	if r.Scope.Kind == ScopeDump {
		return false
	}
	for _, ex := range r.Expect {
		if ex.isMeasure() || ex.Than.Measure != "" {
			return false
		}
	}
	return true
}

// NewTraceStream returns a stream measuring with cfg and judging each trace
// against rules, every one of which must be InStream.
func NewTraceStream(cfg Config, rules []Rule) (*TraceStream, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	for _, r := range rules {
		if !InStream(r) {
			return nil, fmt.Errorf("analyze: rule %q cannot be judged one trace at a time (dump scope or dump measure)", clipInput(r.ID))
		}
	}
	cfg = cfg.withDefaults()
	s := &TraceStream{
		cfg:   cfg,
		rules: rules,
		opts:  MergeIndexOptions(cfg.IndexOptions(), RulesIndexOptions(rules)),
		agg:   newAggregate(cfg, true),
	}
	// Compile the selectors once, so a bad one fails here.
	if _, err := s.Observe(ptrace.NewTraces()); err != nil {
		return nil, err
	}
	return s, nil
}

// Observe measures the spans of td, which should be whole traces (one, for
// the connector), judges the rules on them and buffers their acquires for
// Attribute. It does not keep td.
func (s *TraceStream) Observe(td ptrace.Traces) (TraceOutcome, error) {
	idx := NewIndex(s.opts)
	idx.Add(td)
	var out TraceOutcome
	if len(s.rules) > 0 {
		rep, err := Analyze(idx, s.cfg)
		if err != nil {
			return out, err
		}
		results, err := EvaluateRules(idx, s.cfg, rep, s.rules, EvalOptions{MaxExamples: math.MaxInt32})
		if err != nil {
			return out, fmt.Errorf("analyze: %w", err)
		}
		for i, res := range results {
			if res.Status != StatusFail {
				continue
			}
			for _, ex := range res.Examples {
				out.Violations = append(out.Violations, Violation{
					RuleID: res.ID, Severity: s.rules[i].Severity, Finding: res.Found,
					TraceID: ex.TraceID, SpanID: ex.SpanID, TraceQL: ex.TraceQL,
				})
			}
		}
	}
	o, err := observe(idx, s.cfg)
	if err != nil {
		return out, err
	}
	if o.exec.Count > 0 {
		pool := s.callPool(idx)
		if n := o.exec.Count - o.exec.MultiSession; n > 0 {
			out.Executions = append(out.Executions, ExecutionCount{Pool: pool, N: n})
		}
		if o.exec.MultiSession > 0 {
			out.Executions = append(out.Executions, ExecutionCount{Pool: pool, MultiSession: true, N: o.exec.MultiSession})
		}
	}
	s.agg.merge(o)
	return out, nil
}

// callPool names the pool scope of the first tool call that has one.
func (s *TraceStream) callPool(idx *Index) string {
	v := newVocab(idx, s.cfg)
	for _, i := range idx.order {
		if !v.isCall(i) {
			continue
		}
		if sc := v.scopeOf(i); sc >= 0 {
			return v.valueString(sc)
		}
	}
	return ""
}

// Attribute attributes every acquire observed since the previous call and
// returns them, with the handshakes, by pool; the pairs' history is kept
// for the next call.
func (s *TraceStream) Attribute() Attributed {
	p := s.agg.pairs
	p.advance(math.MaxInt64)
	name := func(id int32) string {
		if id < 0 {
			return ""
		}
		return s.agg.strs[id]
	}
	var out Attributed
	for scope, st := range p.scopes {
		if st.hits > 0 {
			out.Acquires = append(out.Acquires, AcquireCount{Pool: name(scope), Hit: true, N: st.hits})
		}
		for cause, n := range st.reasons {
			if n > 0 {
				out.Acquires = append(out.Acquires, AcquireCount{Pool: name(scope), MissCause: cause, N: n})
			}
		}
	}
	for scope, n := range p.handshakes {
		if n > 0 {
			out.Handshakes = append(out.Handshakes, PoolCount{Pool: name(scope), N: n})
		}
	}
	clear(p.scopes)
	clear(p.handshakes)
	slices.SortFunc(out.Acquires, func(a, b AcquireCount) int {
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmpBool(a.Hit, b.Hit), cmp.Compare(a.MissCause, b.MissCause))
	})
	slices.SortFunc(out.Handshakes, func(a, b PoolCount) int { return cmp.Compare(a.Pool, b.Pool) })
	return out
}

// LateAcquires counts the acquires attributed after a later acquire of
// their pair had been: their cause may differ from a batch run's.
func (s *TraceStream) LateAcquires() int { return s.agg.pairs.late }

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
