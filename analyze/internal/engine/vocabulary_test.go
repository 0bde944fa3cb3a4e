package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// gatewayNames renames this pool's vocabulary into a made-up gateway's:
// every span name and attribute key the measures read is spelled another
// way, so a figure that still comes out right was read through the YAML
// vocabulary, not through a name the code knows.
var gatewayNames = map[string]string{
	spans.SpanInvoke:          "gw.lease",
	spans.SpanAcquire:         "gw.pool.get",
	spans.SpanHandshake:       "gw.dial",
	spans.SpanCallTool:        "gw.tool.call",
	spans.AttrCacheHit:        "gw.reused",
	spans.AttrCacheKey:        "gw.key",
	spans.AttrAttempt:         "gw.try",
	spans.AttrMissReason:      "gw.why",
	spans.AttrPoolID:          "gw.pool",
	spans.AttrSessionID:       "gw.session",
	spans.AttrErrorType:       "gw.error",
	spans.AttrProtocolVersion: "gw.revision",
	spans.AttrMethodName:      "gw.method",
	spans.AttrServerAddress:   "gw.host",
	spans.AttrServerPort:      "gw.port",
}

// The gateway's vocabularies, as a user writes them in mcptrace.yaml.
const (
	gatewayAttributes = `
  session: {attribute: gw.session}
  attributes:
    hit: gw.reused
    key: gw.key
    attempt: gw.try
    miss_reason: gw.why
    pool_id: gw.pool
    error_type: gw.error
    tool_error: tool_error
    revision: gw.revision
    server_address: gw.host
    server_port: gw.port
`
	gatewayYAML = `
vocabulary:
  name: my-gateway
  calls: gw.tool.call
  invocations: gw.lease
  acquires: {name: gw.pool.get}
  handshakes: [gw.dial]
` + gatewayAttributes
	gatewayOnMissYAML = gatewayYAML + `  acquire_on_miss: true
`
	// The semconv scenario renamed: calls named "rpc.tool <tool>", no pool
	// spans, so acquires are inferred from the calls' sessions.
	gatewayCallsOnlyYAML = `
vocabulary:
  name: my-gateway-calls
  calls: {name_regex: '^rpc\.tool '}
  handshakes: initialize
` + gatewayAttributes
)

// renameTraces returns a copy of td with span names and span attribute keys
// renamed by names ("tools/call X" becomes "rpc.tool X").
func renameTraces(td ptrace.Traces, names map[string]string) ptrace.Traces {
	out := ptrace.NewTraces()
	td.CopyTo(out)
	for _, rs := range out.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if n, ok := names[s.Name()]; ok {
					s.SetName(n)
				} else if tool, ok := strings.CutPrefix(s.Name(), spans.MethodToolsCall+" "); ok {
					s.SetName("rpc.tool " + tool)
				}
				renamed := pcommon.NewMap()
				for k, v := range s.Attributes().All() {
					if n, ok := names[k]; ok {
						k = n
					}
					v.CopyTo(renamed.PutEmpty(k))
				}
				renamed.CopyTo(s.Attributes())
			}
		}
	}
	return out
}

// measuredFigures are the parts of a report a vocabulary must not change:
// the pool, the executions, the per-revision figures and how many spans
// were recognised.
func measuredFigures(t *testing.T, r *report.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(struct {
		PoolSpans  int
		Pool       report.PoolReport
		Executions report.ExecutionsReport
		ByProtocol []report.ProtocolReport
	}{r.PoolSpans, r.Pool, r.Executions, r.ByProtocol}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestYAMLVocabularyReadsARenamedWriterAsOurs: every scenario, its spans and
// attributes renamed into another writer's words and read through a
// vocabulary: block, gives the pool, execution and per-revision figures of
// the same run read in our names by its built-in vocabulary. A new writer is
// one YAML block and no edit to a measure.
func TestYAMLVocabularyReadsARenamedWriterAsOurs(t *testing.T) {
	yamlFor := map[rulefmt.Profile]string{
		rulefmt.ProfileDefault:       gatewayYAML,
		rulefmt.ProfileAcquireOnMiss: gatewayOnMissYAML,
		rulefmt.ProfileSemconv:       gatewayCallsOnlyYAML,
	}
	for _, sc := range scenarioBuilds() {
		t.Run(sc.Name, func(t *testing.T) {
			ours := scenarioConfig(t, sc.Name)
			ours.Measures = nil // the reads-per-request measure selects the story's own names
			cf, err := rulefmt.ParseConfig("mcptrace.yaml", []byte(yamlFor[ours.Profile]))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			if cf.Vocabulary == nil {
				t.Fatal("ParseConfig kept no vocabulary")
			}
			theirs := rulefmt.Config{Vocabulary: cf.Vocabulary}

			td := sc.Build()
			want := analyzeTD(t, ours, td)
			if want.PoolSpans == 0 {
				t.Skip("a reads-per-request story: no pool spans to rename")
			}
			if want.Pool.Acquires == 0 || want.Executions.Count == 0 {
				t.Fatalf("the scenario in our names measures nothing: %+v", want.Pool)
			}
			got := analyzeTD(t, theirs, renameTraces(td, gatewayNames))
			if d := cmp.Diff(measuredFigures(t, want), measuredFigures(t, got)); d != "" {
				t.Errorf("renamed writer read through its vocabulary differs from ours (-ours +theirs):\n%s", d)
			}
			if got.Settings.Profile != rulefmt.Profile(cf.Vocabulary.Name) {
				t.Errorf("settings.profile = %q, want the vocabulary's name %q", got.Settings.Profile, cf.Vocabulary.Name)
			}
			// And the renamed dump read in our names finds nothing: the
			// figures above came through the YAML block.
			if blind := analyzeTD(t, ours, renameTraces(td, gatewayNames)); blind.Pool.Acquires != 0 || blind.Executions.Count != 0 {
				t.Errorf("our vocabulary reads the renamed dump: %d acquires, %d executions", blind.Pool.Acquires, blind.Executions.Count)
			}
		})
	}
}

// sessionSpanDump builds a writer that names sessions only by parenting
// calls to a long-lived session span (OpenLLMetry's shape), and the same
// calls carrying mcp.session.id as the semconv conventions write them: two
// sessions, the first with three calls across two traces' worth of time,
// the second with one.
func sessionSpanDump(spanShaped bool) ptrace.Traces {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "agent")
	type call struct {
		session    uint64 // 1 or 2
		start, end time.Duration
		failed     bool
	}
	calls := []call{{1, 1 * time.Second, 2 * time.Second, false}, {1, 3 * time.Second, 4 * time.Second, true},
		{1, 5 * time.Second, 6 * time.Second, false}, {2, 7 * time.Second, 8 * time.Second, false}}
	sessionSpan := map[uint64]uint64{}
	if spanShaped {
		for _, sess := range []uint64{1, 2} {
			sessionSpan[sess] = d.add(ss, sp{trace: sess, name: "mcp.client.session", kind: ptrace.SpanKindClient, start: 0, end: 10 * time.Second})
			d.add(ss, sp{trace: sess, parent: sessionSpan[sess], name: "initialize.mcp", kind: ptrace.SpanKindClient,
				start: 0, end: 500 * time.Millisecond})
		}
	}
	for _, c := range calls {
		s := sp{trace: c.session, start: c.start, end: c.end, kind: ptrace.SpanKindClient}
		if c.failed {
			s.status = ptrace.StatusCodeError
		}
		if spanShaped {
			s.name, s.parent = "list_logs.tool", sessionSpan[c.session]
		} else {
			s.name = "tools/call list_logs"
			s.attrs = []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, []string{"", "s-1", "s-2"}[c.session]}
		}
		d.add(ss, s)
	}
	return d.td
}

// TestEnclosingSessionSpanIsTheSessionIdentity: calls whose only session
// identity is the span that encloses them are pooled exactly like calls
// that carry mcp.session.id: a session's first call the miss, later ones
// hits, per built-in (openllmetry) and per YAML block (session: {enclosing}).
func TestEnclosingSessionSpanIsTheSessionIdentity(t *testing.T) {
	want := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileSemconv}, sessionSpanDump(false)).Pool
	if want.Acquires != 4 || want.Misses != 2 || want.Handshakes != 2 {
		t.Fatalf("semconv reference: %d acquires, %d misses, %d handshakes; want 4, 2, 2", want.Acquires, want.Misses, want.Handshakes)
	}
	cf, err := rulefmt.ParseConfig("mcptrace.yaml", []byte(`
vocabulary:
  name: session-spans
  calls: {name_regex: '\.tool$', kind: client}
  session: {enclosing: mcp.client.session}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  rulefmt.Config
	}{
		{"built-in openllmetry", rulefmt.Config{Profile: rulefmt.ProfileOpenLLMetry}},
		{"yaml session enclosing", rulefmt.Config{Vocabulary: cf.Vocabulary}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := analyzeTD(t, tc.cfg, sessionSpanDump(true))
			got := r.Pool
			got.Latency, want.Latency = report.LatencyReport{}, report.LatencyReport{} // the span-shaped dump has handshake spans
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("pool figures differ from the same calls with mcp.session.id (-semconv +session spans):\n%s", d)
			}
			if r.Executions.Count != 2 || r.Executions.MaxSessions != 1 {
				t.Errorf("executions = %+v, want 2 executions of 1 session each", r.Executions)
			}
		})
	}
	if r := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileOpenLLMetry}, sessionSpanDump(true)); r.Pool.Latency.Handshake.Count != 2 {
		t.Errorf("openllmetry read %d handshakes' latency, want the 2 initialize.mcp spans", r.Pool.Latency.Handshake.Count)
	}
}

// TestVocabularyBlockReportsEveryMistakeAtOnce: a vocabulary: block with
// several mistakes gets one error each, with its line and column, unknown
// keys named with the nearest known one.
func TestVocabularyBlockReportsEveryMistakeAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       []string // each a substring of one error line, in order
	}{
		{"unknown keys with did-you-mean, a bad selector, a bad session", `vocabulary:
  name: gw
  cals: gw.call
  calls: {name_regx: x}
  session: {atribute: x}
  attributes: {hitt: x}
`, []string{
			`mcptrace.yaml:3:3: unknown key "cals" (did you mean "calls"?)`,
			`mcptrace.yaml:4:11: unknown key "name_regx"`,
			`mcptrace.yaml:5:13: unknown key "atribute" (did you mean "attribute"?)`,
			`mcptrace.yaml:6:16: unknown key "hitt" (did you mean "hit"?)`,
		}},
		{"no name, no calls", `vocabulary:
  handshakes: gw.dial
`, []string{
			`mcptrace.yaml:2:3: vocabulary needs a name`,
			`mcptrace.yaml:2:3: vocabulary needs calls`,
		}},
		{"a built-in's name, an unknown base, acquire_on_miss without acquires", `vocabulary:
  name: semconv
  base: semconf
  calls: x
  acquire_on_miss: true
`, []string{
			`mcptrace.yaml:2:9: vocabulary name "semconv" is a built-in's`,
			`mcptrace.yaml:3:9: base "semconf": want a built-in vocabulary`,
			`(did you mean "semconv"?)`,
			`mcptrace.yaml:5:20: acquire_on_miss needs acquires and invocations`,
		}},
		{"a role with more selectors than the stage tries per span", `vocabulary:
  name: gw
  calls: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]
`, []string{`mcptrace.yaml:3:10: calls: 17 selectors, more than 16`}},
		{"session with both sources, a bad regex in a list", `vocabulary:
  name: gw
  calls: [ok, {name_regex: '('}]
  session: {attribute: a, enclosing: b}
`, []string{
			`mcptrace.yaml:3:28: name_regex "(" is not a valid regular expression`,
			`mcptrace.yaml:4:12: session takes one of attribute or enclosing`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := rulefmt.ParseConfig("mcptrace.yaml", []byte(tc.yaml))
			if err == nil {
				t.Fatal("ParseConfig accepted the block")
			}
			var ce *rulefmt.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T is no ConfigError: %v", err, err)
			}
			text := err.Error()
			at := 0
			for _, w := range tc.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Fatalf("errors lack %q (in order) in:\n%s", w, text)
				}
				at += i
			}
		})
	}
}

// TestEveryBuiltinNameIsAProfile: --profile takes every built-in name, and
// default reads exactly as mcptrace.
func TestEveryBuiltinNameIsAProfile(t *testing.T) {
	for _, name := range []string{"", "default", "mcptrace", "acquire-on-miss", "semconv", "openllmetry", "sentry", "mastra"} {
		p, err := rulefmt.ParseProfile(name)
		if err != nil {
			t.Errorf("ParseProfile(%q): %v", name, err)
			continue
		}
		if _, ok := rulefmt.BuiltinVocabulary(p); !ok {
			t.Errorf("profile %q has no built-in vocabulary", p)
		}
	}
	if _, err := rulefmt.ParseProfile("openllmetri"); !errors.Is(err, rulefmt.ErrUnknownProfile) || !strings.Contains(err.Error(), "openllmetry") {
		t.Errorf("ParseProfile(openllmetri) = %v, want ErrUnknownProfile naming the built-ins", err)
	}
	for _, sc := range scenarioBuilds() {
		if scenarioConfig(t, sc.Name).Profile != rulefmt.ProfileDefault {
			continue
		}
		td := sc.Build()
		def, mine := analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileDefault}, td), analyzeTD(t, rulefmt.Config{Profile: rulefmt.ProfileMcptrace}, td)
		if d := cmp.Diff(measuredFigures(t, def), measuredFigures(t, mine)); d != "" {
			t.Errorf("%s: default and mcptrace differ:\n%s", sc.Name, d)
		}
	}
}

// TestVocabulariesDocExamplesParse: every yaml block of
// docs/vocabularies.md is a configuration ParseConfig accepts, with a
// vocabulary: block, so the page's examples work as written.
func TestVocabulariesDocExamplesParse(t *testing.T) {
	data, err := os.ReadFile("../../../docs/vocabularies.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(data, -1)
	if len(blocks) < 3 {
		t.Fatalf("%d yaml blocks in docs/vocabularies.md, want the 3 examples", len(blocks))
	}
	for i, b := range blocks {
		cf, err := rulefmt.ParseConfig(fmt.Sprintf("vocabularies.md block %d", i+1), b[1])
		if err != nil {
			t.Errorf("block %d: %v", i+1, err)
			continue
		}
		if cf.Vocabulary == nil {
			t.Errorf("block %d holds no vocabulary", i+1)
		}
	}
}

// TestSessionRulesCountTheVocabularysSessions: a rule's pool_sessions reads
// a call's session where the vocabulary says it is, so calls of one trace
// under two enclosing session spans (no mcp.session.id at all) hold two
// sessions, not none: a rule never passes on sessions it could not see.
func TestSessionRulesCountTheVocabularysSessions(t *testing.T) {
	d := newDump()
	ss := d.resource(spans.ResourceServiceName, "agent")
	// One execution that opened two sessions, each inside it: its calls are
	// tied to it, so its sessions can be counted.
	run := d.add(ss, sp{trace: 1, name: "agent.run", start: 0, end: 30 * time.Second})
	for k, sess := range []uint64{0, 0} {
		start := time.Duration(k) * 10 * time.Second
		sess = d.add(ss, sp{trace: 1, parent: run, name: "mcp.client.session", kind: ptrace.SpanKindClient, start: start, end: start + 5*time.Second})
		d.add(ss, sp{trace: 1, parent: sess, name: "list_logs.tool", kind: ptrace.SpanKindClient, start: start + time.Second, end: start + 2*time.Second})
	}
	rule := rulefmt.BuiltinRules(rulefmt.Config{})[0]
	if rule.ID != rulefmt.RuleOneSessionPerExecution {
		t.Fatalf("first built-in is %s", rule.ID)
	}
	rule.Select = &rulefmt.SpanSelector{Selector: rulefmt.Selector{NameRegex: regexp.MustCompile(`\.tool$`)}}
	for _, tc := range []struct {
		name string
		cfg  rulefmt.Config
		want float64
	}{
		{"openllmetry: the enclosing spans are the sessions", rulefmt.Config{Profile: rulefmt.ProfileOpenLLMetry}, 2},
		{"mcptrace: no mcp.session.id, no session", rulefmt.Config{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idx := index.New(rulefmt.MergeIndexOptions(tc.cfg.IndexOptions(), rulefmt.RulesIndexOptions([]rulefmt.Rule{rule})))
			idx.Add(d.td)
			obs, err := ObserveRules(asDump(idx), tc.cfg, []rulefmt.Rule{rule}, ObserveOptions{MaxExamples: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(obs) != 1 || len(obs[0].Groups) != 1 || !slices.Equal(obs[0].Groups[0].Values, []float64{tc.want}) {
				t.Errorf("observation = %+v, want one trace holding %v sessions", obs, tc.want)
			}
		})
	}
}

// TestParseVocabularyReadsAStandaloneBlock: the block on its own parses to
// the vocabulary the same block under vocabulary: does, and its mistakes
// name the file given, line and column.
func TestParseVocabularyReadsAStandaloneBlock(t *testing.T) {
	block := "name: gw\ncalls: gw.tool.call\nsession: {attribute: gw.session}\n"
	v, err := rulefmt.ParseVocabulary("connector.vocabulary", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	cf, err := rulefmt.ParseConfig("mcptrace.yaml", []byte("vocabulary:\n  "+strings.ReplaceAll(strings.TrimSuffix(block, "\n"), "\n", "\n  ")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Name != cf.Vocabulary.Name || v.Session != cf.Vocabulary.Session || len(v.Calls) != 1 || v.Calls[0].Name != "gw.tool.call" {
		t.Errorf("standalone %+v, under vocabulary: %+v", v, cf.Vocabulary)
	}
	for _, tc := range []struct{ data, want string }{
		{"name: gw\ncals: x\n", `connector.vocabulary:2:1: unknown key "cals" (did you mean "calls"?)`},
		{"[a, b]\n", "connector.vocabulary:1:1: vocabulary must be a mapping"},
		{"name: [\n", "connector.vocabulary:"},
	} {
		_, err := rulefmt.ParseVocabulary("connector.vocabulary", []byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseVocabulary(%q) = %v, want an error containing %q", tc.data, err, tc.want)
		}
	}
}
