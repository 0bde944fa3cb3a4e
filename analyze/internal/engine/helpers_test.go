package engine

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// t0 is the base time of hand-built test dumps (dumptest.T0).
var t0 = dumptest.T0

// scenarioConfig is the configuration a generated scenario is analyzed
// with (dumptest.ScenarioConfig).
var scenarioConfig = dumptest.ScenarioConfig

// dump is analyze's short handle on a dumptest.Builder: the package's many
// hand-built dumps read as d.add(ss, sp{...}) and d.td, and the building
// itself is dumptest's, shared with the packages above analyze (its
// NextID, d.b.NextID, is the next free span id, which a test may read or
// move).
type dump struct {
	td ptrace.Traces
	b  *dumptest.Builder
}

func newDump() *dump {
	b := dumptest.New()
	return &dump{td: b.Traces(), b: b}
}

// resource starts a resource with the given attribute pairs and returns its
// span slice.
func (d *dump) resource(kv ...string) ptrace.SpanSlice { return d.b.Resource(kv...) }

// sp describes one span (a dumptest.Span in analyze's short field names);
// attrs are key, value pairs (string, bool, int or int64 values).
type sp struct {
	trace, id, parent uint64
	name              string
	start, end        time.Duration // offsets from t0
	kind              ptrace.SpanKind
	status            ptrace.StatusCode
	attrs             []any
}

// add appends s to ss; a zero id gets the next free one. It returns the id.
func (d *dump) add(ss ptrace.SpanSlice, s sp) uint64 {
	return d.b.Add(ss, dumptest.Span{Trace: s.trace, ID: s.id, Parent: s.parent, Name: s.name,
		Start: s.start, End: s.end, Kind: s.kind, Status: s.status, Attrs: s.attrs})
}

// lease describes one pooled invocation for invocation(): its acquire(s)
// and call.
type lease struct {
	trace      uint64
	parent     uint64 // the invoke span's parent, 0 for a root
	start, end time.Duration
	acquireAt  time.Duration // when the acquire starts, if not at start (a skewed clock)
	key        string
	hit        any    // true, false, or nil to omit plugin.mcp.cache_hit
	handshake  bool   // a handshake child under the acquire
	reason     string // plugin.mcp.miss_reason
	attempt    int    // plugin.mcp.attempt, 0 omits it
	session    string // mcp.session.id on the call
	callErr    string // error.type of a failed call
	noAcquire  bool   // acquire-on-miss: no acquire span at all
	invokeKV   []any  // extra attributes on the invoke span
	acquireKV  []any  // extra attributes on the acquire span
}

// parseSel parses a selector of the rules' string form, failing the test
// on a mistake.
func parseSel(t testing.TB, s string) rulefmt.Selector {
	t.Helper()
	x, err := rulefmt.ParseSelectorString(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// invocation emits invoke → acquire (→ handshake) and call_tool spans for l
// into ss: the acquire takes the first tenth of the invocation, the call the
// rest.
func (d *dump) invocation(ss ptrace.SpanSlice, l lease) {
	inv := d.add(ss, sp{trace: l.trace, parent: l.parent, name: spans.SpanInvoke, start: l.start, end: l.end,
		attrs: append([]any{spans.AttrCacheKey, l.key}, l.invokeKV...)})
	mid := l.start + (l.end-l.start)/10
	acqStart, acqEnd := l.start, mid
	if l.acquireAt != 0 {
		acqStart, acqEnd = l.acquireAt, l.acquireAt+(mid-l.start)
	}
	if !l.noAcquire {
		var attrs []any
		if l.key != "" {
			attrs = append(attrs, spans.AttrCacheKey, l.key)
		}
		if l.hit != nil {
			attrs = append(attrs, spans.AttrCacheHit, l.hit)
		}
		if l.reason != "" {
			attrs = append(attrs, spans.AttrMissReason, l.reason)
		}
		if l.attempt != 0 {
			attrs = append(attrs, spans.AttrAttempt, l.attempt)
		}
		attrs = append(attrs, l.acquireKV...)
		acq := d.add(ss, sp{trace: l.trace, parent: inv, name: spans.SpanAcquire, start: acqStart, end: acqEnd, attrs: attrs})
		if l.handshake {
			d.add(ss, sp{trace: l.trace, parent: acq, name: spans.SpanHandshake, kind: ptrace.SpanKindClient, start: acqStart, end: acqEnd,
				attrs: []any{spans.AttrSessionID, l.session}})
		}
	}
	call := sp{trace: l.trace, parent: inv, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: mid, end: l.end,
		attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}}
	if l.session != "" {
		call.attrs = append(call.attrs, spans.AttrSessionID, l.session)
	}
	if l.callErr != "" {
		call.status = ptrace.StatusCodeError
		call.attrs = append(call.attrs, spans.AttrErrorType, l.callErr)
	}
	d.add(ss, call)
}

// analyzeTD indexes td and analyzes it with cfg, failing the test on error.
func analyzeTD(t testing.TB, cfg rulefmt.Config, tds ...ptrace.Traces) *report.Report {
	t.Helper()
	idx := index.New(cfg.IndexOptions())
	for _, td := range tds {
		idx.Add(td)
	}
	r, err := Analyze(asDump(idx), cfg)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

// near reports whether a non-nil ratio equals want to 4 decimals.
func near(got *float64, want float64) bool {
	if got == nil {
		return false
	}
	d := *got - want
	return d < 5e-5 && d > -5e-5
}

// asDump hands an index built by a test to the exported API, as Load and
// NewDump hand theirs to callers outside analyze.
func asDump(x *index.Index) *Dump { return &Dump{x: x} }

// observeIn indexes td for cfg and rules and observes the rules without a
// report, failing t on an error.
func observeIn(t *testing.T, cfg rulefmt.Config, rules []rulefmt.Rule, td ptrace.Traces) []report.RuleObservation {
	t.Helper()
	x := NewDump(rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules)))
	x.Add(td)
	obs, err := ObserveRules(x, cfg, rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// observeUnkept observes rules under cfg over one invocation holding one
// call on session s-1, indexed with the default configuration's options
// alone: no attribute a rule or a user's vocabulary adds (tenant.id) is
// kept. It returns the observation's error.
func observeUnkept(t *testing.T, cfg rulefmt.Config, rules []rulefmt.Rule) error {
	t.Helper()
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw-1")
	inv := d.add(ss, sp{trace: 1, name: spans.SpanInvoke, end: time.Minute})
	d.add(ss, callSpan(1, inv, time.Second, 2*time.Second, "s-1"))
	x := NewDump(rulefmt.Config{}.IndexOptions())
	x.Add(d.td)
	obs, err := ObserveRules(x, cfg, rules, ObserveOptions{})
	if err == nil {
		t.Logf("observations without an error: %+v", obs)
	}
	return err
}
