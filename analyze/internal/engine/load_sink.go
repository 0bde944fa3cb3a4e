package engine

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
)

// loadSink is Load's sink: the index's own ConsumeTraces and ConsumeBatch,
// plus the progress callback and the memory budget checked after each
// batch.
type loadSink struct {
	idx      *index.Index
	read     int   // spans read so far over all inputs
	limit    int64 // bytes the index may take: half of the budget
	progress func(in *Input, spansRead int)
}

var _ ingest.BatchSink = (*loadSink)(nil)

func (s *loadSink) ConsumeTraces(in *ingest.Input, td ptrace.Traces) error {
	s.read += td.SpanCount()
	if err := s.idx.ConsumeTraces(in, td); err != nil {
		return err
	}
	return s.after(in)
}

func (s *loadSink) ConsumeBatch(in *ingest.Input, b *ingest.Batch) error {
	s.read += len(b.Spans)
	if err := s.idx.ConsumeBatch(in, b); err != nil {
		return err
	}
	return s.after(in)
}

// after reports progress and stops the read with ErrMemoryLimit when the
// index has outgrown its half of the budget.
func (s *loadSink) after(in *Input) error {
	if s.progress != nil {
		s.progress(in, s.read)
	}
	if m := s.idx.MemBytes(); m > s.limit {
		return &ReadError{Path: in.Path, Offset: -1, Expected: "a dump that fits the memory budget",
			Err: fmt.Errorf("%w: %d spans read take %d MiB, past half of the %d MiB budget (raise --max-memory, or analyze fewer files at once)",
				ErrMemoryLimit, s.read, m>>20, 2*s.limit>>20)}
	}
	return nil
}

// feedSink is Feed's sink: the engine's shards take every batch, the
// projection decoders' ones shared among them without a copy (Engine.addFast),
// with the progress callback. The engine judges the memory budget, summed
// over the shards, once they have read each batch (engine_budget.go).
type feedSink struct {
	eng      *Engine
	read     int
	progress func(in *Input, spansRead int)
}

var (
	_ ingest.BatchSink   = (*feedSink)(nil)
	_ ingest.HoldingSink = (*feedSink)(nil)
)

func (s *feedSink) ConsumeTraces(in *ingest.Input, td ptrace.Traces) error {
	return s.ConsumeHeldTraces(in, td, nil)
}

// ConsumeHeldTraces hands td to the shards, which release h (nil: none)
// once each has read it: the reader's share of the budget holds td until
// then.
func (s *feedSink) ConsumeHeldTraces(in *ingest.Input, td ptrace.Traces, h *ingest.Hold) error {
	s.read += td.SpanCount()
	if err := s.eng.add(td, h, &readPoint{in.Path, s.read}); err != nil {
		return err
	}
	s.after(in)
	return nil
}

func (s *feedSink) ConsumeBatch(in *ingest.Input, b *ingest.Batch) error {
	s.read += len(b.Spans)
	if err := s.eng.addFast(b, &readPoint{in.Path, s.read}); err != nil {
		return err
	}
	s.after(in)
	return nil
}

// after reports progress.
func (s *feedSink) after(in *Input) {
	if s.progress != nil {
		s.progress(in, s.read)
	}
}

// overBudget is the error of a run whose engine holds m bytes, past limit
// (half of the budget), after read spans (-1: all of them).
func (e *Engine) overBudget(read int, m, limit int64) error {
	spans := "the spans read"
	if read >= 0 {
		spans = fmt.Sprintf("%d spans read", read)
	}
	return budgetError(spans, m, limit, stateParts{e.pairBytes.Load(), e.pending.Load(), e.scopes.Load(), e.pairKeys.Load()})
}

// checkBudget returns the error of an analysis whose state across traces
// (stateBytes) is past limit, half of the budget; nil when it is not, or
// limit is 0.
func (a *aggregate) checkBudget(limit int64) error {
	if m := a.stateBytes(); limit > 0 && m > limit {
		return budgetError("the spans read", m, limit, stateParts{m, a.pairs.PendingBytes(), int64(a.pairs.NumScopes()), int64(a.pairs.NumPairs())})
	}
	return nil
}

// stateParts describes the aggregate's state across traces for the
// budget's error: its bytes (aggregate.stateBytes), of them those of the
// acquires waiting for the pair stage, and its distinct pool scopes and
// (scope, key) pairs.
type stateParts struct {
	bytes, pending, scopes, pairs int64
}

// budgetError is the error of a run that holds m bytes, past limit (half
// of the budget). When the state across traces holds most of it, and
// most of that grows with the distinct scopes and keys (their state and
// names) rather than with the acquires, it names the distinct pool
// scopes, or keys, whichever weigh more: the remedy for them is not to
// bound the open traces.
func budgetError(spans string, m, limit int64, st stateParts) error {
	if 2*st.bytes > m && 2*st.pending < st.bytes {
		if st.scopes*measure.ScopeBytes >= st.pairs*measure.PairBytes {
			return fmt.Errorf("%w: too many distinct pool scopes: %s hold %d scopes, whose figures, names and report rows take %d MiB, past half of the %d MiB budget (raise --max-memory, or name the pool scope with --scope-attr by an attribute of fewer distinct values)",
				ErrMemoryLimit, spans, st.scopes, st.bytes>>20, 2*limit>>20)
		}
		return fmt.Errorf("%w: too many distinct pool keys: %s hold %d (scope, key) pairs, whose names and attribution state take %d MiB, past half of the %d MiB budget (raise --max-memory, or analyze fewer files at once)",
			ErrMemoryLimit, spans, st.pairs, st.bytes>>20, 2*limit>>20)
	}
	return fmt.Errorf("%w: %s take %d MiB, past half of the %d MiB budget (raise --max-memory, analyze fewer files at once, or bound the open traces with --window or --max-open-traces)",
		ErrMemoryLimit, spans, m>>20, 2*limit>>20)
}
