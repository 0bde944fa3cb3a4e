package mcptraceconnector

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"

	"github.com/mcptrace/mcptrace/collector/mcptraceconnector/internal/metadata"
)

// corpusGolden is what the connector's test reads of a corpus golden
// (docs/corpus.md): the figures the spans can show, taken from the corpus
// server's request ledger, null where the spans cannot show them.
type corpusGolden struct {
	Expect struct {
		ExecutionsMeasurable bool `json:"executions_measurable"`
	} `json:"expect"`
	Figures map[string]struct {
		Spans *int64 `json:"spans"`
	} `json:"figures"`
}

// TestCorpusMetricsEqualTheLedgers feeds every dump of the third-party
// corpus (testdata/traces/corpus: OpenLLMetry, Shinzo, OpenInference,
// Sentry and Mastra around a TypeScript SDK gateway) through the metrics leg with the
// default config, profile auto, in export order and small batches, and
// checks the pool counters against the golden figures the corpus server's
// ledger gave, never against mcptrace analyze: acquires, hits, misses and
// handshakes where the spans can show them, none at all where they cannot
// (OpenInference writes no MCP span), and executions where they and their
// sessions are measurable (none emitted elsewhere). The same dumps read through a vocabulary block equal to
// OpenLLMetry's give the same counters: a config block is a vocabulary as
// good as a built-in.
func TestCorpusMetricsEqualTheLedgers(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(tracesDir, "corpus", "*", "*.jsonl"))
	if err != nil || len(paths) < 9 {
		t.Fatalf("corpus dumps: %v, %d found, want 9", err, len(paths))
	}
	block := map[string]any{
		"name":       "session-spans",
		"calls":      map[string]any{"name_regex": `\.tool$`, "kind": "client"},
		"handshakes": "initialize.mcp",
		"session":    map[string]any{"enclosing": "mcp.client.session"},
	}
	for _, path := range paths {
		pkg := filepath.Base(filepath.Dir(path))
		name := pkg + "/" + strings.TrimSuffix(filepath.Base(path), ".jsonl")
		g := readCorpusGolden(t, strings.TrimSuffix(path, ".jsonl")+".golden.json")
		configs := map[string]func(*Config){"auto": func(*Config) {}}
		if pkg == "openllmetry" {
			configs["vocabulary-block"] = func(c *Config) { c.Vocabulary = block }
		}
		for cname, set := range configs {
			t.Run(name+"/"+cname, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					cfg := NewFactory().CreateDefaultConfig().(*Config)
					set(cfg)
					got := corpusCounters(t, path, cfg)
					for _, k := range []string{"acquires", "hits", "misses", "handshakes"} {
						want := g.Figures[k].Spans
						switch {
						case want == nil && got[k] != 0:
							t.Errorf("%s = %d, want none: the golden says the spans cannot show it", k, got[k])
						case want != nil && got[k] != *want:
							t.Errorf("%s = %d, want %d (the server's ledger)", k, got[k], *want)
						}
					}
					// The executions counter says whether each execution ran on
					// several sessions: it is emitted only where the spans show
					// both the executions and their sessions, and where they do
					// not it is not emitted, not even as 0.
					shown := g.Expect.ExecutionsMeasurable && g.Figures["multi_session_executions"].Spans != nil
					if want := g.Figures["executions"].Spans; shown && want != nil && got["executions"] != *want {
						t.Errorf("executions = %d, want %d (the server's ledger)", got["executions"], *want)
					}
					if !shown && got["executions"] != 0 {
						t.Errorf("executions = %d emitted where the spans cannot show executions and their sessions", got["executions"])
					}
				})
			})
		}
	}
}

// readCorpusGolden reads one corpus golden.
func readCorpusGolden(t *testing.T, path string) corpusGolden {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var g corpusGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return g
}

// corpusCounters runs the dump at path through a metrics leg under cfg and
// sums its pool counters over every pool and cause.
func corpusCounters(t *testing.T, path string, cfg *Config) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	sink := new(consumertest.MetricsSink)
	leg, err := NewFactory().CreateTracesToMetrics(ctx, connectortest.NewNopSettings(metadata.Type), cfg, sink)
	if err != nil {
		t.Fatal(err)
	}
	must(t, leg.Start(ctx, componenttest.NewNopHost()))
	defer leg.Shutdown(ctx) // idempotent
	for _, td := range shuffledBatches(readDump(t, path), 1, exportOrder) {
		must(t, leg.ConsumeTraces(ctx, td))
	}
	must(t, leg.Shutdown(ctx))
	got := map[string]int64{}
	if len(sink.AllMetrics()) == 0 {
		return got
	}
	for _, p := range lastPoints(t, sink, MetricAcquires) {
		got["acquires"] += p.IntValue()
		if hit, _ := p.Attributes().Get(AttrCacheHit); hit.Bool() {
			got["hits"] += p.IntValue()
		} else {
			got["misses"] += p.IntValue()
		}
	}
	for _, p := range lastPoints(t, sink, MetricHandshakes) {
		got["handshakes"] += p.IntValue()
	}
	for _, p := range lastPoints(t, sink, MetricExecutions) {
		got["executions"] += p.IntValue()
	}
	return got
}
