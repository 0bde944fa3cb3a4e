package mcptraceconnector

import (
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze/report"
)

// TestCorpusMissCausesAreOnlyThoseTheSpansCanShow feeds the third-party
// corpus (traces OpenLLMetry, Shinzo, Sentry and Mastra wrote: none
// carries a cache key or an attempt number, and a client's calls no
// server address) through the connector under the default config, the
// writer detected, attributing in the traces leg or in a pairs leg fed
// the records a traces leg forwards, and holds each miss's cause label to
// what that writer's spans can show of each miss: a cause whose figure the
// analysis of the same dump calls not measurable or only an upper bound
// (report.FigureOf, FigureState.Certain) must be counted under
// mcptrace.miss.cause="unknown", never as a cause the spans cannot tell,
// and the misses add up to the server's ledger's. The analysis decides
// what is measurable; the ledger how many misses there were.
func TestCorpusMissCausesAreOnlyThoseTheSpansCanShow(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(tracesDir, "corpus", "*", "*.jsonl"))
	if err != nil || len(paths) < 9 {
		t.Fatalf("corpus dumps: %v, %d found, want 9", err, len(paths))
	}
	for _, path := range paths {
		for _, attribution := range []string{AttributionLocal, AttributionForward} {
			name := filepath.Base(filepath.Dir(path)) + "/" + strings.TrimSuffix(filepath.Base(path), ".jsonl") + "/" + attribution
			t.Run(name, func(t *testing.T) {
				cfg := NewFactory().CreateDefaultConfig().(*Config)
				cfg.Attribution = attribution
				s, err := cfg.settings()
				if err != nil {
					t.Fatal(err)
				}
				_, _, rep := batchFigures(t, path, s)
				causes := corpusMissCauses(t, path, cfg)
				var misses int64
				for cause, n := range causes {
					misses += n
					if f := rep.FigureOf(report.MissCauseFigure(cause)); cause != MissCauseUnknown && !f.Certain() {
						t.Errorf("%d misses counted as %q, a cause the spans cannot show of each (%s: %s): want %q", n, cause, f.State, f.Why, MissCauseUnknown)
					}
				}
				g := readCorpusGolden(t, strings.TrimSuffix(path, ".jsonl")+".golden.json")
				if want := g.Figures["misses"].Spans; want != nil && misses != *want {
					t.Errorf("misses by cause %v add up to %d, want %d (the server's ledger)", causes, misses, *want)
				}
			})
		}
	}
}

// corpusMissCauses runs the dump at path through cfg's legs (a metrics
// leg, or a traces leg forwarding to a pairs leg: countAcquires) and
// returns its misses by cause label, summed over the pools.
func corpusMissCauses(t *testing.T, path string, cfg *Config) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	synctest.Test(t, func(t *testing.T) {
		sink := countAcquires(t, path, cfg, zap.NewNop())
		if len(sink.AllMetrics()) == 0 {
			return
		}
		for _, p := range lastPoints(t, sink, MetricAcquires) {
			if hit, _ := p.Attributes().Get(AttrCacheHit); hit.Bool() {
				continue
			}
			cause, _ := p.Attributes().Get(AttrMissCause)
			got[cause.Str()] += p.IntValue()
		}
	})
	return got
}
