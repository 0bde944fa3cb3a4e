package engine

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
)

// The memory budget of an Engine fed by a reader (Feed) is judged per
// batch, on what the shards hold once every one of them has read it (a
// tally): never on what the shards hold at the moment the reader looks,
// which depends on how far each got, so the same input and budget passed
// on one run and stopped on the next. A run stops at the first batch
// whose tally passes the limit, the same batch on every run: the shards
// read every batch sent before the read stops. The projection decoders'
// batches queued to the shards are not in the tally: they stay on the
// reader's share in flight until the last shard releases them
// (ingest.Batch.Keep), so the decoders wait for room while the shards
// are behind, rather than the read failing on batches about to be read;
// they are right-sized before they queue (ingest.RightSized), so none
// holds more than twice what it carries. A
// speculative run's spoiling is placed the
// same way (spoiledAt), so whichever of the two came at the earlier
// batch decides how the read ends (readVerdict). A run that finalizes
// early merges what its shards finalize on their observers' goroutines
// while the shards read, in the order of the batches (awaitTurn), and
// judges a batch once every observer has merged what came before it and
// nothing after (pass), adding the state across traces then.

// shardQueue is how many batches a shard's channel holds.
const shardQueue = 4

// noBatch is spoiledAt and budgetAt while nothing happened; endOfRead
// places what is found once every batch was read (a trace finalized
// twice, a vocabulary that changed), after every batch.
const (
	noBatch   = math.MaxInt64
	endOfRead = math.MaxInt64 - 1
)

// readPoint is where a batch ends in the input, for the budget's error:
// the input's path and the spans read over all inputs so far.
type readPoint struct {
	path string
	read int
}

// tally adds up the shards' memory once each has read one batch
// (shard.mem), for the memory budget. The last shard to read the batch
// judges it (Engine.settle).
type tally struct {
	left atomic.Int32 // shards still to read the batch
	sum  atomic.Int64
	seq  int64
	at   readPoint
}

// sendBatch numbers m, gives it a tally when the engine has a budget and
// at places it in the input (nil: given to Add, outside any read), and
// sends it to every shard. Only the goroutine that feeds the engine calls
// it.
func (e *Engine) sendBatch(m shardMsg, at *readPoint) {
	e.seq++
	m.seq = e.seq
	if e.memLimit > 0 && at != nil {
		m.tally = &tally{seq: e.seq, at: *at}
		m.tally.left.Store(int32(len(e.shards)))
	}
	e.send(m)
}

// pass records that shard's observer has merged everything the shard
// finalized up to batch seq, which the shard has read (noBatch: the
// observer is done), and adds the shard's memory then, mem, to the
// batch's tally t (nil: none): the last shard's judges it, with the
// state across traces merged from the batches up to seq and none after
// (no merge of a later batch takes its turn before this shard's
// observer passed seq: awaitTurn), the same on every run. It takes the
// engine's lock only to wake merges waiting for their turn, or to stop
// the read: an observer waiting for it behind a merge would leave its
// shard waiting too, once the batches passed fill the observer's queue.
func (e *Engine) pass(shard int, seq int64, t *tally, mem int64) {
	if t != nil {
		if sum, last := t.add(mem); last {
			e.judge(t, sum+e.pairBytes.Load())
		}
	}
	e.passedAt[shard].Store(seq)
	if e.waiting.Load() > 0 {
		e.mu.Lock()
		e.turns.Broadcast()
		e.mu.Unlock()
	}
}

// awaitTurn returns once a finalization a shard handed while reading
// batch seq may be merged: once every observer has passed the batches
// before seq, and those of the shards before this one seq too. The
// merges then come in the order of the batches, and of the shards within
// one, on every run, so what the state across traces holds when a batch
// is judged (pass), and where an early advance finds an acquire out of
// order, do not depend on how far each observer got. A shard's observer
// waits only for shards given the batches before seq, which the sink
// sent before seq to any. e.mu must be held.
func (e *Engine) awaitTurn(shard int, seq int64) {
	e.waiting.Add(1) // before isTurn reads passedAt: pass stores it before it reads waiting
	for !e.isTurn(shard, seq) {
		e.turns.Wait()
	}
	e.waiting.Add(-1)
}

// isTurn reports whether shard's finalization of batch seq may be merged
// (awaitTurn).
func (e *Engine) isTurn(shard int, seq int64) bool {
	for o := range e.passedAt {
		if at := e.passedAt[o].Load(); (o < shard && at < seq) || (o > shard && at < seq-1) {
			return false
		}
	}
	return true
}

// settle adds a batch shard's memory, once it has read t's batch, to t;
// the last shard to do so judges the batch on the shards' memory. A
// batch run merges nothing before
// Flush, whose own check judges the state across traces once every trace
// is merged (a shard that flushes first would otherwise add its part to
// the tallies of the last batches another shard still reads); a shard
// that finalizes early has its observer pass the batch instead (pass).
func (e *Engine) settle(t *tally, mem int64) {
	if sum, last := t.add(mem); last {
		e.judge(t, sum)
	}
}

// add counts one shard's memory, mem, once it has read t's batch, and
// reports whether that shard was the last to, with the sum of every
// shard's then (each adds before it counts itself out).
func (t *tally) add(mem int64) (sum int64, last bool) {
	t.sum.Add(mem)
	if t.left.Add(-1) != 0 {
		return 0, false
	}
	return t.sum.Load(), true
}

// judge stops the read at t's batch, whose tally came to m bytes, when m
// is past memLimit, unless an earlier batch did.
func (e *Engine) judge(t *tally, m int64) {
	if m <= e.memLimit {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.seq < e.budgetAt {
		e.budgetAt = t.seq
		e.budgetErr = &ReadError{Path: t.at.path, Offset: -1, Expected: "a dump that fits the memory budget",
			Err: e.overBudget(t.at.read, m, e.memLimit)}
	}
	e.stopped.Store(true)
}

// spoil marks a speculative run spoiled at batch seq (endOfRead: once
// every batch was read), keeping the earliest.
func (e *Engine) spoil(seq int64) {
	for {
		at := e.spoiledAt.Load()
		if seq >= at || e.spoiledAt.CompareAndSwap(at, seq) {
			break
		}
	}
}

// isSpoiled reports whether a shard has spoiled the run (spoil).
func (e *Engine) isSpoiled() bool { return e.spoiledAt.Load() != noBatch }

// readVerdict is why the read must stop, nil when nothing says so: the
// memory budget passed, or a span came for a trace already measured
// (errSpoiled), whichever came at the earlier batch. e.mu must be held.
func (e *Engine) readVerdict() error {
	at := e.spoiledAt.Load()
	if e.budgetErr != nil && e.budgetAt < at {
		return e.budgetErr
	}
	if at != noBatch {
		return errSpoiled
	}
	return nil
}

// abandon stops the engine after its read ended with err, and returns
// what the run ends with: the engine's own verdict (readVerdict), decided
// once the shards read every batch sent, when it has one, else err. The
// read stops at the first verdict it sees, which may not be the earliest
// one the shards still behind then find. A cancelled run ends with its
// context's error whatever the shards found: the caller asked it to stop,
// not to read again (errSpoiled) or to be told about the budget.
func (e *Engine) abandon(err error) error {
	e.Close()
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if v := e.readVerdict(); v != nil {
		return v
	}
	return err
}
