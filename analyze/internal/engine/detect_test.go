package engine

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// detectSpans builds one resource's spans for a detection row.
type detectSpans func(d *dump, ss ptrace.SpanSlice)

// pooled adds n invocations, each with an acquire child (hit as given,
// nil omitting cache_hit) and a call.
func pooled(n int, hit any) detectSpans {
	return func(d *dump, ss ptrace.SpanSlice) {
		for k := range n {
			tr := d.b.NextID + 1000
			d.invocation(ss, lease{trace: tr, start: time.Duration(k) * time.Second, end: time.Duration(k)*time.Second + 100*time.Millisecond,
				key: "k", hit: hit, handshake: hit == false, session: "s1"})
		}
	}
}

// bare adds n invocations without an acquire (acquire-on-miss hits).
func bare(n int) detectSpans {
	return func(d *dump, ss ptrace.SpanSlice) {
		for k := range n {
			d.invocation(ss, lease{trace: d.b.NextID + 2000, start: time.Duration(k) * time.Second, end: time.Duration(k)*time.Second + time.Millisecond,
				key: "k", noAcquire: true, session: "s1"})
		}
	}
}

// named adds n root spans of one name, kind and attributes.
func named(n int, name string, kind ptrace.SpanKind, attrs ...any) detectSpans {
	return func(d *dump, ss ptrace.SpanSlice) {
		for range n {
			d.add(ss, sp{trace: d.b.NextID + 3000, name: name, kind: kind, end: time.Millisecond, attrs: attrs})
		}
	}
}

func both(fs ...detectSpans) detectSpans {
	return func(d *dump, ss ptrace.SpanSlice) {
		for _, f := range fs {
			f(d, ss)
		}
	}
}

// TestDetectionReadsEachSignature pins which vocabulary a resource's spans
// show, with the ties and the order between signatures.
func TestDetectionReadsEachSignature(t *testing.T) {
	client, server, internal := ptrace.SpanKindClient, ptrace.SpanKindServer, ptrace.SpanKindInternal
	semconvCall := named(1, "tools/call search", client, spans.AttrMethodName, spans.MethodToolsCall)
	for _, tc := range []struct {
		name  string
		spans detectSpans
		want  string
	}{
		{"acquires with cache_hit=true are ours", pooled(3, true), report.VocabMcptrace},
		{"invocations each with an acquire child, no cache_hit, are ours", pooled(2, nil), report.VocabMcptrace},
		{"only missing acquires (cache_hit=false), each under its invocation, are ours", pooled(2, false), report.VocabMcptrace},
		{"some invocations without an acquire and no hit written are acquire-on-miss", both(pooled(2, false), bare(1)), report.VocabAcquireOnMiss},
		{"a cache_hit=true acquire beside bare invocations is ours: hits are written", both(pooled(1, true), bare(3)), report.VocabMcptrace},
		{"conventions' client spans named {method} {target}", named(2, "tools/call search", client, spans.AttrMethodName, spans.MethodToolsCall), report.VocabSemconv},
		{"conventions' server spans", named(2, "tools/call search", server, spans.AttrMethodName, spans.MethodToolsCall), report.VocabSemconv},
		{"a conventions' span named by its method alone", named(1, "initialize", client, spans.AttrMethodName, "initialize"), report.VocabSemconv},
		{"an internal span named and attributed as the conventions say (Shinzo's server spans) is theirs", named(2, "tools/call search", internal, spans.AttrMethodName, spans.MethodToolsCall), report.VocabSemconv},
		{"a name that is not {method} {target} is not the conventions'", named(2, "tools/callsearch", client, spans.AttrMethodName, spans.MethodToolsCall), report.VocabNone},
		{"tools/call names without mcp.method.name are not recognised", named(2, "tools/call search", client), report.VocabNone},
		{"our acquires with conventions' call spans (SemconvCallSpans) are ours, even outnumbered", both(pooled(1, true), named(5, "tools/call search", client, spans.AttrMethodName, spans.MethodToolsCall)), report.VocabMcptrace},
		{"OpenLLMetry's session span", named(1, "mcp.client.session", client), report.VocabOpenLLMetry},
		{"OpenLLMetry's tool and request spans", both(named(2, "search.tool", client), named(1, "tools/list.mcp", server)), report.VocabOpenLLMetry},
		{"an internal x.tool span (an SDK's tool decorator) is not OpenLLMetry's", named(3, "search.tool", internal), report.VocabNone},
		{"equal counts of conventions' and OpenLLMetry spans go to the conventions", both(named(2, "search.tool", client), semconvCall, semconvCall), report.VocabSemconv},
		{"one more OpenLLMetry span than conventions' goes to OpenLLMetry", both(named(3, "search.tool", client), semconvCall, semconvCall), report.VocabOpenLLMetry},
		{"no MCP span at all", named(4, "GET /health", server), report.VocabNone},
		{"the conventions' spans Sentry's MCP wrapper marked (sentry.origin) are Sentry's", named(2, "tools/call search", internal, spans.AttrMethodName, spans.MethodToolsCall, rulefmt.SentryOriginAttr, rulefmt.SentryMCPServerOrigin), report.VocabSentry},
		{"a Sentry MCP notification span alone is Sentry's", named(1, "notifications/initialized", internal, spans.AttrMethodName, "notifications/initialized", rulefmt.SentryOriginAttr, rulefmt.SentryMCPNotificationOrigin), report.VocabSentry},
		{"one Sentry-marked span makes the resource's unmarked conventions' spans Sentry's", both(semconvCall, semconvCall, named(1, "initialize", internal, spans.AttrMethodName, "initialize", rulefmt.SentryOriginAttr, rulefmt.SentryMCPServerOrigin)), report.VocabSentry},
		{"another sentry.origin (its HTTP spans') on the conventions' spans is not Sentry's MCP", named(2, "tools/call search", internal, spans.AttrMethodName, spans.MethodToolsCall, rulefmt.SentryOriginAttr, "auto.http.otel.http"), report.VocabSemconv},
		{"Mastra's MCP tool call spans (mastra.span.type=mcp_tool_call)", named(2, "execute_tool corpus_search", client, rulefmt.MastraSpanTypeAttr, rulefmt.MastraMCPToolCall), report.VocabMastra},
		{"more conventions' spans than Mastra's go to the conventions", both(named(1, "execute_tool corpus_search", client, rulefmt.MastraSpanTypeAttr, rulefmt.MastraMCPToolCall), semconvCall, semconvCall), report.VocabSemconv},
		{"more Mastra spans than conventions' go to Mastra", both(named(2, "execute_tool corpus_search", client, rulefmt.MastraSpanTypeAttr, rulefmt.MastraMCPToolCall), semconvCall), report.VocabMastra},
		{"Mastra's other tool calls are not MCP", named(2, "execute_tool search", client, rulefmt.MastraSpanTypeAttr, "tool_call"), report.VocabNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			tc.spans(d, d.resource(spans.ResourceServiceName, "svc"))
			idx := index.New(rulefmt.Config{Profile: rulefmt.ProfileAuto}.IndexOptions()) // what detection runs on
			idx.Add(d.td)
			det := vocab.Detect(idx, nil)
			got := det.Decisions(rulefmt.ProfileAuto, nil)
			if len(got) != 1 || got["service.name=svc"] != tc.want {
				t.Errorf("decisions = %v, want service.name=svc: %s", got, tc.want)
			}
		})
	}
}

// fleet is a dump of three processes: a gateway with our pool, a server
// under the conventions, a database with no MCP span.
func fleet() ptrace.Traces {
	d := newDump()
	pooled(2, true)(d, d.resource(spans.ResourceServiceName, "gateway", spans.ResourceServiceInstanceID, "gw-1"))
	named(3, "tools/call search", ptrace.SpanKindServer, spans.AttrMethodName, spans.MethodToolsCall)(d, d.resource(spans.ResourceServiceName, "mcp-server"))
	named(4, "SELECT", ptrace.SpanKindClient)(d, d.resource(spans.ResourceServiceName, "db"))
	return d.td
}

// TestReportSaysWhatEachResourceWasReadWith pins the report's account of
// detection: the vocabulary per resource, "mixed" when they differ, one
// name when they agree, and the spans recognised and not.
func TestReportSaysWhatEachResourceWasReadWith(t *testing.T) {
	r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, fleet())
	if r.Settings.Vocabulary != report.VocabMixed {
		t.Errorf("settings.vocabulary = %q, want %q", r.Settings.Vocabulary, report.VocabMixed)
	}
	want := report.RecognitionReport{
		RecognisedSpans: 6 + 3, UnrecognisedSpans: 4,
		Vocabularies: []report.VocabularyUse{
			{Vocabulary: report.VocabMcptrace, Resources: 1, Spans: 6, RecognisedSpans: 6, ExampleResources: []string{"service.instance.id=gw-1 service.name=gateway"}},
			{Vocabulary: report.VocabNone, Resources: 1, Spans: 4, RecognisedSpans: 0, ExampleResources: []string{"service.name=db"}},
			{Vocabulary: report.VocabSemconv, Resources: 1, Spans: 3, RecognisedSpans: 3, ExampleResources: []string{"service.name=mcp-server"}},
		},
		UnrecognisedNames: []report.NameCount{{Name: "SELECT", Spans: 4}},
	}
	if diff := cmp.Diff(want, r.Recognition); diff != "" {
		t.Errorf("recognition (-want +got):\n%s", diff)
	}
	if r.Pool.Acquires != 2 {
		t.Errorf("pool acquires = %d, want the gateway's 2 (the mixed dump is read with our vocabulary)", r.Pool.Acquires)
	}

	d := newDump()
	named(2, "tools/call search", ptrace.SpanKindServer, spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s")(d, d.resource(spans.ResourceServiceName, "a"))
	named(1, "tools/call search", ptrace.SpanKindClient, spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s")(d, d.resource(spans.ResourceServiceName, "b"))
	r = analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
	if r.Settings.Vocabulary != report.VocabSemconv || r.Settings.Profile != rulefmt.ProfileAuto {
		t.Errorf("settings = %+v, want profile auto, vocabulary semconv", r.Settings)
	}
	if r.Pool.Acquires != 3 {
		t.Errorf("pool acquires = %d, want the 3 calls read under semconv", r.Pool.Acquires)
	}

	// Mixed, the measures read our tier first, however many spans the
	// conventions' resources hold.
	d = newDump()
	pooled(1, true)(d, d.resource(spans.ResourceServiceName, "gateway"))
	named(10, "tools/call search", ptrace.SpanKindServer, spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s")(d, d.resource(spans.ResourceServiceName, "mcp-server"))
	r = analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
	if r.Settings.Vocabulary != report.VocabMixed || r.Pool.Acquires != 1 || r.Settings.PoolSpanNames[0] != spans.SpanInvoke {
		t.Errorf("mixed, conventions' spans outnumbering ours: vocabulary %q, %d acquires, pool span names %v; want mixed, the gateway's 1 acquire, ours",
			r.Settings.Vocabulary, r.Pool.Acquires, r.Settings.PoolSpanNames)
	}

	// An explicit profile reads every resource with its vocabulary.
	r = analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileSemconv}, fleet())
	if r.Settings.Vocabulary != report.VocabSemconv || r.Recognition.RecognisedSpans != 3 {
		t.Errorf("under --profile semconv: vocabulary %q, %d recognised; want semconv, 3", r.Settings.Vocabulary, r.Recognition.RecognisedSpans)
	}
}

// TestNothingRecognisedNamesTheTopTenAndWhatWouldReadThem pins the message
// of a dump no vocabulary reads: the ten most frequent names, escaped, and
// the flag that would read names like the conventions'.
func TestNothingRecognisedNamesTheTopTenAndWhatWouldReadThem(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "svc")
	for k := range 12 {
		named(k+1, "op-"+string(rune('a'+k)), ptrace.SpanKindInternal)(d, ss)
	}
	named(20, "evil\x1b[31m", ptrace.SpanKindInternal)(d, ss)
	named(15, strings.Repeat("x", 1<<20), ptrace.SpanKindInternal)(d, d.resource(spans.ResourceServiceName, strings.Repeat("s", 1<<20)))
	r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
	if !r.NothingRecognised() || r.Settings.Vocabulary != report.VocabNone {
		t.Fatalf("NothingRecognised = %v, vocabulary %q; want true, none", r.NothingRecognised(), r.Settings.Vocabulary)
	}
	names := r.Recognition.UnrecognisedNames
	if len(names) != vocab.MaxUnrecognisedNames || names[0].Name != "evil\x1b[31m" || names[0].Spans != 20 || names[1].Spans != 15 ||
		len(names[1].Name) > 4*vocab.MaxRecognitionText || names[2].Name != "op-l" || names[9].Name != "op-e" {
		t.Errorf("unrecognised names = %v, want the ten most frequent, most first", names)
	}
	for _, u := range r.Recognition.Vocabularies {
		for _, res := range u.ExampleResources {
			if len(res) > 4*vocab.MaxRecognitionText {
				t.Errorf("an example resource of %d bytes: want it clipped to %d runes", len(res), vocab.MaxRecognitionText)
			}
		}
	}
	if n := len(renderString(t, r, render.FormatJSON)); n > 64<<10 {
		t.Errorf("the JSON report of a dump with a 1 MiB name and resource is %d bytes: want them clipped", n)
	}
	text := r.UnrecognisedText()
	if strings.Contains(text, "\x1b") || !strings.Contains(text, `evil\x1b[31m`) {
		t.Errorf("text does not escape the name:\n%s", text)
	}
	if !strings.Contains(text, "vocabulary: block in mcptrace.yaml, see docs/vocabularies.md") || strings.Contains(text, "op-d") || len(text) > 4096 {
		t.Errorf("text:\n%s\nwant the ten names and the vocabulary block hint", text)
	}

	d = newDump()
	named(3, "tools/call search", ptrace.SpanKindClient)(d, d.resource(spans.ResourceServiceName, "svc"))
	r = analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
	if text := r.UnrecognisedText(); !r.NothingRecognised() || !strings.Contains(text, "--profile semconv") {
		t.Errorf("names like the conventions' without mcp.method.name: want the --profile semconv hint, got:\n%s", text)
	}
	if r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}); r.NothingRecognised() {
		t.Errorf("an empty dump is not 'nothing recognised': there is nothing to recognise")
	}
}

// perTrace splits td into one batch per trace, in trace order.
func perTrace(td ptrace.Traces) []ptrace.Traces {
	var out []ptrace.Traces
	index := map[[16]byte]int{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		rs := rss.At(i)
		ss := rs.ScopeSpans().At(0).Spans()
		for k := 0; k < ss.Len(); k++ {
			s := ss.At(k)
			at, ok := index[s.TraceID()]
			if !ok {
				at = len(out)
				index[s.TraceID()] = at
				b := ptrace.NewTraces()
				rs.Resource().CopyTo(b.ResourceSpans().AppendEmpty().Resource())
				b.ResourceSpans().At(0).ScopeSpans().AppendEmpty()
				out = append(out, b)
			}
			s.CopyTo(out[at].ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty())
		}
	}
	return out
}

// TestEngineDetectsAsOneIndexDoes pins detection across shards: a gateway
// writing acquires only on misses whose first traces all miss (read alone,
// they look like ours) is acquire-on-miss over the whole dump; a batch
// engine on any number of shards, and AnalyzeStream (speculative, then
// read again when its first guess proves wrong), report what one index
// does. A stream decides with the first batch that shows a signature and
// keeps it: the report says which.
func TestEngineDetectsAsOneIndexDoes(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "gw")
	for k := range 4 {
		d.invocation(ss, lease{trace: uint64(k + 1), start: time.Duration(k) * time.Minute, end: time.Duration(k)*time.Minute + time.Second,
			key: "k" + string(rune('0'+k)), hit: false, handshake: true, session: "s"})
	}
	for k := 4; k < 8; k++ {
		d.invocation(ss, lease{trace: uint64(k + 1), start: time.Duration(k) * time.Minute, end: time.Duration(k)*time.Minute + time.Second,
			key: "k0", noAcquire: true, session: "s"})
	}
	cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
	want := analyzeTD(t, cfg, d.td)
	if want.Settings.Vocabulary != report.VocabAcquireOnMiss || want.Pool.Hits != 4 {
		t.Fatalf("one index: vocabulary %q, %d hits; want acquire-on-miss, 4", want.Settings.Vocabulary, want.Pool.Hits)
	}
	wantJSON := renderString(t, want, render.FormatJSON)
	for _, shards := range []int{1, 2, 8} {
		got := engineReport(t, cfg, EngineOptions{Shards: shards}, []ptrace.Traces{d.td})
		if s := renderString(t, got, render.FormatJSON); s != wantJSON {
			t.Errorf("batch engine, %d shards, differs from one index:\n%s", shards, cmp.Diff(wantJSON, s))
		}
	}
	batches := perTrace(d.td)
	path := writeJSONLines(t, "dump.jsonl", batches...)
	var reread error
	r, _, err := AnalyzeStream(context.Background(), ingest.Files{path}, cfg, LoadOptions{Reread: func(err error) { reread = err }}, EngineOptions{Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.Inputs = []report.InputReport{}
	if s := renderString(t, r, render.FormatJSON); s != wantJSON {
		t.Errorf("AnalyzeStream differs from one index:\n%s", cmp.Diff(wantJSON, s))
	}
	if !errors.Is(reread, errSpoiled) {
		t.Errorf("AnalyzeStream did not read again (reread = %v): its first guess, mcptrace, should have spoiled the speculative run", reread)
	}

	// A stream keeps the vocabulary of the first batch that showed one.
	st := engineReport(t, cfg, EngineOptions{Shards: 1, Window: time.Nanosecond}, batches)
	if st.Settings.Vocabulary != report.VocabMcptrace {
		t.Errorf("stream: vocabulary %q, want the first batch's, mcptrace (sticky)", st.Settings.Vocabulary)
	}
}

// BenchmarkAnalyzeAutoAgainstDefault measures what detection costs: the
// measures of one index of the benchmark dump (MCPTRACE_BENCH_SPANS spans,
// 200k by default) under ProfileAuto against ProfileDefault, and the
// detection pass alone (which every analysis runs, for its recognition
// section), alternated in each iteration so all see the same machine load.
// It reports x-default, auto's time over default's, and detect-share, the
// detection pass's time over default's whole analysis.
func BenchmarkAnalyzeAutoAgainstDefault(b *testing.B) {
	n := 200_000
	if os.Getenv("MCPTRACE_BENCH_SPANS") != "" {
		n = benchSpans(b)
	}
	path, _ := writeBenchDump(b, b.TempDir(), "otlp-jsonl", n)
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	idx.Finish()
	var auto, def, det time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		vocab.Detect(idx, nil)
		det += time.Since(start)
		for _, p := range []rulefmt.Profile{rulefmt.ProfileDefault, rulefmt.ProfileAuto} {
			start := time.Now()
			r, err := Analyze(asDump(idx), rulefmt.Config{Profile: p})
			if err != nil || r.Settings.Vocabulary != report.VocabMcptrace {
				b.Fatalf("%s: %v, vocabulary %q", p, err, r.Settings.Vocabulary)
			}
			if p == rulefmt.ProfileAuto {
				auto += time.Since(start)
			} else {
				def += time.Since(start)
			}
		}
	}
	b.ReportMetric(float64(auto)/float64(def), "x-default")
	b.ReportMetric(float64(det)/float64(def), "detect-share")
}

// The reports name the built-in vocabularies in detection's precedence
// order (report.VocabularyPrecedence, the remedy text of an unrecognised
// dump): it is the order of the signatures detection tries.
func TestVocabularyPrecedenceIsTheSignaturesOrder(t *testing.T) {
	var names []string
	for _, s := range vocab.BuiltinSignatures {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, report.VocabularyPrecedence) {
		t.Errorf("detection's signatures are in the order %q, the reports name %q", names, report.VocabularyPrecedence)
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

// TestOnlyAnInvocationsFirstAcquireMakesItNotBare pins that an acquire
// child makes its parent invocation not bare, once: a retry's second
// acquire, or an acquire under a span that is no invocation, must not
// count for an invocation that has none, which would read a resource that
// acquires only on misses as ours.
func TestOnlyAnInvocationsFirstAcquireMakesItNotBare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		parent string // the first trace's root, parent of its two acquires
	}{
		{"a retry's second acquire", spans.SpanInvoke},
		{"acquires under a span that is no invocation", "gateway.handle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDump()
			ss := d.resource(spans.ResourceServiceInstanceID, "gw")
			miss := []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false, spans.AttrMissReason, spans.MissCold}
			d.add(ss, sp{trace: 1, id: 10, name: tc.parent, start: time.Second, end: 2 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			for id := uint64(11); id <= 12; id++ {
				at := time.Second + time.Duration(id)*time.Millisecond
				d.add(ss, sp{trace: 1, id: id, parent: 10, name: spans.SpanAcquire, start: at, end: at + time.Millisecond, attrs: miss})
			}
			d.add(ss, sp{trace: 2, id: 20, name: spans.SpanInvoke, start: 3 * time.Second, end: 4 * time.Second, attrs: []any{spans.AttrCacheKey, "k"}})
			r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileAuto}, d.td)
			if r.Settings.Vocabulary != report.VocabAcquireOnMiss {
				t.Errorf("vocabulary %q, want %q: an invocation has no acquire", r.Settings.Vocabulary, report.VocabAcquireOnMiss)
			}
		})
	}
}
