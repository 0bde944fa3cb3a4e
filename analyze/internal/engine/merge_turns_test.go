package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// benchSource is a Source of the bench workload (tracegen.BenchBatches) in
// its small batches, each one a ConsumeTraces: many batches, so merges
// wait for their turn (awaitTurn) behind shards still reading. It calls
// cancel once it has handed cancelAt batches (0: never) and stops, as a
// reader does, when its context is done.
type benchSource struct {
	spans    int
	cancelAt int
	cancel   context.CancelFunc
}

var _ ingest.Source = benchSource{}

func (s benchSource) Read(ctx context.Context, _ ingest.ReadOptions, sink ingest.Sink) ([]ingest.Input, error) {
	in := ingest.Input{Path: "bench"}
	batches := 0
	_, err := tracegen.BenchBatches(s.spans, func(td ptrace.Traces) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("reading bench: %w", err)
		}
		in.Spans += td.SpanCount()
		if err := sink.ConsumeTraces(&in, td); err != nil {
			return err
		}
		if batches++; batches == s.cancelAt {
			s.cancel()
		}
		return nil
	})
	return []ingest.Input{in}, err
}

func (benchSource) Rereadable() bool { return true }
func (benchSource) Bytes() int64     { return 0 }

// earlyEngines are the engines that merge what they finalize while they
// read, in the order of the batches (awaitTurn), over three shards.
var earlyEngines = []struct {
	name string
	make func() (*Engine, error)
}{
	{"speculative", func() (*Engine, error) { return newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: 3}) }},
	{"window", func() (*Engine, error) {
		return NewEngine(rulefmt.Config{}, EngineOptions{Shards: 3, Window: time.Second})
	}},
	{"bound", func() (*Engine, error) {
		return NewEngine(rulefmt.Config{}, EngineOptions{Shards: 3, MaxOpenTraces: 64})
	}},
}

// TestACancelledFeedStopsWhileMergesWaitTheirTurn pins that a read
// cancelled at any batch ends, with the context's error (not errSpoiled,
// which would read again, nor the budget's verdict), while the shards'
// observers wait for each other's turn to merge: Close stops a shard
// whose observer others wait for, and each observer passes every batch
// its shard read, so none is left waiting (a deadlock would hang here
// until the test's timeout). The memory budget is on, so the observers
// judge batches too.
func TestACancelledFeedStopsWhileMergesWaitTheirTurn(t *testing.T) {
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 4, 4
	for _, kind := range earlyEngines {
		for _, at := range []int{1, 10, 40} {
			t.Run(fmt.Sprintf("%s/at %d", kind.name, at), func(t *testing.T) {
				eng, err := kind.make()
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				src := benchSource{spans: 60_000, cancelAt: at, cancel: cancel}
				_, _, err = analyzeWith(ctx, eng, src, LoadOptions{Read: ReadOptions{MaxMemory: 1 << 40}})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cancelled at batch %d: %v, want context.Canceled", at, err)
				}
				if _, err := eng.Report(); !errors.Is(err, ErrEngineClosed) {
					t.Errorf("Report after the cancelled read: %v, want ErrEngineClosed", err)
				}
			})
		}
	}
}

// TestCloseWhileMergesWaitTheirTurn pins that Close returns while
// batches are still queued to the shards and their observers wait for
// each other's turn to merge, and that Flush, after a full read, merges
// every shard's last finalization (each waits for the observers of the
// shards before it to be done): the same report as a run fed in one go.
func TestCloseWhileMergesWaitTheirTurn(t *testing.T) {
	defer func(n, m int) { rootedBatch, earlyPairBatch = n, m }(rootedBatch, earlyPairBatch)
	rootedBatch, earlyPairBatch = 4, 4
	for _, kind := range earlyEngines {
		t.Run(kind.name, func(t *testing.T) {
			eng, err := kind.make()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tracegen.BenchBatches(20_000, eng.Add); err != nil {
				t.Fatal(err)
			}
			eng.Close()
			if _, err := eng.Report(); !errors.Is(err, ErrEngineClosed) {
				t.Errorf("Report after Close: %v, want ErrEngineClosed", err)
			}
			eng, err = kind.make()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tracegen.BenchBatches(20_000, eng.Add); err != nil {
				t.Fatal(err)
			}
			r, err := eng.Report()
			if errors.Is(err, errSpoiled) {
				return // the figures would differ from a batch run's: none to compare
			}
			if err != nil || r.Spans == 0 {
				t.Fatalf("Report after a full read: %v, %v; want the spans reported", r, err)
			}
		})
	}
}
