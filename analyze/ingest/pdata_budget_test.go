package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// pdataOnlyRecord is a protobuf request that only pdata reads (its span's
// kind is one OTLP does not define), of one span with n 6-byte int
// attributes: pdata holds some 15 times its size to decode it.
func pdataOnlyRecord(n int) []byte {
	attrs := bytes.Repeat(pb(nil).bytes(fieldSpanAttributes, pb(nil).bytes(2, pb(nil).varint(3, 1))), n)
	return request(baseResource, baseSpan(pb(nil).varint(fieldSpanKind, maxSpanKind+1), attrs))
}

// TestRecordsForPdataAreChargedWhatTheyGrowTo pins the memory budget on
// the records the projection decoder leaves to pdata, which builds every
// attribute at many times its size: a record whose decoding pdata would
// take exactly the share of the budget the records in flight may hold is
// read, one whose decoding takes one byte more is skipped with a warning
// naming its size and --max-memory, and the records around it are read.
func TestRecordsForPdataAreChargedWhatTheyGrowTo(t *testing.T) {
	rec := pdataOnlyRecord(40_000)
	if _, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
		t.Fatal("the projection decoder reads the record: the test pins nothing")
	}
	var u ptrace.ProtoUnmarshaler
	if _, err := u.UnmarshalTraces(rec); err != nil {
		t.Fatal(err)
	}
	need := pdataBytes(rec)
	if need < 3<<20 || need < 10*int64(len(rec)) {
		t.Fatalf("pdataBytes = %d for a record of %d bytes: want at least 3 MiB, ten times its size", need, len(rec))
	}
	okRec := request(baseResource, baseSpan())
	data := append(append(framed(okRec), framed(rec)...), framed(okRec)...)
	for _, tc := range []struct {
		name   string
		budget int64 // its share in flight is a quarter of it
		skips  bool
	}{
		{"a share of exactly what it takes", 4 * need, false},
		{"a share one byte short", 4 * (need - 1), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (ReadOptions{MaxMemory: tc.budget}).budget().inflightShare(); got != tc.budget/4 {
				t.Fatalf("share %d, want a quarter of the budget %d", got, tc.budget)
			}
			for _, workers := range []int{1, 4} {
				inputs, spans, err := readHostile(t, data, ReadOptions{MaxMemory: tc.budget, Workers: workers}, true)
				if err != nil {
					t.Fatalf("%d workers: %v", workers, err)
				}
				warned := len(inputs) == 1 && len(inputs[0].Warnings) == 1 && strings.Contains(inputs[0].Warnings[0], "only the full decoder (pdata) reads") &&
					strings.Contains(inputs[0].Warnings[0], "--max-memory")
				if want := 3 - btoi(tc.skips); spans != want || warned != tc.skips {
					t.Errorf("%d workers: %d spans read, warnings %q; want %d, warned %v", workers, spans, inputs[0].Warnings, want, tc.skips)
				}
			}
		})
	}
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestTheConsumerNeverWaitsForPdataRoom pins the share's rule for the
// records pdata decodes: a worker waits for room as for any charge; the
// goroutine that feeds the sink (which alone gives room back) never
// waits: it charges where there is room, fails with errNoRoom (which
// parks its job) where there is none, and charges at once, however full
// the share, for the job served. The decoders never come to wait on the
// share for it (decodersWait), so the consumer goes on helping them.
func TestTheConsumerNeverWaitsForPdataRoom(t *testing.T) {
	g := newInflight(10)
	stop := make(chan struct{})
	g.stop = stop
	g.serve(1)
	if n, err := g.chargePdata(2, 8, true); n != 8 || err != nil {
		t.Fatalf("the consumer's charge with room = %d, %v; want 8", n, err)
	}
	if n, err := g.chargePdata(3, 3, true); n != 0 || !errors.Is(err, errNoRoom) {
		t.Fatalf("the consumer's charge of 3 bytes where 2 are left = %d, %v; want errNoRoom", n, err)
	}
	if n, err := g.chargePdata(3, 2, true); n != 2 || err != nil {
		t.Fatalf("the consumer's charge of the 2 bytes left = %d, %v; want 2 (room is room up to the share)", n, err)
	}
	if n, err := g.chargePdata(1, 8, true); n != 8 || err != nil {
		t.Fatalf("the consumer's charge for the job served on a full share = %d, %v; want 8 at once", n, err)
	}
	if g.decodersWait() {
		t.Error("after records charged for pdata the decoders wait on the share: the consumer would stop helping them")
	}
	done := make(chan error, 1)
	go func() {
		_, err := g.chargePdata(4, 4, false)
		done <- err
	}()
	close(stop)
	if err := <-done; err != errReadStopped {
		t.Errorf("a worker's charge on a full share = %v, want it to wait until the read stops", err)
	}
}

// TestPdataRecordsInFlightStayWithinTheShareAndOneRecord is the pdata
// path's counterpart of TestBatchesInFlightStayWithinTheShareAndOneRecord:
// with a share of one and a half records' charge and the sink holding the
// first record until the decoders can go no further, the consumer's
// charge for a job not yet served finds no room and parks the job, which
// the consumer finishes once served. Every record is read, in order; the
// charges never pass the share by more than one record's; all are given
// back.
func TestPdataRecordsInFlightStayWithinTheShareAndOneRecord(t *testing.T) {
	const records = 6
	record := func(i int) []byte { return tinySpansLine(i, 300) }
	dry := newInflight(1 << 30)
	if res := decodeOTLPJSONLine("-", nil, dry)(rec{data: record(1), seq: 1}); res.prob != nil || res.td.SpanCount() == 0 {
		t.Fatalf("a record alone: %v", res.prob)
	}
	one := dry.peak
	for _, workers := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			share := newInflight(one * 3 / 2)
			full := make(chan struct{})
			var fullOnce sync.Once
			share.full = func() { fullOnce.Do(func() { close(full) }) }
			var parked atomic.Int32
			decode := func(r rec) result {
				res := decodeOTLPJSONLine("-", nil, share)(r)
				if res.prob != nil && errors.Is(res.prob, errNoRoom) {
					parked.Add(1)
				}
				return res
			}
			produce := recordsProducer(records, record)
			var got []int
			consume := func(r *result) error {
				if len(got) == 0 {
					<-full // the sink holds the first record until a charge finds the share full
				}
				if r.prob != nil || r.td.SpanCount() == 0 {
					t.Fatalf("record %d: %v, want its spans", len(got)+1, r.prob)
				}
				got = append(got, int(r.td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SpanID()[7]))
				return nil
			}
			if err := runPipeline(context.Background(), workers, produce, decode, consume, share); err != nil {
				t.Fatal(err)
			}
			if len(got) != records || !slices.IsSorted(got) || got[0] != 1 {
				t.Errorf("read records %v, want 1 to %d in order", got, records)
			}
			if share.peak > share.size+one {
				t.Errorf("the share's charges peaked at %d bytes; want at most the share %d and one record's %d", share.peak, share.size, one)
			}
			if share.used != 0 {
				t.Errorf("%d bytes still charged after the read", share.used)
			}
			t.Logf("%d records parked by the consumer's charge", parked.Load())
		})
	}
}

// TestAPdataRecordTheConsumerFindsNoRoomForParksItsJob pins the park of
// a pdata record, step by step: with the share held by the job served,
// the goroutine that feeds the sink, decoding a later job, finds no room
// for the record's charge and parks that job at it, charging nothing;
// once that job is served, the consumer decodes the record (charged at
// once, as the job served) and hands it on, and every charge comes back.
func TestAPdataRecordTheConsumerFindsNoRoomForParksItsJob(t *testing.T) {
	share := newInflight(64 << 20)
	share.serve(1)
	held, err := share.take(1, share.size-1024) // the job served holds all but 1 KiB
	if err != nil {
		t.Fatal(err)
	}
	p := &pipeline{ctx: context.Background(), share: share}
	decode := decodeOTLPJSONLine("-", nil, share)
	j := newJob()
	j.seq, j.recs = 2, []rec{{data: tinySpansLine(2, 300), line: 2}}
	p.decodeJob(j, decode, true)
	if !j.parked || j.next != 0 || len(j.res) != 0 {
		t.Fatalf("job 2 decoded by the consumer on a full share: parked %v at record %d with %d results; want parked at 0 with none", j.parked, j.next, len(j.res))
	}
	if share.used != held {
		t.Errorf("the share holds %d bytes after the park, want the served job's %d: the refused charge given back", share.used, held)
	}
	share.serve(2)
	var spans int
	if err := p.consumeParked(j, decode, func(r *result) error {
		if r.prob != nil {
			return r.prob
		}
		spans += r.td.SpanCount()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if spans == 0 {
		t.Error("the parked record was not handed on once its job was served")
	}
	share.give(held)
	if share.used != 0 {
		t.Errorf("%d bytes still charged once the parked record was taken", share.used)
	}
}
