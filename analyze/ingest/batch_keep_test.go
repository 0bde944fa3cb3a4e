package ingest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// keepingSink keeps every batch it is given (as an engine's shards do) and
// notes what each held then, to compare after Read has moved on.
type keepingSink struct {
	kept  []*Batch
	spans []int
	names []string
}

func (s *keepingSink) ConsumeTraces(*Input, ptrace.Traces) error { return nil }

func (s *keepingSink) ConsumeBatch(_ *Input, b *Batch) error {
	b.Keep()
	s.kept = append(s.kept, b)
	s.spans = append(s.spans, len(b.Spans))
	s.names = append(s.names, b.Spans[0].Name)
	return nil
}

// TestAKeptBatchIsNotRecycledUntilReleased pins Keep and Release: a batch
// the sink kept still holds its spans after Read has returned (Read's own
// reference let go is not the last one): the sink's is the one left. Both committed OTLP JSON lines and protobuf dumps, whose
// batches come from the projection decoders.
func TestAKeptBatchIsNotRecycledUntilReleased(t *testing.T) {
	for _, name := range []string{"acquire-on-miss.otlp.jsonl", "acquire-on-miss.otlp.pb"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "testdata", "traces", name)
			s := &keepingSink{}
			if _, err := Read(t.Context(), []string{path}, ReadOptions{Strict: true, Keep: testKeep}, s); err != nil {
				t.Fatal(err)
			}
			if len(s.kept) == 0 {
				t.Fatal("the dump gave the BatchSink no batch")
			}
			for i, b := range s.kept {
				if len(b.Spans) != s.spans[i] || len(b.Spans) == 0 || b.Spans[0].Name != s.names[i] {
					t.Errorf("kept batch %d holds %d spans after Read returned, want its %d (first named %q): recycled while kept",
						i, len(b.Spans), s.spans[i], s.names[i])
				}
				if got := b.refs.outstanding(); got != 1 {
					t.Errorf("kept batch %d has %d references after Read, want the sink's 1", i, got)
				}
				Release(b)
			}
		})
	}
}

// TestAKeptBatchStaysChargedUntilItsLastRelease pins where the budget's
// share in flight gets a kept batch's charge back: not when the sink has
// taken the job's records, but when the last reference the sink kept is
// released (an engine's shards read a batch after ConsumeBatch returned,
// so the batches queued to them are the reader's to answer for, and the
// decoders wait for room while they are queued). A right-sized copy kept
// instead carries the charge of what it holds. Records of one span and
// 2,000 left out (no ids) make a batch of capacity for 2,001 spans, which
// RightSized copies.
func TestAKeptBatchStaysChargedUntilItsLastRelease(t *testing.T) {
	keys := newKeepSet(testKeep)
	const records, shards = 3, 2
	for _, rightSized := range []bool{false, true} {
		t.Run(fmt.Sprintf("right-sized %v", rightSized), func(t *testing.T) {
			share := newInflight(64 << 20)
			produce := recordsProducer(records, func(i int) []byte { return tinySpansLine(i, 2000) })
			var kept []*Batch
			var least int64 // what the kept batches' slices hold
			consume := func(r *result) error {
				if r.batch == nil {
					t.Fatalf("record %d: %v, want a batch", len(kept)+1, r.prob)
				}
				r.batch.refs.start() // Read's own, as fileState.consume takes it
				k := r.batch
				if rightSized {
					if k = RightSized(r.batch); k == r.batch {
						t.Fatal("RightSized kept a batch of 2,001 spans' capacity holding one")
					}
				}
				for range shards {
					k.Keep()
				}
				kept = append(kept, k)
				least += k.capBytes()
				Release(r.batch)
				return nil
			}
			if err := runPipeline(context.Background(), 2, produce, checkSpans("-", decodeOTLPJSONLine("-", keys, share)), consume, share); err != nil {
				t.Fatal(err)
			}
			if share.used < least || least == 0 {
				t.Errorf("the read over, %d kept batches are charged %d bytes to the share, want at least the %d they hold",
					len(kept), share.used, least)
			}
			for _, b := range kept {
				for range shards {
					Release(b)
				}
			}
			if share.used != 0 {
				t.Errorf("%d bytes still charged once every kept batch was released, want 0", share.used)
			}
		})
	}
}

// holdingSink keeps every pdata batch's charge for readers readers, as an
// engine hands a batch to its shards, and counts the batches that came
// without one.
type holdingSink struct {
	readers int
	holds   []*Hold
	plain   int
}

func (s *holdingSink) ConsumeTraces(*Input, ptrace.Traces) error { s.plain++; return nil }

func (s *holdingSink) ConsumeHeldTraces(_ *Input, _ ptrace.Traces, h *Hold) error {
	for range s.readers {
		h.Keep()
	}
	s.holds = append(s.holds, h)
	return nil
}

// TestHeldTracesStayChargedUntilTheirLastRelease pins the pdata path's
// counterpart of a kept batch: a HoldingSink's traces stay charged to the
// share in flight, by what pdata's decode of them was charged, until the
// last reader the sink handed them to releases them.
func TestHeldTracesStayChargedUntilTheirLastRelease(t *testing.T) {
	const records = 3
	share := newInflight(64 << 20)
	sink := &holdingSink{readers: 2}
	st := &fileState{in: &Input{Path: "-"}, sink: sink, holding: sink, share: share}
	produce := recordsProducer(records, func(i int) []byte { return tinySpansLine(i, 200) })
	if err := runPipeline(context.Background(), 2, produce, checkSpans("-", decodeOTLPJSONLine("-", nil, share)), st.consume, share); err != nil {
		t.Fatal(err)
	}
	if len(sink.holds) != records || sink.plain != 0 {
		t.Fatalf("the sink was handed %d held batches and %d plain ones, want %d held", len(sink.holds), sink.plain, records)
	}
	var held int64
	for _, h := range sink.holds {
		if h.n <= 0 {
			t.Errorf("a held batch carries a charge of %d bytes, want what its decode was charged", h.n)
		}
		held += h.n
	}
	if share.used != held {
		t.Errorf("the read over, %d bytes are charged to the share, want the %d the held batches carry", share.used, held)
	}
	for _, h := range sink.holds {
		for range sink.readers {
			h.Release()
		}
	}
	if share.used != 0 {
		t.Errorf("%d bytes still charged once every held batch was released, want 0", share.used)
	}
}

// TestReadHandsAHoldingSinkItsTracesWithTheirCharge pins Read's side: a
// dump pdata decodes (OTLP JSON lines, for a sink that takes no compact
// batches) reaches a HoldingSink through ConsumeHeldTraces, each batch
// with its charge.
func TestReadHandsAHoldingSinkItsTracesWithTheirCharge(t *testing.T) {
	sink := &holdingSink{readers: 1}
	path := filepath.Join("..", "..", "testdata", "traces", "acquire-on-miss.otlp.jsonl")
	if _, err := Read(t.Context(), []string{path}, ReadOptions{Strict: true}, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.holds) == 0 || sink.plain != 0 {
		t.Fatalf("the sink was handed %d held batches and %d plain ones, want every batch held", len(sink.holds), sink.plain)
	}
	for i, h := range sink.holds {
		if h.n <= 0 {
			t.Errorf("held batch %d carries a charge of %d bytes, want what its decode was charged", i, h.n)
		}
		h.Release()
	}
}
