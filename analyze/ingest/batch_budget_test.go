package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// tinySpansLine is an OTLP JSON line of one span (id id) and n empty
// ones: some 3 bytes of the line each, 80 in a batch (their trace ids
// are invalid: they are left out once decoded, after the batch held
// them).
func tinySpansLine(id, n int) []byte {
	return []byte(`{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + hostileSpanJSON(id) + `}` +
		strings.Repeat(`,{}`, n) + `]}]}]}`)
}

// freshBatchBytes is what the batch of record data holds decoded into a
// batch of its own, not one from the pool: what the record is charged,
// and what the share must hold for it to be read.
func freshBatchBytes(t *testing.T, data []byte, proto bool, keys *keepSet) int64 {
	t.Helper()
	b := new(Batch)
	if err := b.startCharge(nil, keys.room); err != nil {
		t.Fatal(err)
	}
	strs := &stringCache{m: map[string]string{}}
	var ok bool
	if proto {
		d := protoDec{keep: keys, out: b, strs: strs}
		ok = d.request(data)
	} else {
		d := fastDec{b: data, keys: keys, out: b, strs: strs}
		ok = d.request()
	}
	if !ok {
		t.Fatal("the projection decoder does not take the record: the case tests nothing")
	}
	return b.capBytes()
}

// tinyRecordCase is a record of many tiny spans between two records of
// one span, and what the projection decoder keeps of it.
type tinyRecordCase struct {
	name  string
	input []byte
	big   []byte // the record of tiny spans, as the decoder sees it
	proto bool
	spans int // the big record's spans with a valid trace id
}

// tinyRecordCases are records that hold some 6 to 30 times their size as
// a batch, on each path to a projection decoder.
func tinyRecordCases(t *testing.T) []tinyRecordCase {
	line := tinySpansLine(2, 60_000)
	lines := bytes.Join([][]byte{tinySpansLine(1, 0), line, tinySpansLine(3, 0), nil}, []byte("\n"))
	okRec := request(baseResource, baseSpan())
	around := func(frame func([]byte) []byte, big []byte) []byte {
		return append(append(frame(okRec), frame(big)...), frame(okRec)...)
	}
	ids := request(nil, slices.Repeat([]pb{pb(nil).bytes(1, testTraceID)}, 40_000)...)
	attrs := request(nil, slices.Repeat([]pb{pb(nil).bytes(1, testTraceID).bytes(fieldSpanAttributes, intAttr("x", 1))}, 25_000)...)
	resources := bytes.Repeat(pb(nil).bytes(1, pb(nil).bytes(2, pb(nil).bytes(2, nil))), 45_000)
	zstdFrame := func(rec []byte) []byte { return zstdFramed(t, rec) }
	return []tinyRecordCase{
		{"a JSON line of empty spans", lines, line, false, 1},
		{"a protobuf record of spans of a trace id", around(framed, ids), ids, true, 40_000},
		{"a protobuf record of spans of a tiny kept attribute", around(framed, attrs), attrs, true, 25_000},
		{"a protobuf record of resources of an empty span", around(framed, resources), resources, true, 0},
		{"a zstd JSON record of empty spans", append(append(zstdFrame(tinySpansLine(1, 0)), zstdFrame(line)...), zstdFrame(tinySpansLine(3, 0))...), line, false, 1},
	}
}

// TestARecordOfTinySpansIsChargedWhatItsBatchHolds pins the memory budget
// on the projection decoders' batches, which hold a span at 80 bytes and
// an attribute at 56 whatever their size in the record (an empty span is
// 2 bytes of protobuf): a record whose batch holds exactly the share of
// the budget the records in flight may hold is read; one byte more and
// it is skipped with a warning naming its size and --max-memory, the
// records around it read, on 1 and 4 workers.
func TestARecordOfTinySpansIsChargedWhatItsBatchHolds(t *testing.T) {
	keys := newKeepSet(testKeep)
	for _, rc := range tinyRecordCases(t) {
		t.Run(rc.name, func(t *testing.T) {
			need := freshBatchBytes(t, rc.big, rc.proto, keys)
			if need < 4<<20 || int64(len(rc.big)) > need/4 {
				t.Fatalf("the batch holds %d bytes of a record of %d: the case wants at least 4 MiB, four times the record (its cap)", need, len(rc.big))
			}
			for _, tc := range []struct {
				name   string
				budget int64 // its share in flight is a quarter of it
				skips  bool
			}{
				{"a share of exactly its batch", 4 * need, false},
				{"a share one byte short", 4 * (need - 1), true},
			} {
				if got := (ReadOptions{MaxMemory: tc.budget}).budget().inflightShare(); got != tc.budget/4 {
					t.Fatalf("%s: share %d, want a quarter of the budget %d", tc.name, got, tc.budget)
				}
				for _, workers := range []int{1, 4} {
					opts := ReadOptions{MaxMemory: tc.budget, Workers: workers, Keep: testKeep, MaxDecompressionRatio: -1}
					inputs, spans, err := readHostile(t, rc.input, opts, true)
					if err != nil {
						t.Fatalf("%s, %d workers: %v", tc.name, workers, err)
					}
					warned := 0
					for _, w := range inputs[0].Warnings {
						if strings.Contains(w, "holds more spans, attributes and resources than the") && strings.Contains(w, "--max-memory") {
							warned++
						}
					}
					want := 2
					if !tc.skips {
						want += rc.spans
					}
					if spans != want || warned != btoi(tc.skips) {
						t.Errorf("%s, %d workers: %d spans read, warnings %q; want %d spans, %d budget warnings", tc.name, workers, spans, inputs[0].Warnings, want, btoi(tc.skips))
					}
				}
			}
		})
	}
}

// batchesInFlight counts the bytes of the batches decoded and not yet
// consumed, as the runtime holds them, and the most there were.
type batchesInFlight struct {
	mu        sync.Mutex
	now, peak int64
	largest   int64 // the largest batch
}

func (f *batchesInFlight) add(n int64) {
	f.mu.Lock()
	f.now += n
	f.peak, f.largest = max(f.peak, f.now), max(f.largest, n)
	f.mu.Unlock()
}

// TestBatchesInFlightStayWithinTheShareAndOneRecord pins the bound the
// charges put on the batches in flight, on 1 and 4 workers, JSON and
// protobuf: while the sink holds the first record, the decoders go on
// only as far as the share holds (a worker waits for room, the
// goroutine that feeds the sink parks the job it helps with), and the
// job the sink waits on, which may not wait, is decoded a record at a
// time once the share is full: what the batches hold never passes the
// share by more than one record's batch. Every record is read, in
// order, and every charge given back.
func TestBatchesInFlightStayWithinTheShareAndOneRecord(t *testing.T) {
	keys := newKeepSet(testKeep)
	const records = 4
	for _, tc := range []struct {
		name   string
		record func(i int) []byte
		proto  bool
	}{
		{"JSON lines of empty spans", func(i int) []byte { return tinySpansLine(i, 20_000) }, false},
		{"protobuf records of empty spans", func(i int) []byte {
			sp := pb(nil).bytes(1, testTraceID).bytes(2, append(testSpanID[:7:7], byte(i)))
			return request(nil, append([]pb{sp}, slices.Repeat([]pb{nil}, 40_000)...)...)
		}, true},
	} {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s, %d workers", tc.name, workers), func(t *testing.T) {
				runtime.GC()
				runtime.GC() // the pool's batches go: each record's is its own
				one := freshBatchBytes(t, tc.record(1), tc.proto, keys)
				share := newInflight(one * 3 / 2)
				full := make(chan struct{})
				var fullOnce sync.Once
				share.full = func() { fullOnce.Do(func() { close(full) }) }
				var decode func(rec) result
				if tc.proto {
					fr := &framedReader{s: &stream{path: "-"}, keep: keys, share: share}
					decode = func(r rec) result { return fr.decodeRecord(r, r.data, r.off) }
				} else {
					decode = decodeOTLPJSONLine("-", keys, share)
				}
				var inFlight batchesInFlight
				var decoded atomic.Int32
				all := make(chan struct{})
				counted := func(r rec) result {
					res := decode(r)
					if res.batch != nil {
						inFlight.add(res.batch.capBytes())
						if decoded.Add(1) == records {
							close(all)
						}
					}
					return res
				}
				produce := recordsProducer(records, tc.record)
				var got []int
				consume := func(r *result) error {
					if len(got) == 0 {
						select { // the sink holds the first record until the decoders can go no further
						case <-full:
						case <-all:
						}
					}
					if r.prob != nil || r.batch == nil {
						t.Fatalf("record %d: %v, want a batch", len(got)+1, r.prob)
					}
					got = append(got, int(r.batch.Spans[0].SpanID[7]))
					inFlight.add(-r.batch.capBytes())
					putBatch(r.batch)
					return nil
				}
				if err := runPipeline(context.Background(), workers, produce, counted, consume, share); err != nil {
					t.Fatal(err)
				}
				if len(got) != records || got[0] != 1 || got[records-1] != records {
					t.Errorf("%d workers: read records %v, want 1 to %d in order", workers, got, records)
				}
				if bound := share.size + inFlight.largest; inFlight.peak > bound || share.peak > bound {
					t.Errorf("%d workers: batches in flight peaked at %d bytes, the share's charges at %d; want at most the share %d and one record's %d",
						workers, inFlight.peak, share.peak, share.size, inFlight.largest)
				}
				if share.used != 0 {
					t.Errorf("%d workers: %d bytes still charged after the read", workers, share.used)
				}
			})
		}
	}
}

// TestTheShareParksWhatMayNotWait pins the share's rules for the
// batches' charges: a worker waits for room while its job is not the
// one served, and once it is, gets errNoRoom rather than pass the share
// (its job is then parked); the goroutine that feeds the sink never
// waits: errNoRoom, except for the job served, which charges at once; a
// charge takes the room it wants when the share holds it, else what it
// needs.
func TestTheShareParksWhatMayNotWait(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rule       waitRule
		used       int64 // by job 5
		seq        uint64
		need, want int64
		took       int64
		err        error // nil and took 0: the charge waits
	}{
		{"the room it wants", workerWaits, 2, 3, 2, 6, 6, nil},
		{"what it needs when the room it wants is not left", workerWaits, 6, 3, 2, 6, 2, nil},
		{"a worker's job not served, no room", workerWaits, 9, 3, 2, 6, 0, nil},
		{"a worker's job served, no room", workerWaits, 9, 2, 2, 6, 0, errNoRoom},
		{"the consumer's job not served, no room", neverWaits, 9, 3, 2, 6, 0, errNoRoom},
		{"the consumer's job served, no room", neverWaits, 9, 2, 2, 6, 2, nil},
		{"take's rule, the job served, no room", takeWaits, 9, 2, 2, 2, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newInflight(10)
			stop := make(chan struct{})
			g.stop = stop
			if _, err := g.take(5, tc.used); err != nil {
				t.Fatal(err)
			}
			g.serve(2)
			if tc.took == 0 && tc.err == nil {
				done := make(chan error, 1)
				go func() {
					_, err := g.reserve(tc.seq, tc.need, tc.want, tc.rule)
					done <- err
				}()
				close(stop)
				if err := <-done; !errors.Is(err, errReadStopped) {
					t.Fatalf("reserve = %v; want it to wait until the read stops", err)
				}
				return
			}
			took, err := g.reserve(tc.seq, tc.need, tc.want, tc.rule)
			if took != tc.took || !errors.Is(err, tc.err) {
				t.Errorf("reserve = %d, %v; want %d, %v", took, err, tc.took, tc.err)
			}
		})
	}
}

// TestAParkedJobIsFinishedARecordAtATime pins what becomes of a job
// whose record found no room where its decoder may not wait: the
// consumer helping with a later job, and a worker with the job served,
// each stop there with the records before it decoded; once the job is
// served the consumer hands those on, then decodes each record left and
// hands it on before the next, so the job passes the share by one
// record at most; every record is read, in order, and every charge
// given back.
func TestAParkedJobIsFinishedARecordAtATime(t *testing.T) {
	for _, tc := range []struct {
		name     string
		consumer bool
		other    int64 // charged by job 5, later than the parked one
		parkedAt int
		peak     int64
	}{
		{"the consumer helping with a later job", true, 0, 2, 10},
		{"a worker with the job served", false, 10, 0, 14},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newInflight(10)
			if _, err := g.take(5, tc.other); err != nil {
				t.Fatal(err)
			}
			g.serve(1)
			if !tc.consumer {
				g.serve(2)
			}
			p := &pipeline{ctx: context.Background(), ordered: make(chan *job, 1), share: g}
			decode := func(r rec) result {
				if err := r.charge.add(4); err != nil {
					if !errors.Is(err, errNoRoom) {
						t.Fatal(err)
					}
					return result{prob: &ReadError{Line: r.line, Err: err}}
				}
				return result{prob: &ReadError{Line: r.line}} // names the record
			}
			j := newJob()
			j.seq, j.recs = 2, []rec{{line: 1}, {line: 2}, {line: 3}}
			p.decodeJob(j, decode, tc.consumer)
			select {
			case <-j.done:
			default:
				t.Fatal("a parked job is not marked done: the consumer would wait on it")
			}
			if !j.parked || j.next != tc.parkedAt || len(j.res) != tc.parkedAt {
				t.Fatalf("parked %v at record %d with %d results; want parked at %d", j.parked, j.next, len(j.res), tc.parkedAt)
			}
			var got []int
			consume := func(r *result) error {
				got = append(got, r.prob.Line)
				return nil
			}
			p.ordered <- j
			close(p.ordered)
			if err := p.consumeJobs(decode, consume); err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || got[0] != 1 || got[2] != 3 || g.used != tc.other || g.peak != tc.peak {
				t.Errorf("read %v, %d bytes left charged, the charges peaked at %d; want 1 to 3, %d left, a peak of %d", got, g.used, g.peak, tc.other, tc.peak)
			}
		})
	}
}

// recordsProducer is a producer of n jobs, job i (from 1) of one record,
// record(i), on line i.
func recordsProducer(n int, record func(i int) []byte) producer {
	return func(ctx context.Context, emit emitFunc) {
		for i := 1; i <= n; i++ {
			j := newJob()
			j.recs = []rec{{data: record(i), line: i}}
			if !emit(j) {
				return
			}
		}
	}
}
