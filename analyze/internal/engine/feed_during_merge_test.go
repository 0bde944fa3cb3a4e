package engine

import (
	"errors"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestFeedingNeverWaitsForAMerge pins that handing the shards spans, and
// a shard's counting as it reads them, go on while the observer merges
// (which holds the engine's lock, here held by the test): a feed that
// asked the lock whether the engine is usable, or a shard that took it to
// count what it opened, left both cores but the observer's idle for the
// length of every merge. The first part makes a scan, whose finalization
// the observer then holds, waiting for the lock; the later parts each
// open a trace, so the shard raises its peak for each. Twenty parts are
// more than the shard's queue holds, so the feed returns only if the
// shard read them. The minute's bound only ends a failing run.
func TestFeedingNeverWaitsForAMerge(t *testing.T) {
	defer func(n int) { rootedBatch = n }(rootedBatch)
	rootedBatch = 1
	eng, err := NewEngine(rulefmt.Config{}, EngineOptions{Window: time.Hour, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	parts := []ptrace.Traces{streamPart(streamSpanAt{trace: 1, id: 1, start: time.Second, end: time.Second})}
	for i := range uint64(20) {
		parts = append(parts, streamPart(streamSpanAt{trace: 100 + i, id: 1000 + i, parent: 1, start: time.Second, end: time.Second}))
	}
	eng.mu.Lock() // a merge under way
	fed := make(chan error, 1)
	go func() {
		for _, td := range parts {
			if err := eng.Add(td); err != nil {
				fed <- err
				return
			}
		}
		fed <- nil
	}()
	select {
	case err := <-fed:
		eng.mu.Unlock()
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		eng.mu.Unlock()
		<-fed
		t.Fatal("feeding the shards waited for the engine's lock, which the observer holds while it merges")
	}
	r, err := eng.Report()
	if err != nil {
		t.Fatal(err)
	}
	if r.Spans != len(parts) || r.Stream.PeakOpenTraces != len(parts)-1 || r.Stream.CompleteTraces != 1 {
		t.Errorf("%d spans, a peak of %d open traces, %d complete; want %d, %d, 1",
			r.Spans, r.Stream.PeakOpenTraces, r.Stream.CompleteTraces, len(parts), len(parts)-1)
	}
}

// TestAFailedObservationStopsTheFeed pins that once a merge records an
// observation's error, the next part handed to the engine is refused
// with it, as is the report: the feed asks the engine whether it is usable
// without its lock, so the error must be seen that way too.
func TestAFailedObservationStopsTheFeed(t *testing.T) {
	eng, err := NewEngine(rulefmt.Config{}, EngineOptions{Window: time.Hour, Shards: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	part := streamPart(streamSpanAt{trace: 1, id: 1, start: time.Second, end: time.Second})
	if err := eng.Add(part); err != nil {
		t.Fatal(err)
	}
	failed := errors.New("an observation failed")
	eng.merge(0, nil, 0, 0, failed)
	if err := eng.Add(part); !errors.Is(err, failed) {
		t.Errorf("Add after a failed observation = %v, want its error", err)
	}
	if _, err := eng.Report(); !errors.Is(err, failed) {
		t.Errorf("Report after a failed observation = %v, want its error", err)
	}
}
