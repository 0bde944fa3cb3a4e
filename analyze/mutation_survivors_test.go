package analyze

import (
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// The tests of this file each pin a behaviour a mutation run of analyze/
// found unpinned (TESTING.md, "Stop 31: analyze").

// TestSessionSplitsLoseOnlyASessionExpiredBeforeAnother pins when a session
// counts as forgotten by the server: it failed as expired and a later call
// ran on another session. An expiry on the last call, or one followed only
// by calls on the same session (the server took it back), loses nothing.
func TestSessionSplitsLoseOnlyASessionExpiredBeforeAnother(t *testing.T) {
	type c = sessionCall
	for _, tc := range []struct {
		name         string
		calls        []sessionCall
		pooled, lost int
	}{
		{"no calls", nil, 0, 0},
		{"one session, no expiry", []c{{1, 7, false}, {2, 7, false}}, 1, 0},
		{"the last call expired: no later call to move on", []c{{1, 7, false}, {2, 7, true}}, 1, 0},
		{"a lone call expired", []c{{1, 7, true}}, 1, 0},
		{"expired, then the same session again", []c{{1, 7, true}, {2, 7, false}}, 1, 0},
		{"expired, then another session: lost", []c{{1, 7, true}, {2, 8, false}}, 1, 1},
		{"expired, the same session, then another: lost", []c{{1, 7, true}, {2, 7, false}, {3, 8, false}}, 1, 1},
		{"two sessions, neither expired", []c{{1, 7, false}, {2, 8, false}}, 2, 0},
		{"back to the first after another: only the expired one lost", []c{{1, 7, false}, {2, 8, true}, {3, 7, false}}, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pooled, lost := splitSessions(tc.calls)
			if pooled != tc.pooled || lost != tc.lost {
				t.Errorf("splitSessions(%+v) = %d pooled, %d lost; want %d, %d", tc.calls, pooled, lost, tc.pooled, tc.lost)
			}
		})
	}
}

// TestSharedReportNamesTheSameMissesAsObservingAlone pins the shortcut the
// report's miss counts allow: AnalyzeDumps hands the rules the report, and
// skips attributing the acquires again only when every miss is a cold
// start. A dump with other misses names the same misses, by the same
// spans, as an observation without the report.
func TestSharedReportNamesTheSameMissesAsObservingAlone(t *testing.T) {
	rules := rulefmt.BuiltinRules(rulefmt.Config{})
	for _, tc := range []struct {
		name                    string
		td                      ptrace.Traces
		unexplained, aboveFloor int
	}{
		{"per-call dial: every miss unexplained", tracegen.PerCallDial(), 5, 5},
		{"one unexplained miss", tracegen.UnexplainedMiss(), 1, 1},
		{"cold starts only: nothing to name", tracegen.ProdColdStarts(), 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			alone := observeByID(t, rules, 20, tc.td)[rulefmt.RuleNoUnexplainedMisses]
			path := writeJSONLines(t, "dump.jsonl", tc.td)
			run, err := AnalyzeDumps(context.Background(), []string{path}, rulefmt.Config{}, RunOptions{Rules: rules, Observe: ObserveOptions{MaxExamples: 20}})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(rules, func(r rulefmt.Rule) bool { return r.ID == rulefmt.RuleNoUnexplainedMisses })
			shared := run.Analysis.Rules[i]
			if len(alone.UnexplainedMisses) != tc.unexplained || len(alone.AboveFloorMisses) != tc.aboveFloor {
				t.Fatalf("observed alone: %d unexplained, %d above the floor; want %d, %d", len(alone.UnexplainedMisses), len(alone.AboveFloorMisses), tc.unexplained, tc.aboveFloor)
			}
			if !slices.Equal(shared.UnexplainedMisses, alone.UnexplainedMisses) || !slices.Equal(shared.AboveFloorMisses, alone.AboveFloorMisses) {
				t.Errorf("with the report shared: unexplained %v, above the floor %v; observed alone: %v, %v",
					shared.UnexplainedMisses, shared.AboveFloorMisses, alone.UnexplainedMisses, alone.AboveFloorMisses)
			}
		})
	}
}

// TestProgressIsToldForEveryReaderPath pins that the progress callback
// hears every span read, by Load and by a stream engine's Feed, from the
// projection decoders (OTLP JSON lines, protobuf) and from the formats
// read through pdata (Jaeger, Tempo), which reach the sinks by another
// method.
func TestProgressIsToldForEveryReaderPath(t *testing.T) {
	files := []string{"acquire-on-miss.otlp.jsonl", "acquire-on-miss.otlp.pb", "acquire-on-miss.jaeger.json", "acquire-on-miss.tempo.json"}
	readers := []struct {
		name string
		read func(path string, lo LoadOptions) ([]Input, error)
	}{
		{"Load", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := Load(context.Background(), []string{path}, lo)
			return inputs, err
		}},
		{"a stream's Feed", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := AnalyzeStream(context.Background(), []string{path}, rulefmt.Config{}, lo, EngineOptions{Window: time.Hour})
			return inputs, err
		}},
		{"a speculative Feed", func(path string, lo LoadOptions) ([]Input, error) {
			_, inputs, err := AnalyzeStream(context.Background(), []string{path}, rulefmt.Config{}, lo, EngineOptions{})
			return inputs, err
		}},
	}
	for _, f := range files {
		for _, rd := range readers {
			t.Run(f+" by "+rd.name, func(t *testing.T) {
				calls, last := 0, 0
				inputs, err := rd.read(tracesDir+"/"+f, LoadOptions{Progress: func(_ *Input, spansRead int) {
					calls++
					if spansRead < last {
						t.Errorf("progress went back from %d to %d spans", last, spansRead)
					}
					last = spansRead
				}})
				if err != nil {
					t.Fatal(err)
				}
				if len(inputs) != 1 || inputs[0].Spans == 0 {
					t.Fatalf("inputs = %+v, want one holding spans", inputs)
				}
				if calls == 0 || last != inputs[0].Spans {
					t.Errorf("progress: %d calls ending at %d spans, want some ending at the %d read", calls, last, inputs[0].Spans)
				}
			})
		}
	}
}

// TestOurVocabularyWhateverSpanComesFirst pins the recognition of our
// vocabulary in a dump whose acquires all missed (no cache_hit=true to
// prove it): every invocation has its acquire child, so none is bare and
// the dump is ours, not acquire-on-miss's, whether the dump's first span
// is an invocation (span 0 is a parent) or an acquire (its name is the
// first interned). The profile is auto: the dump's evidence decides.
func TestOurVocabularyWhateverSpanComesFirst(t *testing.T) {
	for _, tc := range []struct {
		name         string
		acquireFirst bool
	}{
		{"an invocation first", false},
		{"an acquire first", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			for tr := uint64(1); tr <= 3; tr++ {
				at := time.Duration(tr) * time.Second
				inv, acq := 10*tr, 10*tr+1
				invoke := sp{trace: tr, id: inv, name: spans.SpanInvoke, start: at, end: at + 100*time.Millisecond,
					attrs: []any{spans.AttrCacheKey, "k"}}
				acquire := sp{trace: tr, id: acq, parent: inv, name: spans.SpanAcquire, start: at, end: at + 10*time.Millisecond,
					attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false, spans.AttrMissReason, spans.MissCold}}
				if tc.acquireFirst {
					d.add(ss, acquire)
					d.add(ss, invoke)
				} else {
					d.add(ss, invoke)
					d.add(ss, acquire)
				}
				d.add(ss, sp{trace: tr, parent: inv, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: at + 10*time.Millisecond, end: at + 100*time.Millisecond,
					attrs: []any{spans.AttrMethodName, spans.MethodToolsCall}})
			}
			r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
			if r.Settings.Vocabulary != report.VocabMcptrace || r.Pool.Acquires != 3 || r.Pool.Misses != 3 {
				t.Errorf("vocabulary %q with %d acquires, %d misses; want %q, 3, 3", r.Settings.Vocabulary, r.Pool.Acquires, r.Pool.Misses, report.VocabMcptrace)
			}
		})
	}
}

// TestSpeculativeRunFinalizesRootedTracesOnlyInBatches pins when a
// speculative run measures the traces whose root has arrived: once
// rootedBatch of them are open, not after every batch. A child arriving
// just after its root, before the batch is full, joins its trace and the
// run is not spoiled (no second read); once the batch has filled and been
// measured, the same child spoils it.
func TestSpeculativeRunFinalizesRootedTracesOnlyInBatches(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	root1 := arrival{trace: 1, id: 1, start: 0, end: 3}.traces()
	root2 := arrival{trace: 2, id: 5, start: 1, end: 2}.traces()
	child1 := arrival{trace: 1, id: 2, parent: 1, start: 1, end: 2}.traces()
	for _, tc := range []struct {
		name    string
		batch   int
		lines   []ptrace.Traces
		spoiled bool
	}{
		{"a root then its child, the batch of 2 not full", 2, []ptrace.Traces{root1, child1}, false},
		{"a root, its child, another root", 2, []ptrace.Traces{root1, child1, root2}, false},
		{"two roots fill the batch of 2, then the first's child", 2, []ptrace.Traces{root1, root2, child1}, true},
		{"a batch of 1: a root then its child", 1, []ptrace.Traces{root1, child1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rootedBatch = tc.batch
			path := writeJSONLines(t, "dump.jsonl", tc.lines...)
			var reread error
			r, _, err := AnalyzeStream(context.Background(), []string{path}, rulefmt.Config{}, LoadOptions{Reread: func(err error) { reread = err }}, EngineOptions{Shards: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := errors.Is(reread, errSpoiled); got != tc.spoiled {
				t.Errorf("spoiled (read again): %v (Reread told %v), want %v", got, reread, tc.spoiled)
			}
			if r.Spans != len(tc.lines) {
				t.Errorf("the report holds %d spans, want %d", r.Spans, len(tc.lines))
			}
		})
	}
}

// TestSettingsTextReadsBackOnlyWhatItWrote pins settingsText's inverse:
// each set of settings values reads back as written, and a text it did not
// write (an attribute place past the known ones, or below '0') is refused,
// not read out of range.
func TestSettingsTextReadsBackOnlyWhatItWrote(t *testing.T) {
	strs := []string{"30s", "4", "peak", "", "1m:2"}
	none := [len(spans.PoolSettingsAttrs)]int32{-1, -1, -1, -1, -1}
	for _, tc := range []struct {
		name string
		vals [len(spans.PoolSettingsAttrs)]int32
	}{
		{"none", none},
		{"the first alone", [len(spans.PoolSettingsAttrs)]int32{0, -1, -1, -1, -1}},
		{"the last alone, a colon in its value", [len(spans.PoolSettingsAttrs)]int32{-1, -1, -1, -1, 4}},
		{"every one, an empty value among them", [len(spans.PoolSettingsAttrs)]int32{0, 1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := PoolSettings{}
			for i, v := range tc.vals {
				if v >= 0 {
					want[spans.PoolSettingsAttrs[i]] = strs[v]
				}
			}
			got, ok := parseSettingsText(settingsText(tc.vals, strs))
			if !ok || !maps.Equal(got, want) {
				t.Errorf("read back %v (ok %v), want %v", got, ok, want)
			}
		})
	}
	past := string(rune('0' + len(spans.PoolSettingsAttrs)))
	for _, text := range []string{past + "1:x", "/1:x", "01:x" + past + "1:y", "0", "05:x", "0x:y"} {
		if got, ok := parseSettingsText(text); ok || got != nil {
			t.Errorf("parseSettingsText(%q) = %v, %v; want it refused", text, got, ok)
		}
	}
}

// TestRevisionIsSessionlessByItsNameOrByItsCalls pins by_protocol's
// sessionless flag: a revision from SessionlessProtocol on is sessionless
// by its name whatever its calls carry (a session id, or no call at all);
// an earlier named revision is sessionless only when it has calls and none
// carried a session id; the unnamed group never is.
func TestRevisionIsSessionlessByItsNameOrByItsCalls(t *testing.T) {
	for _, tc := range []struct {
		name, revision string
		calls          bool
		session        string
		want           bool
	}{
		{"the sessionless revision, its calls with a session id", spans.ProtocolModern, true, "s1", true},
		{"the sessionless revision, no call", spans.ProtocolModern, false, "", true},
		{"the sessionless revision, its calls without one", spans.ProtocolModern, true, "", true},
		{"an earlier revision, its calls with a session id", spans.ProtocolLegacy, true, "s1", false},
		{"an earlier revision, its calls without one", spans.ProtocolLegacy, true, "", true},
		{"an earlier revision, no call", spans.ProtocolLegacy, false, "", false},
		{"no revision, calls without a session id", "", true, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			for tr := uint64(1); tr <= 2; tr++ {
				at := time.Duration(tr) * time.Second
				var ver []any
				if tc.revision != "" {
					ver = []any{spans.AttrProtocolVersion, tc.revision}
				}
				inv := d.add(ss, sp{trace: tr, name: spans.SpanInvoke, start: at, end: at + 100*time.Millisecond, attrs: []any{spans.AttrCacheKey, "k"}})
				d.add(ss, sp{trace: tr, parent: inv, name: spans.SpanAcquire, start: at, end: at + 10*time.Millisecond,
					attrs: append([]any{spans.AttrCacheKey, "k", spans.AttrCacheHit, tr > 1}, ver...)})
				if tc.calls {
					attrs := append([]any{spans.AttrMethodName, spans.MethodToolsCall}, ver...)
					if tc.session != "" {
						attrs = append(attrs, spans.AttrSessionID, tc.session)
					}
					d.add(ss, sp{trace: tr, parent: inv, name: spans.SpanCallTool, kind: ptrace.SpanKindClient, start: at + 10*time.Millisecond, end: at + 100*time.Millisecond, attrs: attrs})
				}
			}
			r := analyzeTD(t, rulefmt.Config{}, d.td)
			if len(r.ByProtocol) != 1 || r.ByProtocol[0].ProtocolVersion != tc.revision || r.ByProtocol[0].Acquires != 2 {
				t.Fatalf("by_protocol = %+v, want one group of revision %q with 2 acquires", r.ByProtocol, tc.revision)
			}
			if got := r.ByProtocol[0].Sessionless; got != tc.want {
				t.Errorf("sessionless = %v, want %v (%+v)", got, tc.want, r.ByProtocol[0])
			}
		})
	}
}

// TestTraceLogHasTheTracesItHoldsInMemory pins has, which a speculative
// shard asks of every new trace so that a child exported just after its
// root's batch spilled is caught at once: it answers yes for the traces
// added since the last spill and for those of the spill before (the two
// tables memory holds), no for those only in the file (repeats finds them
// at the end) and for traces never added.
func TestTraceLogHasTheTracesItHoldsInMemory(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 8
	t.Setenv("TMPDIR", t.TempDir())
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x10c)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	var l traceLog
	defer l.close()
	for i := range uint64(20) { // spills after 8 and 16: 0-7 in the file, 8-15 the previous table, 16-19 recent
		l.add(id(i))
	}
	if len(l.runs) != 2 {
		t.Fatalf("%d runs spilled, want 2", len(l.runs))
	}
	for _, tc := range []struct {
		name     string
		from, to uint64
		want     bool
	}{
		{"only in the file", 0, 7, false},
		{"the spill before: the previous table", 8, 15, true},
		{"since the last spill", 16, 19, true},
		{"never added", 20, 25, false},
	} {
		for i := tc.from; i <= tc.to; i++ {
			if got := l.has(id(i)); got != tc.want {
				t.Errorf("%s: has(trace %d) = %v, want %v", tc.name, i, got, tc.want)
			}
		}
	}
	if l.repeats() {
		t.Error("repeats says yes on a log without a repeat")
	}
}

// TestAnAcquireOrHandshakeIsNoInvocationOfItsOwn pins acquire-on-miss's
// implied hits under a vocabulary whose invocation selector also matches
// its acquire and handshake spans (every gw.* span): only a span that is
// an invocation and neither an acquire nor a handshake implies a hit by
// having no acquire child. The lease with a miss and the one without an
// acquire make two acquires, one hit; the acquire and the dial under the
// first are not invocations that reused a session.
func TestAnAcquireOrHandshakeIsNoInvocationOfItsOwn(t *testing.T) {
	cf, err := rulefmt.ParseConfig("mcptrace.yaml", []byte(`
vocabulary:
  name: overlapping-gateway
  calls: gw.tool.call
  invocations: {name_regex: '^gw\.(lease|pool\.get|dial)$'}
  acquires: {name: gw.pool.get}
  handshakes: [gw.dial]
  acquire_on_miss: true
`+gatewayAttributes))
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, "gw")
	lease := d.add(ss, sp{trace: 1, name: "gw.lease", start: 0, end: time.Second, attrs: []any{"gw.key", "k"}})
	get := d.add(ss, sp{trace: 1, parent: lease, name: "gw.pool.get", start: 0, end: 100 * time.Millisecond,
		attrs: []any{"gw.key", "k", "gw.reused", false, "gw.why", spans.MissCold}})
	d.add(ss, sp{trace: 1, parent: get, name: "gw.dial", kind: ptrace.SpanKindClient, start: 0, end: 100 * time.Millisecond, attrs: []any{"gw.session", "s1"}})
	d.add(ss, sp{trace: 1, parent: lease, name: "gw.tool.call", kind: ptrace.SpanKindClient, start: 100 * time.Millisecond, end: time.Second, attrs: []any{"gw.session", "s1"}})
	reuse := d.add(ss, sp{trace: 2, name: "gw.lease", start: 2 * time.Second, end: 3 * time.Second, attrs: []any{"gw.key", "k"}})
	d.add(ss, sp{trace: 2, parent: reuse, name: "gw.tool.call", kind: ptrace.SpanKindClient, start: 2 * time.Second, end: 3 * time.Second, attrs: []any{"gw.session", "s1"}})
	r := analyzeTD(t, rulefmt.Config{Vocabulary: cf.Vocabulary}, d.td)
	if r.Pool.Acquires != 2 || r.Pool.Hits != 1 || r.Pool.Misses != 1 {
		t.Errorf("acquires %d, hits %d, misses %d; want 2, 1, 1 (the miss and one implied hit)", r.Pool.Acquires, r.Pool.Hits, r.Pool.Misses)
	}
}
