package mcptraceconnector

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"
)

// nopAnalyzer measures nothing: the baseline that leaves only the
// connector's buffering and emission.
type nopAnalyzer struct{}

func (nopAnalyzer) Finalize(pcommon.TraceID, ptrace.Traces, finalizeReason) traceOutcome {
	return traceOutcome{}
}
func (nopAnalyzer) Attribute() traceOutcome { return traceOutcome{} }

// BenchmarkAnalyzerCost feeds the prod-cold-starts dump, trace by trace,
// through a metrics leg and shuts it down, once with the real analyzer and
// once with one that measures nothing; the ratio of the two is what the
// in-stream analysis costs over the buffering. Run the two interleaved
// (-count) and compare spans/s:
//
//	go test -run '^$' -bench BenchmarkAnalyzerCost -count 5 ./mcptraceconnector/
func BenchmarkAnalyzerCost(b *testing.B) {
	path := filepath.Join(tracesDir, "prod-cold-starts.otlp.json")
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Profile = dumpProfile(path)
	s, err := cfg.settings()
	if err != nil {
		b.Fatal(err)
	}
	var batches []ptrace.Traces
	_, err = readDumpErr(path, func(td ptrace.Traces) { batches = append(batches, td) })
	if err != nil {
		b.Fatal(err)
	}
	traces := byTrace(batches)
	spans := 0
	for _, td := range traces {
		spans += td.SpanCount()
	}
	for _, c := range []struct {
		name string
		new  func() traceAnalyzer
	}{
		{"baseline", func() traceAnalyzer { return nopAnalyzer{} }},
		{"analyzed", func() traceAnalyzer {
			a, err := newAnalyzer(zap.NewNop(), s)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				leg := newConnector(zap.NewNop(), s, c.new())
				leg.metrics = consumertest.NewNop()
				for _, td := range traces {
					if err := leg.ConsumeTraces(ctx, td); err != nil {
						b.Fatal(err)
					}
				}
				if err := leg.Shutdown(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
			b.ReportMetric(float64(len(traces)), "traces/op")
		})
	}
}
