package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// traceQLRules are one rule per shape of query ruleTraceQL writes, each
// with the query it must give: a per-trace count narrowed to its
// violations by the negated operator (never with a tolerance or a measure
// bound, which TraceQL cannot say), a subtree's root before the selector
// unless the selector names its own ancestor, the calls a lost session
// ended, each pool measure's spans, a reads measure's root and reads, and a
// latency upper bound as a duration condition (its tolerance added).
var traceQLRules = []struct{ yaml, want string }{
	{`{id: trace-count, scope: trace, select: db.query, expect: {of: count, op: "==", than: 0}}`,
		`{ name = "db.query" } | count() != 0`},
	{`{id: trace-count-le, scope: trace, select: db.query, expect: {of: count, op: "<=", than: 2}}`,
		`{ name = "db.query" } | count() > 2`},
	{`{id: trace-count-ne, scope: trace, select: db.query, expect: {of: count, op: "!=", than: 2}}`,
		`{ name = "db.query" } | count() = 2`},
	{`{id: trace-count-lt, scope: trace, select: db.query, expect: {of: count, op: "<", than: 2}}`,
		`{ name = "db.query" } | count() >= 2`},
	{`{id: trace-count-gt, scope: trace, select: db.query, expect: {of: count, op: ">", than: 2}}`,
		`{ name = "db.query" } | count() <= 2`},
	{`{id: trace-count-ge, scope: trace, select: db.query, expect: {of: count, op: ">=", than: 2.5}}`,
		`{ name = "db.query" } | count() < 2.5`},
	{`{id: trace-count-tolerance, scope: trace, select: db.query, expect: {of: count, op: "==", than: 1, tolerance: 1}}`,
		`{ name = "db.query" }`},
	{`{id: trace-count-than-measure, scope: trace, select: db.query, expect: {of: count, op: "<=", than: misses}}`,
		`{ name = "db.query" }`},
	{`{id: trace-distinct, scope: trace, select: db.query, expect: {of: distinct, attribute: db.sql.table, op: "==", than: 1}}`,
		`{ name = "db.query" }`},
	{`{id: dump-count, scope: dump, select: db.query, expect: {of: count, op: "==", than: 6}}`,
		`{ name = "db.query" }`},
	{`{id: subtree, scope: {subtree: mcp.request}, select: db.query, expect: {of: count, op: "==", than: 1}}`,
		`{ name = "mcp.request" } >> { name = "db.query" }`},
	{`{id: subtree-under, scope: {subtree: mcp.request}, select: {name: db.query, under: worker.fetch}, expect: {of: count, op: "==", than: 1}}`,
		`{ name = "worker.fetch" } >> { name = "db.query" }`},
	{`{id: subtree-not-under, scope: {subtree: mcp.request}, select: {name: db.query, not_under: worker.fetch}, expect: {of: count, op: "==", than: 1}}`,
		`{ name = "worker.fetch" } !>> { name = "db.query" }`},
	{`{id: lost, scope: trace, select: tools/call, expect: {of: lost_sessions, op: "==", than: 0}}`,
		`{ name = "tools/call" && span.error.type = "session_expired" }`},
	{`{id: unexplained, scope: dump, expect: {of: unexplained_misses, op: "==", than: 0}}`, spans.TraceQLUnexplainedMiss},
	{`{id: hit-rate, scope: dump, expect: {of: hit_rate, op: ">=", than: 0.5}}`, `{ name = "plugin.mcp.connection.acquire" && span.plugin.mcp.cache_hit = false }`},
	{`{id: multi, scope: dump, expect: {of: multi_session_executions, op: "==", than: 0}}`, `{ span.mcp.method.name = "tools/call" && span.mcp.session.id != nil }`},
	{`{id: reads, scope: dump, expect: {of: measures.org_reads_per_cold_init.unexpected, op: "==", than: 0}}`,
		`{ name = "mcp.request" && span.mcp.method.name = "initialize" } >> { name = "db.query" && span.db.sql.table = "organizations" }`},
	{`{id: hit-p99, scope: dump, expect: {of: acquire_hit.p99, op: "<", than: 5}}`,
		`{ name = "plugin.mcp.connection.acquire" && span.plugin.mcp.cache_hit = true && duration > 5ms }`},
	{`{id: miss-p50-tolerance, scope: dump, expect: {of: acquire_miss.p50, op: "<=", than: 5, tolerance: 1.5}}`,
		`{ name = "plugin.mcp.connection.acquire" && span.plugin.mcp.cache_hit = false && duration > 6.5ms }`},
	{`{id: handshake-gt, scope: dump, expect: {of: handshake.p95, op: ">", than: 3}}`, `{ name = "plugin.mcp.connection.handshake" }`},
	{`{id: call-than-measure, scope: dump, expect: {of: call.p99, op: "<", than: handshake.p99}}`, `{ span.mcp.method.name = "tools/call" }`},
	{`{id: call-p99, scope: dump, expect: {of: call.p99, op: "<", than: 100}}`, `{ span.mcp.method.name = "tools/call" && duration > 100ms }`},
}

// TestEachRuleShapeGetsItsTraceQL pins the TraceQL of each rule shape
// (traceQLRules) on the cold-init-two-reads dump, and a built-in rule's
// calls written in the words of the vocabulary read.
func TestEachRuleShapeGetsItsTraceQL(t *testing.T) {
	doc := tracegen.ColdInitMeasureYAML + "rules:\n"
	for _, r := range traceQLRules {
		doc += "  - " + r.yaml + "\n"
	}
	gc, err := rulefmt.ParseGateConfig("mcptrace.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg := scenarioConfig(t, "cold-init-two-reads")
	idx, _, err := load(context.Background(), ingest.Files{filepath.Join(tracesDir, "cold-init-two-reads.otlp.json")}, LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(gc.Rules))})
	if err != nil {
		t.Fatal(err)
	}
	a, err := AnalyzeRules(asDump(idx), cfg, gc.Rules, ObserveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range traceQLRules {
		if got := a.Rules[i].TraceQL; got != r.want {
			t.Errorf("%s: TraceQL\n%s\nwant\n%s", gc.Rules[i].ID, got, r.want)
		}
	}
}

// TestBuiltinCallRulesNameTheCallsOfTheVocabularyRead pins callsTraceQL:
// a built-in rule selecting "the calls" is written with the call selector
// of the vocabulary the dump was read with.
func TestBuiltinCallRulesNameTheCallsOfTheVocabularyRead(t *testing.T) {
	for _, tc := range []struct{ scenario, want string }{
		{"pooled", `{ name = "plugin.mcp.client.call_tool" } | by(span.mcp.session.id)`},
		{"semconv", `{ name =~ "^tools/call( |$)" } | by(span.mcp.session.id)`},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			cfg := scenarioConfig(t, tc.scenario)
			rules := rulefmt.BuiltinRules(cfg)
			idx, _, err := load(context.Background(), ingest.Files{filepath.Join(tracesDir, tc.scenario+".otlp.json")}, LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules))})
			if err != nil {
				t.Fatal(err)
			}
			a, err := AnalyzeRules(asDump(idx), cfg, rules, ObserveOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rules {
				if r.ID == rulefmt.RuleOneSessionPerExecution && a.Rules[i].TraceQL != tc.want {
					t.Errorf("%s: TraceQL\n%s\nwant\n%s", r.ID, a.Rules[i].TraceQL, tc.want)
				}
			}
		})
	}
}
