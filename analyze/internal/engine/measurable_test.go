package engine

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// callSpan is a call of session sess under parent in trace tr.
func callSpan(tr, parent uint64, start, end time.Duration, sess string) sp {
	return sp{trace: tr, parent: parent, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: start, end: end,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, sess}}
}

// TestExecutionsAreMeasurableOnlyWhenCallsAreTiedToTheirExecution pins
// when sessions per execution is a figure: every call under an execution
// root it does not outlive (a call ending exactly with its root is within
// it, one ending a nanosecond later is not), and some execution when the
// dump holds pool spans.
func TestExecutionsAreMeasurableOnlyWhenCallsAreTiedToTheirExecution(t *testing.T) {
	root := &rulefmt.Selector{Name: "executor.execute"}
	for _, tc := range []struct {
		name       string
		root       *rulefmt.Selector
		vocab      func() *rulefmt.Vocabulary // nil: the default's
		build      func(d *dump, ss ptrace.SpanSlice)
		measurable bool
		outside    int
		outliving  int
		without    int // executions without a call, of a root name others have calls under
		why        string
	}{
		{name: "calls within their trace's root", build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
			d.add(ss, callSpan(1, r, 0, 500*time.Millisecond, "s1"))
		}, measurable: true},
		{name: "a call ending exactly when its root ends is within it", build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
			d.add(ss, callSpan(1, r, 0, time.Second, "s1"))
		}, measurable: true},
		{name: "a call ending 1ns after its root outlives it", build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
			d.add(ss, callSpan(1, r, 0, time.Second+time.Nanosecond, "s1"))
		}, outliving: 1, why: "end after their execution's root span ended"},
		{name: "calls parented to a long-lived session span land in the first execution's trace", build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
			sess := d.add(ss, sp{trace: 1, parent: r, name: "mcp.client.session", kind: ptrace.SpanKindClient, start: 100 * time.Millisecond, end: time.Hour})
			d.add(ss, callSpan(1, sess, 200*time.Millisecond, 300*time.Millisecond, "s1"))
			d.add(ss, callSpan(1, sess, time.Minute, time.Minute+time.Second, "s1")) // the next execution's
			d.add(ss, callSpan(1, sess, 2*time.Minute, 2*time.Minute+time.Second, "s1"))
		}, outliving: 2, why: "a long-lived session span"},
		{name: "a session span as the trace's root (a pool connecting at start-up) is no execution", vocab: withSessionSpan, build: func(d *dump, ss ptrace.SpanSlice) {
			sess := d.add(ss, sp{trace: 1, name: "mcp.client.session", kind: ptrace.SpanKindClient, end: time.Hour})
			d.add(ss, callSpan(1, sess, time.Minute, time.Minute+time.Second, "s1"))
			d.add(ss, callSpan(1, sess, 2*time.Minute, 2*time.Minute+time.Second, "s1"))
		}, outside: 2, why: "2 tool call(s) sit under no execution root"},
		{name: "calls parented to a session span: an execution like the others holding none had its calls land elsewhere", vocab: sessionParented, build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: 10 * time.Second})
			sess := d.add(ss, sp{trace: 1, parent: r, name: "mcp.client.session", kind: ptrace.SpanKindClient, start: 100 * time.Millisecond, end: 10 * time.Second})
			d.add(ss, callSpan(1, sess, time.Second, 2*time.Second, "s1"))
			d.add(ss, callSpan(1, sess, 3*time.Second, 4*time.Second, "s1")) // the overlapping execution's, in time
			d.add(ss, sp{trace: 2, name: "request", start: 2 * time.Second, end: 5 * time.Second})
		}, without: 1, why: "1 execution(s) hold no tool call where others of the same root hold some"},
		{name: "calls parented to a session span: a trace of another root holding none is no execution", vocab: sessionParented, build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: 10 * time.Second})
			sess := d.add(ss, sp{trace: 1, parent: r, name: "mcp.client.session", kind: ptrace.SpanKindClient, start: 100 * time.Millisecond, end: 10 * time.Second})
			d.add(ss, callSpan(1, sess, time.Second, 2*time.Second, "s1"))
			d.add(ss, sp{trace: 2, name: "GET /health", start: 2 * time.Second, end: 5 * time.Second})
		}, measurable: true},
		{name: "calls parented to the caller: an execution that called no tool is just that", vocab: withSessionSpan, build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: 10 * time.Second})
			d.add(ss, callSpan(1, r, time.Second, 2*time.Second, "s1"))
			d.add(ss, sp{trace: 2, name: "request", start: 2 * time.Second, end: 5 * time.Second})
		}, measurable: true},
		{name: "a writer parenting request spans to nothing shows no execution", vocab: parentedToNothing, build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
			d.add(ss, callSpan(1, r, 0, 500*time.Millisecond, "s1"))
		}, why: "not parented to the caller's context"},
		{name: "an execution root: calls within it", root: root, build: func(d *dump, ss ptrace.SpanSlice) {
			top := d.add(ss, sp{trace: 1, name: "http", end: time.Hour})
			r := d.add(ss, sp{trace: 1, parent: top, name: "executor.execute", end: time.Second})
			d.add(ss, callSpan(1, r, 0, time.Second, "s1"))
		}, measurable: true},
		{name: "an execution root: a call under none", root: root, build: func(d *dump, ss ptrace.SpanSlice) {
			r := d.add(ss, sp{trace: 1, name: "executor.execute", end: time.Second})
			d.add(ss, callSpan(1, r, 0, time.Second, "s1"))
			d.add(ss, callSpan(2, 0, 0, time.Second, "s2"))
		}, outside: 1, why: "1 tool call(s) sit under no execution root (name=executor.execute)"},
		{name: "an execution root: a call outliving it though the trace's root is still open", root: root, build: func(d *dump, ss ptrace.SpanSlice) {
			top := d.add(ss, sp{trace: 1, name: "http", end: time.Hour})
			r := d.add(ss, sp{trace: 1, parent: top, name: "executor.execute", end: time.Second})
			d.add(ss, callSpan(1, r, 0, time.Second+time.Nanosecond, "s1"))
		}, outliving: 1, why: "root span ended"},
		{name: "a call whose root is missing has no end to outlive", build: func(d *dump, ss ptrace.SpanSlice) {
			d.add(ss, callSpan(1, 99, 0, time.Hour, "s1"))
		}, measurable: true},
		{name: "pool spans and no call tied to an execution", build: func(d *dump, ss ptrace.SpanSlice) {
			inv := d.add(ss, sp{trace: 1, name: spans.SpanInvoke, end: time.Second})
			d.add(ss, sp{trace: 1, parent: inv, name: spans.SpanAcquire, end: time.Second, attrs: []any{spans.AttrCacheHit, false}})
		}, why: "no tool call is tied to an execution, though the dump holds 2 pool span(s)"},
		{name: "no execution at all: nothing known of sessions per execution", build: func(*dump, ptrace.SpanSlice) {},
			why: "the dump holds no call span the vocabulary reads"},
		{name: "each trace an execution, a call that is its trace's root sits under none (server spans, no context)", build: func(d *dump, ss ptrace.SpanSlice) {
			d.add(ss, callSpan(1, 0, 0, time.Second, "s1"))
			r := d.add(ss, sp{trace: 2, name: "request", end: time.Second})
			d.add(ss, callSpan(2, r, 0, time.Second, "s1"))
		}, outside: 1, why: "each trace an execution, the call is its trace's root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			tc.build(d, d.resource(spans.ResourceServiceName, "gw"))
			cfg := rulefmt.Config{ExecutionRoot: tc.root}
			if tc.vocab != nil {
				cfg.Vocabulary = tc.vocab()
			}
			r := analyzeTD(t, cfg, d.td).Executions
			if r.Measurable != tc.measurable || r.CallsOutsideRoot != tc.outside || r.CallsOutlivingRoot != tc.outliving || r.ExecutionsWithoutCalls != tc.without {
				t.Errorf("measurable %v, %d outside, %d outliving, %d without a call; want %v, %d, %d, %d (why_not %q)",
					r.Measurable, r.CallsOutsideRoot, r.CallsOutlivingRoot, r.ExecutionsWithoutCalls, tc.measurable, tc.outside, tc.outliving, tc.without, r.WhyNot)
			}
			if (r.WhyNot == "") != tc.measurable || !strings.Contains(r.WhyNot, tc.why) {
				t.Errorf("why_not = %q, want it to say %q", r.WhyNot, tc.why)
			}
		})
	}
}

// TestSessionRulesAreIncompleteWhenExecutionsAreNotMeasurable pins that a
// rule judging sessions per execution is not judged, saying why, when
// calls cannot be tied to their execution: the built-in session rules, a
// user's distinct(mcp.session.id), and executions measures (no data),
// though some executions ran against a sessionless server and are left
// out. A rule on something else, a distinct count of another attribute
// among them, is observed as ever.
func TestSessionRulesAreIncompleteWhenExecutionsAreNotMeasurable(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
	sess := d.add(ss, sp{trace: 1, parent: r, name: "mcp.client.session", start: 0, end: time.Hour})
	d.add(ss, callSpan(1, sess, 0, time.Millisecond, "s1"))
	d.add(ss, callSpan(1, sess, time.Minute, time.Minute+time.Millisecond, "s2"))
	// A second execution against a sessionless server: the session rules
	// that skip it still judge the first, so they are still not judged.
	r2 := d.add(ss, sp{trace: 2, name: "request", start: 2 * time.Hour, end: 2*time.Hour + time.Second})
	d.add(ss, sp{trace: 2, parent: r2, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: 2 * time.Hour, end: 2*time.Hour + time.Millisecond,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrProtocolVersion, spans.ProtocolModern}})

	cfg := rulefmt.Config{}
	rules := append(rulefmt.BuiltinRules(cfg),
		rulefmt.Rule{ID: "user-distinct", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityDistinct, Attribute: spans.AttrSessionID, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}, AllowEmpty: true, Severity: rulefmt.SeverityError},
		// Every scope skipped as empty: still not judged, never a pass on
		// no scope.
		rulefmt.Rule{ID: "user-distinct-none", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: "no.such.call"}},
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityDistinct, Attribute: spans.AttrSessionID, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}, SkipEmpty: true, Severity: rulefmt.SeverityError},
		// A distinct count of another attribute reads no session.
		rulefmt.Rule{ID: "user-distinct-methods", Scope: rulefmt.Scope{Kind: rulefmt.ScopeTrace}, Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityDistinct, Attribute: spans.AttrMethodName, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 1}}}, Severity: rulefmt.SeverityError},
		rulefmt.Rule{ID: "user-calls", Scope: rulefmt.Scope{Kind: rulefmt.ScopeDump}, Select: &rulefmt.SpanSelector{Selector: rulefmt.Selector{Name: spans.SpanCallTool}},
			Expect: []rulefmt.Expectation{{Of: rulefmt.QuantityCount, Op: rulefmt.OpLe, Than: rulefmt.Operand{Number: 10}}}, Severity: rulefmt.SeverityError},
	)
	idx := index.New(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	idx.Add(d.td)
	a, err := AnalyzeRules(asDump(idx), cfg, rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Report.Executions.Measurable {
		t.Fatalf("executions measurable; want not (calls outlive their root)")
	}
	for i, obs := range a.Rules {
		id := rules[i].ID
		session := id == rulefmt.RuleOneSessionPerExecution || id == rulefmt.RuleServerKeptSessions || id == "user-distinct" || id == "user-distinct-none"
		allIncomplete := len(obs.Groups) == 1 && !obs.Groups[0].Complete && obs.Groups[0].Scopes >= 1
		if session && (!allIncomplete || !strings.Contains(obs.Unmeasurable, "executions not measurable")) {
			t.Errorf("%s: groups %+v, unmeasurable %q; want one incomplete group and why", id, obs.Groups, obs.Unmeasurable)
		}
		if !session && obs.Unmeasurable != "" {
			t.Errorf("%s reads no session yet was marked unmeasurable", id)
		}
	}
	if _, ok := report.MeasureValue(a.Report, "multi_session_executions"); ok {
		t.Errorf("multi_session_executions has data though executions are not measurable")
	}
	if _, ok := report.MeasureValue(a.Report, "acquires"); !ok {
		t.Errorf("acquires lost its data: only the executions measures have none")
	}

	// ObserveRules without a report measures the executions itself.
	obs, err := ObserveRules(asDump(idx), cfg, rules[:1], ObserveOptions{})
	if err != nil || obs[0].Unmeasurable == "" {
		t.Errorf("ObserveRules alone: %v, unmeasurable %q; want the same finding", err, obs[0].Unmeasurable)
	}
}

// TestAnOldBaselineReadsAsMeasurable pins that an executions section
// written before executions.measurable existed is taken as measurable.
func TestAnOldBaselineReadsAsMeasurable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{`{"root":"trace","count":3}`, true},
		{`{"root":"trace","count":3,"measurable":true}`, true},
		{`{"root":"trace","count":3,"measurable":false,"why_not":"x"}`, false},
	} {
		var r report.ExecutionsReport
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil || r.Measurable != tc.want || r.Count != 3 {
			t.Errorf("%s: %+v, %v; want measurable %v, count 3", tc.in, r, err, tc.want)
		}
	}
}

// TestReportsSayInWordsThatExecutionsAreNotMeasurable pins the words of
// the table and Markdown reports on a dump whose calls outlive their root,
// and that a measurable dump says nothing of the kind (the HTML report's
// words: analyze/htmlreport's TestHTMLReportSaysExecutionsAreNotMeasurable).
func TestReportsSayInWordsThatExecutionsAreNotMeasurable(t *testing.T) {
	build := func(callEnd time.Duration) *report.Report {
		d := newDump()
		ss := d.resource(spans.ResourceServiceName, "gw")
		r := d.add(ss, sp{trace: 1, name: "request", end: time.Second})
		d.add(ss, callSpan(1, r, 0, callEnd, "s1"))
		idx := index.New(rulefmt.Config{}.IndexOptions())
		idx.Add(d.td)
		rep, err := Analyze(asDump(idx), rulefmt.Config{Profile: rulefmt.ProfileAuto})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	for _, tc := range []struct {
		name    string
		callEnd time.Duration
		want    bool
	}{
		{"a call outliving its root", time.Second + time.Nanosecond, true},
		{"a call within its root", time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(tc.callEnd)
			for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
				if got := strings.Contains(renderString(t, r, format), "NOT MEASURABLE"); got != tc.want {
					t.Errorf("%s says NOT MEASURABLE: %v, want %v:\n%s", format, got, tc.want, renderString(t, r, format))
				}
			}
		})
	}
}

// withSessionSpan is our vocabulary with calls' sessions read from an
// enclosing mcp.client.session span, as OpenLLMetry parents them: the
// session span is the vocabulary's, so it is the vocabulary that says such
// a span is no execution.
func withSessionSpan() *rulefmt.Vocabulary {
	v, _ := rulefmt.BuiltinVocabulary(rulefmt.ProfileMcptrace)
	v.Name = "mcptrace-with-session-span"
	v.Session.Enclosing = &rulefmt.Selector{Name: "mcp.client.session"}
	return &v
}

// parentedToNothing is the mcptrace vocabulary declaring that its request
// spans are parented to nothing.
func parentedToNothing() *rulefmt.Vocabulary {
	v, _ := rulefmt.BuiltinVocabulary(rulefmt.ProfileMcptrace)
	v.Name = "mcptrace-parented-to-nothing"
	v.Capabilities.Parenting = rulefmt.ParentNone
	return &v
}

// sessionParented is withSessionSpan declaring, as OpenLLMetry does, that
// its request spans are parented to the session span.
func sessionParented() *rulefmt.Vocabulary {
	v := withSessionSpan()
	v.Name = "mcptrace-session-parented"
	v.Capabilities.Parenting = rulefmt.ParentSession
	return v
}
