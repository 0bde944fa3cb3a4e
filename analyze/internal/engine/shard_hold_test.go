package engine

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// holdRecorder is the engine's feed sink without its projection path,
// so that every batch comes as pdata with its charge, remembering each
// batch's hold.
type holdRecorder struct {
	feed  *feedSink
	mu    sync.Mutex
	holds []*ingest.Hold
}

func (r *holdRecorder) ConsumeTraces(in *ingest.Input, td ptrace.Traces) error {
	return r.feed.ConsumeTraces(in, td)
}

func (r *holdRecorder) ConsumeHeldTraces(in *ingest.Input, td ptrace.Traces, h *ingest.Hold) error {
	r.mu.Lock()
	r.holds = append(r.holds, h)
	r.mu.Unlock()
	return r.feed.ConsumeHeldTraces(in, td, h)
}

// TestEveryShardReleasesTheHeldBatchesItReads pins that the shards give
// every pdata batch's charge back to the reader's share: once a batch,
// speculative or streaming engine of one to four shards has read a dump
// and been flushed, no hold the reader handed it has a reference left.
// A hold never released keeps its charge on the share for the rest of the
// read, which no figure or error shows.
func TestEveryShardReleasesTheHeldBatchesItReads(t *testing.T) {
	path := budgetDump(t, 6_000)
	for _, kind := range []struct {
		name string
		make func(shards int) (*Engine, error)
	}{
		{"batch", func(n int) (*Engine, error) { return NewEngine(rulefmt.Config{}, EngineOptions{Shards: n}) }},
		{"speculative", func(n int) (*Engine, error) { return newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: n}) }},
		{"stream", func(n int) (*Engine, error) {
			return NewEngine(rulefmt.Config{}, EngineOptions{Shards: n, Window: time.Second})
		}},
	} {
		for _, shards := range []int{1, 2, 4} {
			eng, err := kind.make(shards)
			if err != nil {
				t.Fatal(err)
			}
			rec := &holdRecorder{feed: &feedSink{eng: eng}}
			if _, err := (ingest.Files{path}).Read(context.Background(), ingest.ReadOptions{}, rec); err != nil {
				t.Fatal(err)
			}
			if err := eng.Flush(); err != nil {
				t.Fatal(err)
			}
			if len(rec.holds) == 0 {
				t.Fatalf("%s, %d shards: no batch came with its charge", kind.name, shards)
			}
			for i, h := range rec.holds {
				if n := h.Outstanding(); n != 0 {
					t.Errorf("%s, %d shards: batch %d of %d still has %d references after the flush, want 0", kind.name, shards, i+1, len(rec.holds), n)
					break
				}
			}
		}
	}
}

// TestAShardReleasesTheHeldBatchesPastASpoiledOne pins the other way a
// shard lets a batch go: a speculative run spoiled by a span after its
// trace's root lets every later batch go unread, and still releases each
// one's hold.
func TestAShardReleasesTheHeldBatchesPastASpoiledOne(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	lines := []ptrace.Traces{
		arrival{trace: 1, id: 1, start: 0, end: 3}.traces(),
		arrival{trace: 2, id: 5, start: 1, end: 2}.traces(),
		arrival{trace: 1, id: 2, parent: 1, start: 1, end: 2}.traces(), // after its root: spoils the run
	}
	for i := range 8 {
		lines = append(lines, arrival{trace: uint64(10 + i), id: uint64(20 + i), start: time.Duration(4 + i), end: time.Duration(5 + i)}.traces())
	}
	path := writeJSONLines(t, "late-child-then-more.jsonl", lines...)
	for _, shards := range []int{1, 2} {
		eng, err := newSpeculativeEngine(rulefmt.Config{}, EngineOptions{Shards: shards})
		if err != nil {
			t.Fatal(err)
		}
		rec := &holdRecorder{feed: &feedSink{eng: eng}}
		_, err = (ingest.Files{path}).Read(context.Background(), ingest.ReadOptions{Workers: 1}, rec)
		if err != nil && !errors.Is(err, errSpoiled) {
			t.Fatal(err)
		}
		eng.Close()
		if got := eng.spoiledAt.Load(); got != 3 {
			t.Fatalf("%d shards: the run was spoiled at batch %d, want 3", shards, got)
		}
		if len(rec.holds) <= 3 {
			t.Fatalf("%d shards: %d batches came with their charge, want some past the spoiled one", shards, len(rec.holds))
		}
		for i, h := range rec.holds {
			if n := h.Outstanding(); n != 0 {
				t.Errorf("%d shards: batch %d of %d still has %d references after the close, want 0", shards, i+1, len(rec.holds), n)
			}
		}
	}
}
