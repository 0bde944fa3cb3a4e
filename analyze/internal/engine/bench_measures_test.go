package engine

import (
	"context"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// BenchmarkMeasuresOverAnIndex measures what the vocabulary stage and the
// measures cost on their own: the benchmark dump is loaded once, then only
// Analyze runs (the stage, the observation, the attribution and the report),
// so a change to the event model shows here rather than under the decode
// that dominates BenchmarkAnalyze. Compare it with the same benchmark on
// the base commit, in the same run of the machine.
func BenchmarkMeasuresOverAnIndex(b *testing.B) {
	n := benchSpans(b)
	path, spans := writeBenchDump(b, b.TempDir(), "otlp-jsonl", n)
	cfg := rulefmt.Config{}
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Index: cfg.IndexOptions()})
	if err != nil {
		b.Fatal(err)
	}
	var took time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		r, err := Analyze(asDump(idx), cfg)
		if err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		if r.Spans != spans {
			b.Fatalf("analyzed %d spans, generated %d", r.Spans, spans)
		}
	}
	b.ReportMetric(float64(spans)*float64(b.N)/took.Seconds(), "spans/s")
}
