package engine

import (
	"context"

	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/phase"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// A shard that finalizes traces while it reads (a stream, a speculative
// batch run) hands each finalization to an observer of its own, which
// observes the finalized traces and merges the observation while the
// shard goes on indexing. Observing and merging are most of a shard's
// work; done on the shard's goroutine, they left the decoding workers
// waiting for it (a protobuf dump kept one core of two busy), and on
// another goroutine they take whichever core is free. The observer merges
// in the order the shard finalized, so the low marks reach the pair stage
// in the same order as before.

// finalization is what one scan hands the observer: the traces it
// finalized in small (a copy borrowing the open index's names and values,
// or the open index itself, handed over), and the shard's low mark once
// they are merged. small is nil when the scan finalized nothing and only
// the low mark moves.
type finalization struct {
	small *index.Index
	low   int64
	seq   int64 // the batch the shard was reading (shard.seq)
	// passed says the shard has read batch seq: the observer passes it
	// (Engine.pass) with the shard's memory then and the batch's tally.
	passed bool
	tally  *tally
	mem    int64
	// dups are the copies the shard's indexes dropped, added to the last
	// observation's (flush).
	dups int
}

// observer is a shard's observer: the finalizations handed to it, in
// order, and the scratch indexes it gives back, reset.
type observer struct {
	jobs chan finalization
	done chan struct{}
	free chan *index.Index
	made int // scratch indexes made so far, at most scratchIndexes
}

// scratchIndexes is how many scratch indexes a shard with an observer
// fills in turn: one observed while the next is filled. It bounds what
// the observer holds, so the shard waits rather than run ahead.
const scratchIndexes = 2

// passedBatches is how many batches a shard may read past what its
// observer has merged (each one a finalization, passed: Engine.pass):
// while a merge waits for its turn, or runs (an early advance: tens of
// milliseconds), the shard reads on, as when it handed nothing to pass,
// up to this many batches of spans (some hundred thousand).
const passedBatches = 256

// startObserver gives s an observer on a goroutine of its own.
func (s *shard) startObserver() {
	s.obs = &observer{
		jobs: make(chan finalization, 4*scratchIndexes+passedBatches), // low marks without traces, and batches read, queue too
		done: make(chan struct{}),
		free: make(chan *index.Index, scratchIndexes),
	}
	obs := s.obs
	phase.Go(context.Background(), phase.Observe, func(ctx context.Context) { s.observeHanded(ctx, obs) })
}

// observeHanded is the observer's goroutine: it measures each
// finalization in turn and gives its scratch index back. ctx carries the
// goroutine's phase label (observe), which measure's phases give back.
func (s *shard) observeHanded(ctx context.Context, o *observer) {
	defer close(o.done)
	defer s.e.pass(s.id, noBatch, nil, 0)
	for f := range o.jobs {
		if f.passed {
			s.e.pass(s.id, f.seq, f.tally, f.mem)
			continue
		}
		s.measure(ctx, f)
		if f.small != nil {
			f.small.Reset() // lets go of the open index's tables, if borrowed
			o.free <- f.small
		}
	}
}

// group finishes x (its spans grouped by trace, copies left out, parents
// linked) under the phase label group. Whichever query first needs a
// finished index would otherwise finish it under its own label: detection,
// before observation, would carry the grouping's cost.
func group(ctx context.Context, x *index.Index) { phase.Do(ctx, phase.Group, x.Finish) }

// measure observes one finalization's traces, under the vocabulary
// decided for them (observeConfig: a resource's vocabulary is the first
// one its traces show, in the order of the batches and the shards), and
// merges the observation with the shard's low mark.
func (s *shard) measure(ctx context.Context, f finalization) {
	var o *observation
	var err error
	if f.small != nil {
		var cfg rulefmt.Config
		var det *vocab.Detection
		group(ctx, f.small)
		phase.Do(ctx, phase.Detect, func() { cfg, det = s.e.observeConfig(f.small, s.id, f.seq) })
		phase.Do(ctx, phase.Observe, func() { o, err = observeWith(f.small, cfg, det) })
		if o != nil {
			o.duplicates += f.dups
		}
	}
	phase.Do(ctx, phase.Merge, func() { s.e.merge(s.id, o, f.low, f.seq, err) })
}

// hand gives f to the shard's observer. Only a shard that finalizes
// early finalizes before its flush, and every such shard has one.
func (s *shard) hand(f finalization) {
	f.seq = s.seq
	s.obs.jobs <- f
}

// stopObserver returns once the observer has measured all it was handed;
// a batch shard has none.
func (s *shard) stopObserver() {
	if s.obs == nil {
		return
	}
	close(s.obs.jobs)
	<-s.obs.done
	s.obs = nil
}

// scratch returns an empty index for the traces the shard finalizes next:
// one index reset each time (index.Reset) rather than a fresh one, whose
// chunks and maps would be allocated and cleared again for every few
// hundred traces. The shard fills its scratch indexes in turn, waiting
// for one back when the observer holds them all. A handover takes one as
// the new open index and hands the old open index over, which comes back
// as a scratch one: scratchIndexes+1 indexes go round, the shard always
// holds one, so the observer never waits to give one back. The shard
// makes its scratch indexes before it takes one back, and takes them back
// in the order it handed them: which index it gets, and the capacity it
// kept (the open index's MemBytes counts it), is then the same on every
// run, as the memory budget's verdict must be (engine_budget.go).
func (s *shard) scratch() *index.Index {
	if s.obs.made < scratchIndexes {
		s.obs.made++
		x := index.New(s.e.cfg.IndexOptions())
		x.Reset()
		return x
	}
	return <-s.obs.free
}
