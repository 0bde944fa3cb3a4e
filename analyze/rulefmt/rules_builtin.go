package rulefmt

import (
	"strings"

	"github.com/mcptrace/mcptrace/spans"
)

// IDs of the built-in rules.
const (
	RuleOneSessionPerExecution = "one-session-per-execution"
	RuleNoUnexplainedMisses    = "no-unexplained-misses"
	RuleAcquireHasCacheHit     = "acquire-has-cache-hit"
	RuleHandshakeOnlyOnMiss    = "handshake-only-on-miss"
	RuleOneAcquirePerInvoke    = "one-acquire-per-invocation"
	RuleServerKeptSessions     = "server-kept-execution-state"
)

// BuiltinRules returns the pool's invariants as rules, the gate
// `mcptrace check` applies when no rule file is given. cfg.ExecutionRoot,
// when set, makes each execution a subtree rooted at it instead of a trace.
// The caller owns the returned slice.
func BuiltinRules(cfg Config) []Rule {
	// The calls are the vocabulary's, whoever wrote them: our call_tool
	// spans, the conventions' tools/call, OpenLLMetry's <tool>.tool or a
	// configured writer's.
	callSel := &SpanSelector{Selector: Selector{Calls: true}}
	exec := Scope{Kind: ScopeTrace}
	if cfg.ExecutionRoot != nil {
		root := *cfg.ExecutionRoot
		exec = Scope{Kind: ScopeSubtree, Root: &root}
	}
	rules := append(sessionRules(exec, callSel), poolSpanRules()...)
	for i := range rules {
		if rules[i].Severity == "" {
			rules[i].Severity = SeverityError
		}
		rules[i].Builtin = true
	}
	return rules
}

// CheckRules returns the rules a check judges, the one place the CLI's
// check and the Collector connector decide it: the rules of gc (nil: no
// configuration file), and the built-in rules of cfg besides them when gc
// has no rules of its own, when withBuiltin is set (check --builtin), or
// when gc has a builtin: block; then gc's builtin: severities are applied
// (a built-in set to off is left out).
func CheckRules(gc *GateConfig, cfg Config, withBuiltin bool) []Rule {
	var rules []Rule
	if gc != nil {
		rules = gc.Rules
	}
	if len(rules) == 0 || withBuiltin || (gc != nil && gc.Builtin != nil) {
		rules = append(rules, BuiltinRules(cfg)...)
	}
	return gc.ApplyBuiltin(rules)
}

// sessionRules are the built-in rules on sessions per execution and on
// misses, read from any writer's calls: exec is the execution scope,
// callSel the vocabulary's calls.
func sessionRules(exec Scope, callSel *SpanSelector) []Rule {
	return []Rule{
		{
			ID: RuleOneSessionPerExecution,
			Description: "Exactly one downstream session per execution: a stateful server keeps state per " +
				spans.AttrSessionID + ", so an execution whose tool calls the pool spread over several sessions loses it. " +
				"A move forced by the server forgetting the session is " + RuleServerKeptSessions + "'s finding, not this one's.",
			Scope:           exec,
			Select:          callSel,
			Expect:          []Expectation{{Of: QuantityPoolSessions, Op: OpEq, Than: Operand{Number: 1}}},
			SkipEmpty:       true,
			SkipSessionless: true,
			Severity:        SeverityError,
			Needs:           CapCalls | CapExecutions | CapSessionID,
		},
		{
			ID: RuleServerKeptSessions,
			Description: "The server kept each execution's session: a session it forgot mid-execution (a 404 the pool answered with " +
				"its one transparent redial) moved the execution to a new session and lost its state. Not the pool's fault: a warning.",
			Scope:           exec,
			Select:          callSel,
			Expect:          []Expectation{{Of: QuantityLostSessions, Op: OpEq, Than: Operand{Number: 0}}},
			SkipEmpty:       true,
			SkipSessionless: true,
			Severity:        SeverityWarning,
			// A forgotten session shows as a refused call: a server never sees it.
			Needs: CapCalls | CapExecutions | CapSessionID | CapRefusedAttempts,
		},
		{
			ID: RuleNoUnexplainedMisses,
			Description: "Every pool miss has a cause (" + strings.Join(spans.ExplainedMissReasons, ", ") + "): " +
				"an unexplained miss is a session the pool should have reused.",
			Scope:  Scope{Kind: ScopeDump},
			Expect: []Expectation{{Of: "unexplained_misses", Op: OpEq, Than: Operand{Number: 0}}},
			// Without a target identity two targets read as one key, and the
			// second one's cold start as unexplained.
			Needs: CapAcquires | CapTargetIdentity,
		},
	}
}

// poolSpanRules are the built-in rules on this pool's own spans (acquire,
// handshake, invocation): they apply only to a writer of such spans.
func poolSpanRules() []Rule {
	acquire := Selector{Name: spans.SpanAcquire}
	hitAcquire := Selector{Name: spans.SpanAcquire, Attributes: []AttrMatch{{Key: spans.AttrCacheHit, Op: OpEquals, Value: "true"}}}
	return []Rule{
		{
			ID:          RuleAcquireHasCacheHit,
			Description: "Every acquire span carries " + spans.AttrCacheHit + ", so hits and misses are read, not guessed from handshakes.",
			Scope:       Scope{Kind: ScopeDump},
			Select:      &SpanSelector{Selector: Selector{Name: spans.SpanAcquire, Attributes: []AttrMatch{{Key: spans.AttrCacheHit, Op: OpAbsent}}}},
			Expect:      []Expectation{{Of: QuantityCount, Op: OpEq, Than: Operand{Number: 0}}},
			Needs:       CapAcquireSpans,
		},
		{
			ID:          RuleHandshakeOnlyOnMiss,
			Description: "A handshake happens only under a miss: an acquire that reports a hit yet dials has lied about reuse.",
			Scope:       Scope{Kind: ScopeDump},
			Select:      &SpanSelector{Selector: Selector{Name: spans.SpanHandshake}, Under: &hitAcquire},
			Expect:      []Expectation{{Of: QuantityCount, Op: OpEq, Than: Operand{Number: 0}}},
			Needs:       CapAcquireSpans | CapHandshakeSpans,
		},
		{
			ID: RuleOneAcquirePerInvoke,
			Description: "An invocation acquires one session; a second acquire is allowed only as the transparent redial (" +
				spans.AttrAttempt + " 2) after a reused session expired.",
			Scope:  Scope{Kind: ScopeSubtree, Root: &Selector{Name: spans.SpanInvoke}},
			Select: &SpanSelector{Selector: acquire},
			Expect: []Expectation{
				{Of: QuantityCount, Op: OpLe, Than: Operand{Number: 2}},
				{Of: QuantityCount, Op: OpLe, Than: Operand{Number: 1},
					Select: &SpanSelector{Selector: Selector{Name: spans.SpanAcquire, Attributes: []AttrMatch{{Key: spans.AttrAttempt, Op: OpNotEquals, Value: "2"}}}}},
			},
			Needs: CapInvocationSpans | CapAcquireSpans,
		},
	}

}
