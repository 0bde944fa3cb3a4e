package engine

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// The configuration parsers read files people write by hand and CI jobs
// template: arbitrary bytes must give a configuration the analyzer accepts
// or a *ConfigError naming the file, never a panic or a hang. The seed
// corpus (the committed YAML files, the YAML examples of the docs and a few
// hostile documents) runs in plain go test; scripts/fuzz.sh runs the
// targets for longer.

// FuzzParseConfig fuzzes the measures file parser of `--config`.
func FuzzParseConfig(f *testing.F) {
	seedYAML(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz.yaml"
		cf, err := rulefmt.ParseConfig(path, data)
		if err != nil {
			checkConfigError(t, err, path)
			if cf != nil {
				t.Fatalf("ParseConfig returned a config with its error %v", err)
			}
			return
		}
		if cf.Path != path {
			t.Fatalf("config path %q, want %q", cf.Path, path)
		}
		checkParsedMeasures(t, cf.Measures)
	})
}

// FuzzParseGateConfig fuzzes the CI gate's parser of `mcptrace check
// --config`: measures, rules and regression tolerances. Accepted rules must
// evaluate, with the measures and the vocabulary, on a small committed dump.
func FuzzParseGateConfig(f *testing.F) {
	seedYAML(f)
	dump, err := os.ReadFile("../../../testdata/traces/cold-init-one-read.otlp.pb")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		const path = "fuzz.yaml"
		gc, err := rulefmt.ParseGateConfig(path, data)
		if err != nil {
			checkConfigError(t, err, path)
			if gc != nil {
				t.Fatalf("ParseGateConfig returned a config with its error %v", err)
			}
			return
		}
		if gc.Path != path {
			t.Fatalf("config path %q, want %q", gc.Path, path)
		}
		checkParsedMeasures(t, gc.Measures)
		cfg := rulefmt.Config{Measures: gc.Measures, Vocabulary: gc.Vocabulary}
		idx, _, err := load(context.Background(), ingest.Files{"-"}, LoadOptions{
			Read:  ReadOptions{Stdin: bytes.NewReader(dump), Workers: 1},
			Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(gc.Rules)),
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Analyze(asDump(idx), cfg)
		if err != nil {
			t.Fatalf("parsed measures do not analyze: %v", err)
		}
		if _, err := ObserveRules(asDump(idx), cfg, gc.Rules, ObserveOptions{}); err != nil {
			t.Fatalf("parsed rules do not evaluate: %v", err)
		}
	})
}

// FuzzParseSelectorString fuzzes the selector of `--execution-root`: a
// span name or a YAML flow mapping.
func FuzzParseSelectorString(f *testing.F) {
	for _, s := range []string{
		"plugin.mcp.invoke",
		"{name: executor.execute, resource: {service.name: gateway}}",
		"{name_regex: '^exec', kind: server, status: error}",
		"{attributes: {mcp.session.id: {exists: true}, error.type: {not_equals: tool_error}}}",
		"{attributes: {k: {regex: '(('}}}",
		"[a, b]",
		"{name: a, name: b}",
		"*anchor",
		"",
		"\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := rulefmt.ParseSelectorString(s)
		if err != nil {
			if _, ok := errors.AsType[*rulefmt.ConfigError](err); !ok {
				t.Fatalf("error %v (%T) is not a *ConfigError", err, err)
			}
			return
		}
		// An accepted selector must compile against an index that keeps
		// what it reads.
		x := index.New(rulefmt.IndexOptions{SpanAttrs: sel.SpanAttributeKeys(), ResourceAttrs: sel.ResourceAttributeKeys()})
		x.Finish()
		if _, err := selector.Compile(x, sel); err != nil {
			t.Fatalf("selector %q parsed but does not compile: %v", s, err)
		}
		_ = sel.String()
	})
}

// checkConfigError asserts err is a *ConfigError naming path.
func checkConfigError(t *testing.T, err error, path string) {
	t.Helper()
	ce, ok := errors.AsType[*rulefmt.ConfigError](err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ConfigError", err, err)
	}
	if ce.File != path || !strings.HasPrefix(err.Error(), path+":") {
		t.Fatalf("error %q does not name the file %s", err, path)
	}
}

// checkParsedMeasures asserts parsed measures are ones the analyzer takes:
// they validate, and Analyze runs them on an empty index.
func checkParsedMeasures(t *testing.T, ms []rulefmt.ReadMeasure) {
	t.Helper()
	cfg := rulefmt.Config{Measures: ms}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("parsed measures do not validate: %v", err)
	}
	idx := index.New(cfg.IndexOptions())
	if _, err := Analyze(asDump(idx), cfg); err != nil {
		t.Fatalf("parsed measures do not analyze: %v", err)
	}
}

// seedYAML adds the committed YAML files under testdata, the YAML examples
// of the docs and a few hostile documents.
func seedYAML(f *testing.F) {
	f.Helper()
	var files []string
	for _, pattern := range []string{"../../../testdata/*.yaml", "../../../testdata/*/*.yaml", "../../../testdata/*.yml", "../../../testdata/*/*.yml"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, m...)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	docs, err := filepath.Glob("../../../docs/*.md")
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range append(docs, "../../../README.md") {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // a doc that is not there has no examples
		}
		for _, block := range yamlBlocks(data) {
			f.Add(block)
		}
	}
	if data, err := os.ReadFile("../../rulefmt/testdata/mcptrace.yaml"); err == nil {
		f.Add(data) // the configuration rulefmt's tests parse
	}
	for _, s := range []string{
		"",
		"measures: []\n",
		"measures:\n  - name: a\n    root: {}\n    read: {}\n",
		"measures:\n  - name: a\n    root: x\n    read: y\n  - name: a\n    root: x\n    read: y\n",
		"measures:\n  - name: a\n    root: x\n    read: y\n    expect: -1\n",
		"measures:\n  - name: a\n    root: x\n    read: y\n    expect: 99999999999999999999999\n",
		"measures:\n  - name: a\n    root: {name_regex: '(('}\n    read: y\n",
		"measures: {a: 1}\nmeasures: []\n",
		"rules:\n  - id: r\n    scope: trace\n    select: {name: x}\n    expect: {count: 1}\n",
		"rules:\n  - id: r\n    scope: dump\n    expect: {of: hit_rate, op: '>=', than: 0.75, tolerance: 0.05}\n",
		"rules:\n  - id: r\n    scope: dump\n    expect: {of: handshakes, op: '==', than: misses}\n",
		"rules:\n  - id: r\n    scope: {each: plugin.mcp.invoke}\n    select: {name: plugin.mcp.client.call_tool, under: {name: x}}\n    expect: {distinct: mcp.session.id, op: '<=', than: 1}\n",
		"measures:\n  - name: m\n    root: x\n    read: y\nrules:\n  - id: r\n    scope: dump\n    expect: {of: m, op: '<', than: 1}\n",
		"regressions: {hit_rate: 0.05}\n",
		// An alias bomb: yaml.v3 must refuse it rather than expand it.
		"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\nmeasures: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n",
		"measures:\n  - &m {name: a, root: x, read: y}\n  - *m\n",
		"measures:\n  - <<: {name: a, root: x}\n    read: y\n",
		"measures: !!binary aGVsbG8=\n",
		"\tmeasures:\n",
		"measures:\n- name: a\n  root: x\n  read: y\n---\nmeasures: []\n",
		strings.Repeat("[", 20_000) + strings.Repeat("]", 20_000),
		"measures:\n" + strings.Repeat("  ", 1) + strings.Repeat("- ", 5_000) + "x\n",
		"\xff\xfe\x00m\x00e\x00",
	} {
		f.Add([]byte(s))
	}
}

// yamlBlocks returns the bodies of the ```yaml fenced blocks of a Markdown
// document.
func yamlBlocks(md []byte) [][]byte {
	var out [][]byte
	for {
		_, after, ok := bytes.Cut(md, []byte("```yaml\n"))
		if !ok {
			return out
		}
		body, rest, ok := bytes.Cut(after, []byte("```"))
		if !ok {
			return out
		}
		out = append(out, body)
		md = rest
	}
}
