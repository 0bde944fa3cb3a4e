package mcptraceconnector

import (
	"context"
	"encoding/binary"
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

// BenchmarkAnalyzerCost feeds the prod-cold-starts dump (24 traces, 76
// spans), trace by trace, through one long-lived metrics leg per
// sub-benchmark and measures the traces as one group, as a sweep does, once
// with the real analyzer and once with one that measures nothing; the ratio
// of the two is what the in-stream analysis costs over the buffering. Each
// op gives the traces fresh ids, so every op is a group of 24 new complete
// traces (finalized as their roots arrive) on a leg that has measured every
// earlier op's: the analyzer's state across groups is part of the cost.
// Run the two interleaved (-count) and compare spans/s:
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
			leg := newConnector(zap.NewNop(), s, c.new())
			leg.metrics = consumertest.NewNop()
			op := uint64(0)
			for b.Loop() {
				op++
				for _, td := range traces {
					renameTrace(td, op)
					if err := leg.ConsumeTraces(ctx, td); err != nil {
						b.Fatal(err)
					}
				}
				if err := leg.finalize(ctx, nil, true); err != nil {
					b.Fatal(err)
				}
			}
			if counts, open := leg.buf.snapshot(); counts.complete != int64(len(traces))*int64(op) || open != 0 || counts.lateSpans != 0 {
				b.Fatalf("%d of %d traces complete, %d open, %d late spans: the bench does not measure whole groups",
					counts.complete, len(traces)*int(op), open, counts.lateSpans)
			}
			if err := leg.Shutdown(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(spans)*float64(b.N)/b.Elapsed().Seconds(), "spans/s")
			b.ReportMetric(float64(len(traces)), "traces/op")
		})
	}
}

// renameTrace gives every span of td the trace id it had with its first
// eight bytes replaced by op, so each op feeds new traces.
func renameTrace(td ptrace.Traces, op uint64) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				id := sp.TraceID()
				binary.BigEndian.PutUint64(id[:8], op)
				sp.SetTraceID(id)
			}
		}
	}
}
