package engine

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/selector"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

func TestParseSelectorRejectsMistakesWithTheirPlace(t *testing.T) {
	tests := []struct {
		name, yaml string
		line, col  int
		msg        string
	}{
		{"unknown key", "name: a\nnmae_regex: b", 2, 1, `unknown key "nmae_regex"`},
		{"bad regex", "name_regex: '(unclosed'", 1, 13, "not a valid regular expression"},
		{"bad kind", "kind: sever", 1, 7, `kind "sever"`},
		{"bad status", "status: failed", 1, 9, `status "failed"`},
		{"name and regex", "name: a\nname_regex: b", 1, 1, "not both"},
		{"empty mapping", "{}", 1, 1, "matches every span"},
		{"attributes not a mapping", "attributes: [a, b]", 1, 13, "attributes must be a mapping"},
		{"unknown operator", "attributes:\n  k: {equal: v}", 2, 7, `unknown key "equal"`},
		{"exists not a bool", "attributes:\n  k: {exists: maybe}", 2, 15, "exists must be true or false"},
		{"attribute without value", "attributes:\n  k:", 2, 5, "has no value"},
		{"bad attribute regex", "resource:\n  k: {regex: '[z-a]'}", 2, 14, "not a valid regular expression"},
		{"repeated key", "name: a\nname: b", 2, 1, `"name" given twice`},
		{"a list", "- a", 1, 1, "selector must be a span name or a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rulefmt.ParseSelectorString(tt.yaml)
			var ce *rulefmt.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v, want a *ConfigError", err)
			}
			if ce.Line != tt.line || ce.Column != tt.col || !strings.Contains(ce.Msg, tt.msg) {
				t.Errorf("error at %d:%d %q, want %d:%d containing %q", ce.Line, ce.Column, ce.Msg, tt.line, tt.col, tt.msg)
			}
		})
	}
}

func TestParseSelectorReadsEveryCondition(t *testing.T) {
	sel, err := rulefmt.ParseSelectorString(`{name_regex: '^db\.', kind: client, status: error,
		attributes: {db.sql.table: organizations, db.system: {not_equals: redis}, db.op: {regex: '^SEL'}, db.user: {exists: true}, db.x: {exists: false}},
		resource: {service.name: worker}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `name=~^db\. attributes[db.op]=~^SEL attributes[db.sql.table]=organizations attributes[db.system]!=redis attributes[db.user] exists attributes[db.x] absent resource[service.name]=worker kind=client status=error`
	if got := sel.String(); got != want {
		t.Errorf("selector = %s\nwant       %s", got, want)
	}
	if got := strings.Join(sel.SpanAttributeKeys(), ","); got != "db.op,db.sql.table,db.system,db.user,db.x" {
		t.Errorf("span attribute keys = %s", got)
	}
	plain, err := rulefmt.ParseSelectorString(spans.SpanInvoke)
	if err != nil || plain.Name != spans.SpanInvoke {
		t.Errorf("a plain scalar is an exact name: got %+v, %v", plain, err)
	}
}

func TestSelectorMatching(t *testing.T) {
	d := newDump()
	worker := d.resource(spans.ResourceServiceName, "worker")
	do := d.resource(spans.ResourceServiceName, "do")
	d.add(worker, sp{trace: 1, id: 1, name: "db.query", kind: ptrace.SpanKindClient, end: time.Millisecond,
		attrs: []any{"db.sql.table", "organizations", "db.system", "postgresql"}})
	d.add(do, sp{trace: 1, id: 2, name: "db.query", kind: ptrace.SpanKindClient, status: ptrace.StatusCodeError,
		attrs: []any{"db.sql.table", "mcp_sessions", "db.system", "redis"}})
	d.add(do, sp{trace: 1, id: 3, name: "durable_object.fetch", kind: ptrace.SpanKindServer})

	tests := []struct {
		sel  string
		want []uint64 // span ids matched
	}{
		{"db.query", []uint64{1, 2}},
		{"{name_regex: '^durable'}", []uint64{3}},
		{"{kind: server}", []uint64{3}},
		{"{status: error}", []uint64{2}},
		{"{status: unset}", []uint64{1, 3}},
		{"{attributes: {db.sql.table: organizations}}", []uint64{1}},
		{"{attributes: {db.system: {not_equals: redis}}}", []uint64{1, 3}}, // absent counts as not equal
		{"{attributes: {db.sql.table: {regex: 'sess'}}}", []uint64{2}},
		{"{attributes: {db.system: {exists: true}}}", []uint64{1, 2}},
		{"{attributes: {db.system: {exists: false}}}", []uint64{3}},
		{"{attributes: {db.sql.table: nowhere}}", nil}, // a value no span carries
		{"{resource: {" + spans.ResourceServiceName + ": worker}}", []uint64{1}},
		{"{name: db.query, resource: {" + spans.ResourceServiceName + ": {not_equals: worker}}}", []uint64{2}},
		{"{attributes: {db.sql.table: {regex: '^o', not_equals: organizations}}}", nil}, // both must hold
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			sel, err := rulefmt.ParseSelectorString(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			cfg := rulefmt.Config{ExecutionRoot: &sel}
			idx := index.New(cfg.IndexOptions())
			idx.Add(d.td)
			m, err := selector.Compile(idx, sel)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, i := range idx.Order {
				if m.Match(i) {
					got = append(got, idx.Span(i).ID)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("matched spans %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompileRefusesAnAttributeTheIndexDidNotKeep(t *testing.T) {
	idx := index.New(rulefmt.IndexOptions{})
	idx.Add(newDump().td)
	sel, _ := rulefmt.ParseSelectorString("{attributes: {db.sql.table: x}}")
	if _, err := selector.Compile(idx, sel); err == nil || !strings.Contains(err.Error(), "db.sql.table") {
		t.Errorf("compile = %v, want an error naming db.sql.table", err)
	}
}
