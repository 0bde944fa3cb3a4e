package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/report/render"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

func renderString(t *testing.T, r *report.Report, format string) string {
	t.Helper()
	var b bytes.Buffer
	if err := render.Write(&b, r, format); err != nil {
		t.Fatalf("Write(%s): %v", format, err)
	}
	return b.String()
}

func TestJSONReportHasEveryDocumentedKey(t *testing.T) {
	r := analyzeTD(t, scenarioConfig(t, "ttl-and-redial"), tracegen.TTLAndRedial())
	r.Inputs = []report.InputReport{{Path: "x.jsonl", Format: "otlp-json", Spans: 20, Warnings: []string{}}}
	var doc map[string]any
	if err := json.Unmarshal([]byte(renderString(t, r, render.FormatJSON)), &doc); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		"schema", "settings.profile", "settings.idle_ttl_seconds", "partial",
		"inputs.0.path", "inputs.0.format", "inputs.0.spans", "inputs.0.warnings",
		"spans", "duplicate_spans", "traces", "incomplete_traces", "window.start", "window.end",
		"pool.acquires", "pool.hits", "pool.misses", "pool.hit_rate", "pool.handshakes", "pool.acquires_per_handshake",
		"pool.scopes", "pool.keys", "pool.cold_start_floor", "pool.excess_misses", "pool.unexplained_examples",
		"pool.latency_ms.acquire_hit.p50", "pool.latency_ms.acquire_miss.p95", "pool.latency_ms.handshake.p99", "pool.latency_ms.call.count",
		"pool.by_scope.0.scope", "pool.by_scope.0.miss_reasons.unexplained",
		"executions.count", "executions.multi_session", "executions.max_sessions", "executions.examples",
		"measures.0.name", "measures.0.requests", "measures.0.complete", "measures.0.incomplete", "measures.0.histogram", "measures.0.unexpected",
	}
	for _, reason := range spans.MissReasons {
		paths = append(paths, "pool.miss_reasons."+reason)
	}
	for _, p := range paths {
		if _, ok := lookupPath(doc, p); !ok {
			t.Errorf("JSON report lacks %s", p)
		}
	}
	if doc["schema"] != report.Schema {
		t.Errorf("schema = %v, want %s", doc["schema"], report.Schema)
	}
}

// lookupPath walks a decoded JSON document along dotted keys and indexes,
// treating a key with dots inside (miss reasons never have any) as a path.
func lookupPath(v any, path string) (any, bool) {
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[part]; !ok {
				return nil, false
			}
		case []any:
			i := 0
			for _, c := range part {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func TestJSONRoundTripsIntoTheReport(t *testing.T) {
	r := analyzeTD(t, scenarioConfig(t, "prod-cold-starts"), tracegen.ProdColdStarts())
	out := renderString(t, r, render.FormatJSON)
	var back report.Report
	if err := json.Unmarshal([]byte(out), &back); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := render.JSON(&again, &back); err != nil {
		t.Fatal(err)
	}
	if again.String() != out {
		t.Errorf("JSON does not round-trip:\n%s\nvs\n%s", out, again.String())
	}
}

func TestAnalyzeIsIndependentOfBatchOrder(t *testing.T) {
	td := tracegen.ProdColdStarts()
	records := tracegen.Records(td)
	reversed := make([]ptrace.Traces, len(records))
	for i, rec := range records {
		reversed[len(records)-1-i] = rec
	}
	cfg := scenarioConfig(t, "prod-cold-starts")
	a := renderString(t, analyzeTD(t, cfg, td), render.FormatJSON)
	b := renderString(t, analyzeTD(t, cfg, reversed...), render.FormatJSON)
	if a != b {
		t.Errorf("the same spans in another batch order gave another report")
	}
}

func TestTableFitsIn100Columns(t *testing.T) {
	long := strings.Repeat("very-long-pool-scope-name-", 6)
	d := newDump()
	ss := d.resource(spans.ResourceServiceInstanceID, long)
	d.invocation(ss, lease{trace: 1, start: 0, end: time.Second, key: "k", hit: false, handshake: true, session: "s1"})
	d.invocation(ss, lease{trace: 2, start: time.Minute, end: 61 * time.Second, key: "k", hit: false, handshake: true, session: "s2"})
	reports := map[string]*report.Report{"long scope": analyzeTD(t, rulefmt.Config{}, d.td)}
	for _, sc := range tracegen.Scenarios() {
		reports[sc.Name] = analyzeTD(t, scenarioConfig(t, sc.Name), sc.Build())
	}
	reports["long scope"].Inputs = []report.InputReport{{Path: "dump.jsonl", Partial: true, Warnings: []string{strings.Repeat("a warning that goes on ", 10)}}}
	reports["long scope"].Partial = true
	for name, r := range reports {
		out := renderString(t, r, render.FormatTable)
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("%s: line %d is %d columns wide: %s", name, i+1, n, line)
			}
		}
		for _, heading := range []string{"DUMP", "POOL", "LATENCY (MS)", "EXECUTIONS"} {
			if !strings.Contains(out, "\n"+heading+"\n") {
				t.Errorf("%s: table lacks the %s group", name, heading)
			}
		}
	}
	if out := renderString(t, reports["long scope"], render.FormatTable); !strings.Contains(out, "PARTIAL") {
		t.Errorf("a partial report must say so:\n%s", out)
	}
}

func TestTableAndMarkdownShowTheKeyFigures(t *testing.T) {
	r := analyzeTD(t, scenarioConfig(t, "per-call-dial"), tracegen.PerCallDial())
	for _, format := range []string{render.FormatTable, render.FormatMarkdown} {
		out := renderString(t, r, format)
		for _, want := range []string{"5 unexplained miss(es)", "16.7%", "0.0%", r.Executions.Examples[0], spans.MissUnexplained} {
			if !strings.Contains(out, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, out)
			}
		}
	}
	md := renderString(t, r, render.FormatMarkdown)
	if !strings.Contains(md, "### Pool\n\n|") || !strings.Contains(md, "|---") && !strings.Contains(md, "|:--") && !strings.Contains(md, "| --") {
		t.Errorf("markdown lacks a heading and table:\n%s", md)
	}
}

func TestRenderRefusesAnUnknownFormat(t *testing.T) {
	r := analyzeTD(t, rulefmt.Config{}, newDump().td)
	if err := render.Write(&bytes.Buffer{}, r, "yaml"); !errors.Is(err, render.ErrUnknownFormat) {
		t.Errorf("Write(yaml) = %v, want ErrUnknownFormat", err)
	}
}

func TestAnalyzeRefusesAnInvalidConfig(t *testing.T) {
	if _, err := Analyze(asDump(index.New(rulefmt.IndexOptions{})), rulefmt.Config{Profile: "nope"}); !errors.Is(err, rulefmt.ErrUnknownProfile) {
		t.Errorf("Analyze with a bad profile = %v, want ErrUnknownProfile", err)
	}
}

// TestSchemaDocNamesEveryKey keeps docs/analysis-schema.md in step with the
// report: every key of a full JSON report must appear there in backquotes.
func TestSchemaDocNamesEveryKey(t *testing.T) {
	doc, err := os.ReadFile("../../../docs/analysis-schema.md")
	if err != nil {
		t.Fatal(err)
	}
	r := analyzeTD(t, scenarioConfig(t, "ttl-and-redial"), tracegen.TTLAndRedial())
	r.Inputs = []report.InputReport{{Path: "x", Warnings: []string{}}}
	var v any
	if err := json.Unmarshal([]byte(renderString(t, r, render.FormatJSON)), &v); err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				keys[k] = true
				walk(c)
			}
		case []any:
			for _, c := range x {
				walk(c)
			}
		}
	}
	walk(v)
	for k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/analysis-schema.md does not document the key %q", k)
		}
	}
}
