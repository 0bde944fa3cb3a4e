package mcptraceconnector

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/mcptrace/mcptrace/analyze"
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
// of the two is what the in-stream analysis costs over the buffering. A
// third, forwarded, is the traces → logs leg of attribution: forward: the
// same analysis without the pair attribution, plus one record per acquire.
// Each
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
	forward := s
	forward.forward = true
	for _, c := range []struct {
		name string
		new  func() traceAnalyzer
		// logs makes the leg a traces → logs leg with attribution:
		// forward, which encodes every acquire as a record.
		logs bool
	}{
		{"baseline", func() traceAnalyzer { return nopAnalyzer{} }, false},
		{"analyzed", func() traceAnalyzer {
			a, err := newAnalyzer(zap.NewNop(), s, false)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}, false},
		{"forwarded", func() traceAnalyzer {
			a, err := newAnalyzer(zap.NewNop(), forward, true)
			if err != nil {
				b.Fatal(err)
			}
			return a
		}, true},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			leg := newConnector(zap.NewNop(), s, c.new())
			if c.logs {
				leg.logs = consumertest.NewNop()
			} else {
				leg.metrics = consumertest.NewNop()
			}
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

// BenchmarkPairsLeg is the pair tier's cost: the acquire records of the
// prod-cold-starts dump (as a forwarding traces → logs leg writes them,
// fresh trace ids each op) through one long-lived logs → metrics leg,
// attributed at a sweep that finds them all due. Reported per acquire.
//
//	go test -run '^$' -bench BenchmarkPairsLeg -count 5 ./mcptraceconnector/
func BenchmarkPairsLeg(b *testing.B) {
	path := filepath.Join(tracesDir, "prod-cold-starts.otlp.json")
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Profile = dumpProfile(path)
	cfg.Attribution = AttributionForward
	s, err := cfg.settings()
	if err != nil {
		b.Fatal(err)
	}
	a, err := newAnalyzer(zap.NewNop(), s, true)
	if err != nil {
		b.Fatal(err)
	}
	_, err = readDumpErr(path, func(td ptrace.Traces) { a.Finalize(pcommon.TraceID{}, td, reasonComplete) })
	if err != nil {
		b.Fatal(err)
	}
	events := a.Attribute().Pairs
	if len(events) == 0 {
		b.Fatal("the dump forwarded no acquire")
	}
	ps, err := analyze.NewPairStream(s.analyze)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	leg := newPairsLeg(zap.NewNop(), s, ps, consumertest.NewNop())
	now := time.Now()
	op := uint64(0)
	for b.Loop() {
		op++
		for i := range events {
			binary.BigEndian.PutUint64(events[i].TraceID[:8], op)
			events[i].Start += int64(time.Hour) // after the previous op's: in order, none late
			events[i].LeaseEnd += int64(time.Hour)
		}
		if err := leg.ConsumeLogs(ctx, pairLogs(events)); err != nil {
			b.Fatal(err)
		}
		now = now.Add(s.pairWait + time.Second)
		if err := leg.sweep(ctx, now, false); err != nil {
			b.Fatal(err)
		}
	}
	if p, late := ps.Pending(), ps.LateAcquires(); p != 0 || late != 0 {
		b.Fatalf("%d acquires still pending, %d late: the sweeps did not attribute every op in order", p, late)
	}
	b.ReportMetric(float64(len(events))*float64(b.N)/b.Elapsed().Seconds(), "acquires/s")
	b.ReportMetric(float64(len(events)), "acquires/op")
}
