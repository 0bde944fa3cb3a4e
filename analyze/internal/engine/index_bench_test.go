package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/hostile"
)

// BenchmarkHostileShapes runs what `mcptrace check` runs (Load through the
// fast path, Analyze, the built-in rules) on a deep chain and a wide
// fan-out of 10k, 100k and 1M spans, reporting the time per span: flat
// from 10k to 1M when every span is touched a bounded number of times.
// scripts/bench-hostile.sh runs it in interleaved rounds and prints the
// ratios (BENCHMARKS.md, "Hostile shapes").
func BenchmarkHostileShapes(b *testing.B) {
	for _, shape := range []string{"invoke-chain", "handshake-chain", "acquire-fanout"} {
		for _, n := range []int64{10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/%d", shape, n), func(b *testing.B) {
				s, err := hostile.ShapeByName(shape)
				if err != nil {
					b.Fatal(err)
				}
				path := filepath.Join(b.TempDir(), shape+"."+s.Ext)
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := hostile.WriteShape(f, s, n); err != nil {
					b.Fatal(err)
				}
				if err := f.Close(); err != nil {
					b.Fatal(err)
				}
				cfg := rulefmt.Config{}.WithDefaults()
				rules := rulefmt.BuiltinRules(cfg)
				b.ResetTimer()
				for b.Loop() {
					idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules))})
					if err != nil {
						b.Fatal(err)
					}
					_, err = Analyze(asDump(idx), cfg)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := ObserveRules(asDump(idx), cfg, rules, ObserveOptions{}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*n), "ns/span")
			})
		}
	}
}
