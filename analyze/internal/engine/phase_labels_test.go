package engine

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/phase"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// TestShardAndObserverGoroutinesCarryTheirPhase pins the labels a CPU
// profile splits a run by: a shard's goroutine is the track phase's and
// its observer's the observe phase's, from their start and again after
// each inner phase (index, finalize, group, detect, observe, merge) ends, so
// their work between inner phases (tracking open traces, scanning,
// handing over) is never counted as the runtime's. The engine's one shard
// has indexed, finalized and merged before the labels are read, once it
// waits for more; every engine alive is checked, as any test running
// beside this one starts its goroutines the same way.
func TestShardAndObserverGoroutinesCarryTheirPhase(t *testing.T) {
	lines := completeTraces(1, 40)
	path := writeJSONLines(t, "dump.jsonl", lines...)
	for _, feed := range []struct {
		name string
		add  func(e *Engine) error
	}{
		{"pdata traces", func(e *Engine) error {
			for _, td := range lines {
				if err := e.Add(td); err != nil {
					return err
				}
			}
			return nil
		}},
		{"the projection decoder's batches", func(e *Engine) error {
			_, err := ingest.Read(context.Background(), []string{path}, ingest.ReadOptions{}, &feedSink{eng: e})
			if err == nil && e.fastBatches == 0 {
				t.Fatal("the read handed the engine no projected batch")
			}
			return err
		}},
	} {
		t.Run(feed.name, func(t *testing.T) {
			e, err := NewEngine(rulefmt.Config{}, EngineOptions{Shards: 1, Window: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if err := feed.add(e); err != nil {
				t.Fatal(err)
			}
			awaitPhaseLabels(t, e)
		})
	}
}

// awaitPhaseLabels waits for e's one shard to have merged what it
// finalized and for every shard and observer goroutine to be labelled
// with its phase, failing the test after a minute.
func awaitPhaseLabels(t *testing.T, e *Engine) {
	t.Helper()
	var run, observer []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		e.mu.Lock()
		merged := e.lowMarks[0] != math.MinInt64
		e.mu.Unlock()
		run, observer = phase.Of("engine.(*shard).run"), phase.Of("engine.(*shard).observeHanded")
		if merged && e.shards[0].mem.Load() > 0 && all(run, phase.Track) && all(observer, phase.Observe) {
			return
		}
	}
	t.Errorf("after indexing, finalizing and merging: shards labelled %q, observers %q; want all %q and %q", run, observer, phase.Track, phase.Observe)
}

// all reports whether labels holds at least one label, and only want.
func all(labels []string, want string) bool {
	return len(labels) > 0 && !slices.ContainsFunc(labels, func(l string) bool { return l != want })
}
