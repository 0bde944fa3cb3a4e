package rulefmt

import (
	"encoding/json"
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestParseGateConfigReadsTheExampleFiles parses the shipped rule files.
func TestParseGateConfigReadsTheExampleFiles(t *testing.T) {
	gc, err := LoadGateConfig("../../testdata/rules/cold-init.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(gc.Measures) != 1 || len(gc.Rules) != 2 {
		t.Fatalf("measures %d, rules %d; want 1 and 2", len(gc.Measures), len(gc.Rules))
	}
	r := gc.Rules[0]
	if r.ID != "one-org-read-per-cold-init" || r.Severity != SeverityError || r.Scope.Kind != ScopeSubtree ||
		r.Scope.Root.Name != "mcp.request" || r.Select.Name != "db.query" || r.CompleteWhen == nil || r.Line != 25 {
		t.Errorf("rule 0 = %+v", r)
	}
	if got := r.Expect[0].String(); got != "count == 1" {
		t.Errorf("expectation = %q, want count == 1", got)
	}
	if gc.Rules[1].Severity != SeverityWarning || gc.Rules[1].Expect[0].Of != "measures.org_reads_per_cold_init.unexpected" {
		t.Errorf("rule 1 = %+v", gc.Rules[1])
	}
	pool, err := LoadGateConfig("../../testdata/rules/pool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(pool.Rules) != 4 || pool.Rules[1].Expect[0].Than.Measure != "misses" || pool.Rules[0].Expect[0].Tolerance != 0.05 {
		t.Errorf("pool rules = %+v", pool.Rules)
	}
	under := pool.Rules[3].Select
	if under.Under == nil || under.Under.Name != "plugin.mcp.invoke" || under.Status != "error" {
		t.Errorf("select with under = %+v", under)
	}
	if pool.Tolerances != DefaultTolerances() {
		t.Errorf("tolerances = %+v, want the defaults", pool.Tolerances)
	}
}

// TestParseGateConfigRejectsMistakesWithTheirPlace: every mistake names the
// file, line and column, and says what was expected.
func TestParseGateConfigRejectsMistakesWithTheirPlace(t *testing.T) {
	cases := []struct {
		name, yaml, want string
	}{
		{"unknown top-level key", "rulez: []\n", "f.yaml:1:1: unknown key \"rulez\""},
		{"unknown rule key", "rules:\n  - id: a\n    expect: {of: count, op: \"==\", than: 1}\n    select: x\n    colour: red\n", "f.yaml:5:5: unknown key \"colour\""},
		{"unknown measure", "rules:\n  - id: a\n    scope: dump\n    expect: {of: hit_ratio, op: \"==\", than: 1}\n", "f.yaml:4:18: unknown measure \"hit_ratio\""},
		{"unknown measure in than", "rules:\n  - id: a\n    scope: dump\n    expect: {of: hit_rate, op: \">=\", than: floor}\n", "f.yaml:4:44: unknown measure \"floor\" in than"},
		{"unknown operator", "rules:\n  - id: a\n    select: x\n    expect: {of: count, op: \"=\", than: 1}\n", "f.yaml:4:29: unknown operator \"=\""},
		{"unknown scope", "rules:\n  - id: a\n    scope: span\n    select: x\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:3:12: scope \"span\""},
		{"unknown severity", "rules:\n  - id: a\n    severity: fatal\n    select: x\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:3:15: severity \"fatal\""},
		{"unknown selector key", "rules:\n  - id: a\n    select: {name: x, above: y}\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:3:23: unknown key \"above\""},
		{"unknown reads measure", "measures:\n  - {name: m, root: r, read: x}\nrules:\n  - id: a\n    scope: dump\n    expect: {of: measures.n.unexpected, op: \"==\", than: 0}\n", "f.yaml:6:18: unknown measure \"measures.n.unexpected\""},
		{"measure outside dump scope", "rules:\n  - id: a\n    expect: {of: hit_rate, op: \"==\", than: 1}\n", "f.yaml:3:13: rule \"a\": measure hit_rate is a dump-wide figure"},
		{"count without a selection", "rules:\n  - id: a\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:3:13: rule \"a\": count needs a selection"},
		{"distinct without attribute", "rules:\n  - id: a\n    select: x\n    expect: {of: distinct, op: \"==\", than: 1}\n", "f.yaml:4:13: distinct needs attribute"},
		{"missing expect", "rules:\n  - id: a\n    select: x\n", "f.yaml:2:5: rule \"a\" needs expect"},
		{"missing id", "rules:\n  - select: x\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:2:5: rule needs an id"},
		{"repeated id", "rules:\n  - {id: a, select: x, expect: {of: count, op: \"==\", than: 1}}\n  - {id: a, select: x, expect: {of: count, op: \"==\", than: 1}}\n", "f.yaml:3:5: rule \"a\" already defined at line 2"},
		{"negative tolerance", "rules:\n  - id: a\n    select: x\n    expect: {of: count, op: \"==\", than: 1, tolerance: -1}\n", "f.yaml:4:55: tolerance must be a number, 0 or more"},
		{"under alone", "rules:\n  - id: a\n    select: {under: x}\n    expect: {of: count, op: \"==\", than: 1}\n", "f.yaml:3:13: select needs a condition on the span itself"},
		{"bad regression key", "regressions: {hit_rate: 0.1}\n", "f.yaml:1:15: unknown key \"hit_rate\""},
		{"bad latency ratio", "regressions: {latency_ratio: 0.5}\n", "f.yaml:1:30: latency_ratio must be 1 or more"},
		{"syntax error", "rules:\n  - id: a\n   select: [\n", "f.yaml:3:4: invalid YAML"},
		{"rules not a list", "rules: {id: a}\n", "f.yaml:1:8: rules must be a list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseGateConfig("f.yaml", []byte(c.yaml))
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v, want a *ConfigError", err)
			}
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("err = %q\nwant prefix %q", err, c.want)
			}
		})
	}
}

// TestParseGateConfigReadsExpectationForms covers the expectation spellings:
// a list, a measure bound, tolerance, a per-expectation selection.
func TestParseGateConfigReadsExpectationForms(t *testing.T) {
	gc, err := ParseGateConfig("f.yaml", []byte(`
regressions: {hit_rate_drop: 0.1, latency_ratio: 2, latency_min_delta_ms: 0, excess_misses: 1, unexplained_misses: 2, unexpected: 3}
rules:
  - id: r1
    scope: {subtree: plugin.mcp.invoke}
    select: plugin.mcp.connection.acquire
    skip_empty: true
    expect:
      - {of: count, op: "<=", than: 2}
      - {of: count, op: "<=", than: 1, select: {name: plugin.mcp.connection.acquire, attributes: {plugin.mcp.attempt: {not_equals: "2"}}}}
      - {of: distinct, attribute: mcp.session.id, op: "!=", than: 0}
  - id: r2
    scope: dump
    expect: {of: call.p99, op: "<", than: acquire_miss.p50, tolerance: 1.5}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := Tolerances{HitRateDrop: 0.1, LatencyRatio: 2, LatencyMinDeltaMS: 0, ExcessMisses: 1, UnexplainedMisses: 2, Unexpected: 3}
	if gc.Tolerances != want {
		t.Errorf("tolerances = %+v, want %+v", gc.Tolerances, want)
	}
	r1 := gc.Rules[0]
	if !r1.SkipEmpty || len(r1.Expect) != 3 || r1.Expect[1].Select == nil || r1.Expect[2].Attribute != "mcp.session.id" {
		t.Errorf("r1 = %+v", r1)
	}
	if got := r1.Expect[2].String(); got != "distinct(mcp.session.id) != 0" {
		t.Errorf("r1 expectation 3 = %q", got)
	}
	if got := gc.Rules[1].Expect[0].String(); got != "call.p99 < acquire_miss.p50 ±1.5" {
		t.Errorf("r2 expectation = %q", got)
	}
	opts := RulesIndexOptions(gc.Rules)
	if !strings.Contains(strings.Join(opts.SpanAttrs, ","), "mcp.session.id") {
		t.Errorf("index options %v miss the distinct attribute", opts.SpanAttrs)
	}
}

// TestExpectationHoldsWithTolerance pins each operator with and without a
// tolerance.
func TestExpectationHoldsWithTolerance(t *testing.T) {
	cases := []struct {
		op         Op
		tol        float64
		got, bound float64
		want       bool
	}{
		{OpEq, 0, 1, 1, true},
		{OpEq, 0, 5.0 / 6, 0.8333333333, true}, // float noise of a ratio
		{OpEq, 0, 2, 1, false},
		{OpEq, 1, 2, 1, true},
		{OpNe, 0, 2, 1, true},
		{OpNe, 1, 2, 1, false},
		{OpLt, 0, 1, 1, false},
		{OpLt, 0.5, 1, 1, true},
		{OpLe, 0, 1, 1, true},
		{OpLe, 0, 1.1, 1, false},
		{OpGt, 0, 1, 1, false},
		{OpGt, 0.5, 1, 1, true},
		{OpGe, 0, 0.7, 0.75, false},
		{OpGe, 0.05, 0.7, 0.75, true},
	}
	for _, c := range cases {
		e := Expectation{Op: c.op, Tolerance: c.tol}
		if got := e.Holds(c.got, c.bound); got != c.want {
			t.Errorf("%v %s %v ±%v = %v, want %v", c.got, c.op, c.bound, c.tol, got, c.want)
		}
	}
}

// TestRulesSchemaMatchesTheParser keeps docs/mcptrace-rules.schema.json in
// step with the parser: the same keys, and every measure name accepted.
func TestRulesSchemaMatchesTheParser(t *testing.T) {
	data, err := os.ReadFile("../../docs/mcptrace-rules.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"properties"`
		Defs map[string]struct {
			Properties map[string]any    `json:"properties"`
			AnyOf      []json.RawMessage `json:"anyOf"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	keys := func(m map[string]any) string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return strings.Join(ks, ",")
	}
	topLevel := map[string]any{}
	for k := range schema.Properties {
		topLevel[k] = nil
	}
	for _, c := range []struct{ what, got, want string }{
		{"top level", keys(topLevel), "builtin,measures,regressions,rules,vocabulary"},
		{"vocabulary", keys(schema.Defs["vocabulary"].Properties), sortedKeys(vocabularyKeys)},
		{"vocabulary attributes", keys(vocabularyAttributesSchema(t, data)), sortedKeys(vocabularyAttributeNames())},
		{"builtin", keys(schema.Properties["builtin"].Properties), builtinIDs()},
		{"rule", keys(schema.Defs["rule"].Properties), "allow_empty,complete_when,description,expect,id,scope,select,severity,skip_empty,skip_sessionless"},
		{"expectation", keys(schema.Defs["expectation"].Properties), "attribute,of,op,select,than,tolerance"},
		{"regressions", keys(schema.Properties["regressions"].Properties), "excess_misses,hit_rate_drop,latency_min_delta_ms,latency_ratio,unexpected,unexplained_misses"},
	} {
		if c.got != c.want {
			t.Errorf("%s keys = %s, want %s", c.what, c.got, c.want)
		}
	}
	var enum []string
	var patterns []*regexp.Regexp
	for _, raw := range schema.Defs["quantity"].AnyOf {
		var alt struct {
			Enum    []string `json:"enum"`
			Pattern string   `json:"pattern"`
		}
		if err := json.Unmarshal(raw, &alt); err != nil {
			t.Fatal(err)
		}
		enum = append(enum, alt.Enum...)
		if alt.Pattern != "" {
			patterns = append(patterns, regexp.MustCompile(alt.Pattern))
		}
	}
	names := append(MeasureNames([]ReadMeasure{{Name: "org_reads"}}), spanQuantities...)
	for _, n := range names {
		ok := slices.Contains(enum, n)
		for _, p := range patterns {
			ok = ok || p.MatchString(n)
		}
		if !ok {
			t.Errorf("schema does not accept measure %q", n)
		}
	}
}

// builtinIDs lists the built-in rule ids, sorted and comma-joined.
func builtinIDs() string {
	var ids []string
	for _, r := range BuiltinRules(Config{}) {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}

// TestRuleFileReportsEveryMistakeAtOnce: a file with several bad rules and a
// bad regressions key gets one error per mistake, each with file:line:column,
// and a huge rule id is quoted clipped, not whole.
func TestRuleFileReportsEveryMistakeAtOnce(t *testing.T) {
	doc := "rules:\n" +
		"  - id: a\n    scope: dump\n    expect: {of: hit_ratio, op: \"==\", than: 1}\n" +
		"  - id: b\n    expect: {of: count, op: \"=<\", than: 1}\n    select: x\n" +
		"  - id: \"" + strings.Repeat("é", 50_000) + "!\"\n    expect: {of: count, op: \"==\", than: 1}\n    select: x\n" +
		"regressions:\n  hit_rate_drop: lots\n"
	_, err := ParseGateConfig("m.yaml", []byte(doc))
	var ces ConfigErrors
	if !errors.As(err, &ces) {
		t.Fatalf("err = %.300v, want ConfigErrors", err)
	}
	want := []string{`m.yaml:4:18: unknown measure "hit_ratio"`, `m.yaml:6:29: unknown operator "=<"`, `m.yaml:8:9: rule id "éé`, `m.yaml:12:18: `}
	if len(ces) != len(want) {
		t.Fatalf("%d errors, want %d:\n%.2000s", len(ces), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(ces[i].Error(), w) {
			t.Errorf("error %d = %.200q, want it to start %q", i, ces[i].Error(), w)
		}
	}
	if len(err.Error()) > 2000 || !strings.Contains(err.Error(), "(100001 bytes)") {
		t.Errorf("the huge id is not clipped: the message is %d bytes", len(err.Error()))
	}
}

// sortedKeys returns keys sorted and joined by commas.
func sortedKeys(keys []string) string {
	ks := slices.Clone(keys)
	slices.Sort(ks)
	return strings.Join(ks, ",")
}

// vocabularyAttributeNames lists the keys of a vocabulary's attributes:.
func vocabularyAttributeNames() []string {
	var out []string
	for _, k := range vocabularyAttributeKeys {
		out = append(out, k.key)
	}
	return out
}

// vocabularyAttributesSchema returns the schema's properties of a
// vocabulary's attributes: mapping.
func vocabularyAttributesSchema(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var schema struct {
		Defs struct {
			Vocabulary struct {
				Properties struct {
					Attributes struct {
						Properties map[string]any `json:"properties"`
					} `json:"attributes"`
				} `json:"properties"`
			} `json:"vocabulary"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	return schema.Defs.Vocabulary.Properties.Attributes.Properties
}
