package ingest

import (
	"errors"
	"fmt"
	"slices"
	"unsafe"
)

// The projection decoders' batches in the memory budget. A Batch holds a
// span at sizeof(Span) and a kept attribute at sizeof(Attr) whatever
// their size in the record: a record of empty spans ({} in JSON, two
// bytes in protobuf) holds thirty to forty times its size decoded, so
// what the batches of the records in flight hold is charged to the share
// of the budget in flight, as what pdata builds is (pdataCharge): before
// a batch's slices grow, by their capacity, and until the sink has taken
// the job's records. The charges are the job's (jobCharge), taken from
// the share a chunk at a time, so a job of many small records costs a
// lock per chunk rather than per record, and a span costs one comparison
// (Batch.newSpan).

// Sizes of a batch's elements, as its slices hold them.
const (
	spanBytes     = int64(unsafe.Sizeof(Span{}))
	attrBytes     = int64(unsafe.Sizeof(Attr{}))
	resourceBytes = int64(unsafe.Sizeof(Resource{}))
)

// batchChunk is the least a job takes from the share at a time for its
// batches when the share has that much room: a lock per chunk, and a
// job's unused rest of one, given back with the job, is small next to
// any share (at least 3 MiB, inflightShare).
const batchChunk = 256 << 10

// minBatchCap is the capacity a batch's empty slice first grows to.
const minBatchCap = 16

// jobCharge is what the batches of one job's records hold charged to the
// share in flight: used by the batches, held taken from the share (used
// and room taken ahead), all of it given back once the sink has taken
// the job's records (pipeline.consumeJobs). A job is decoded by one
// goroutine at a time, so its charge needs no lock of its own. Where the
// share has no room, a worker waits for it while its job is not the one
// served, and the consumer never does (the room is what the sink's
// progress gives back); either parks the job (errNoRoom) rather than
// pass the share, except the consumer for the job served, which charges
// one record at a time (pipeline.consumeParked).
type jobCharge struct {
	share    *inflight // nil: nothing is charged
	seq      uint64
	consumer bool
	held     int64
	used     int64
}

// add charges n bytes more to the job: from the room it took ahead when
// that holds them, else from the share, taking a chunk when the share
// has room for one.
func (c *jobCharge) add(n int64) error {
	if c == nil || c.share == nil {
		return nil
	}
	if c.used+n > c.held {
		need := c.used + n - c.held
		rule := workerWaits
		if c.consumer {
			rule = neverWaits
		}
		took, err := c.share.reserve(c.seq, need, max(need, batchChunk), rule)
		if err != nil {
			return err
		}
		c.held += took
	}
	c.used += n
	return nil
}

// handOver takes n bytes of the job's charge (at most what it uses) out
// of the job, for a batch the sink keeps to give back to the share once
// released (Batch.Keep), and returns what it took: the job no longer gives
// them back when the sink has taken its records.
func (c *jobCharge) handOver(n int64) int64 {
	n = min(n, c.used)
	c.used -= n
	c.held -= n
	return n
}

// drop gives n bytes of the job's charge back to the job, for its next
// records: a batch let go before the sink saw it.
func (c *jobCharge) drop(n int64) {
	if c != nil {
		c.used -= n
	}
}

// batchTooLarge is why a batch stopped growing: the record's spans,
// attributes and resources would hold at least need bytes, more than
// the share.
type batchTooLarge struct{ need, share int64 }

func (e *batchTooLarge) Error() string {
	return fmt.Sprintf("%s: its spans, attributes and resources would take at least %d KiB decoded, more than the %d KiB the memory budget gives the records in flight",
		ErrRecordTooLarge, e.need>>10, e.share>>10)
}

// errBatchTooLarge is the cause of a record left out because its batch
// would hold more than the share in flight; what names the record, of
// size bytes. The batch stopped growing at the first size past the
// share, so what the record would take is known only to be at least
// that. Any other cause (the read stopped) is returned as it is.
func errBatchTooLarge(err error, what string, size int) error {
	var big *batchTooLarge
	if !errors.As(err, &big) {
		return err
	}
	return fmt.Errorf("%w: %s of %d KiB holds more spans, attributes and resources than the %d KiB the memory budget gives "+
		"the records in flight hold decoded (at least %d KiB; raise --max-memory to read it)",
		ErrRecordTooLarge, what, size>>10, big.share>>10, big.need>>10)
}

// batchBytes is what slices of s spans, r resources and a attributes
// hold.
func batchBytes(s, r, a int) int64 {
	return int64(s)*spanBytes + int64(r)*resourceBytes + int64(a)*attrBytes
}

// capBytes is what b's slices hold.
func (b *Batch) capBytes() int64 {
	return batchBytes(cap(b.Spans), cap(b.Resources), cap(b.Attrs))
}

// growCap is the capacity a slice of capacity c grows to to hold n
// elements: c when it does, else c doubled (from minBatchCap) until it
// does. A batch's slices grown from empty are powers of two, so what a
// record needs (makeRoom) does not depend on the batch it was given.
func growCap(c, n int) int {
	if n <= c {
		return c
	}
	c = max(c, minBatchCap)
	for c < n {
		c *= 2
	}
	return c
}

// decodeCharged runs one projection decoder (decode, filling out with the
// worker's string cache) over a record into a pooled batch charged to c
// as it grows (startCharge, settle): the batch when decode read spans;
// nil and no error when it gave up (the record goes to pdata) or read
// none; nil and the cause when the batch could not grow within the
// budget. Both projection decoders go through it, so a batch is charged
// and given back one way.
func decodeCharged(c *jobCharge, room int, decode func(out *Batch, sc *stringCache) bool) (*Batch, error) {
	sc := stringCaches.Get().(*stringCache)
	defer stringCaches.Put(sc)
	out := getBatch()
	err := out.startCharge(c, room)
	if err == nil && decode(out, sc) && len(out.Spans) > 0 {
		if err = out.settle(); err == nil {
			return out, nil
		}
	}
	if err == nil {
		err = out.err
	}
	out.uncharge()
	putBatch(out)
	return nil, err
}

// startCharge readies b, a batch a projection decoder is about to fill,
// for its record: room is the most attributes a span or a resource may
// add (keepSet.room), which newSpan and newResource keep free in Attrs;
// with a charge, what b's slices already hold (a pooled batch's) is
// charged to it, unless that is more than a quarter of the share, when
// they are let go (a pooled batch of a larger record), and so is every
// growth from then on, before it is made.
func (b *Batch) startCharge(c *jobCharge, room int) error {
	b.room = room
	if c == nil || c.share == nil {
		return nil
	}
	n := b.capBytes()
	if n > c.share.size/4 {
		b.Resources, b.Spans, b.Attrs = nil, nil, nil
		n = 0
	}
	if err := c.add(n); err != nil {
		return err
	}
	b.charge, b.charged = c, n
	return nil
}

// makeRoom grows b's slices for spans more spans and resources more
// resources, and keeps room attributes free past its attributes (the
// most the span or resource may add: Attrs then never grows while a
// span's attributes are read), charging the growth first: false, with
// b.err set, when the record's batch grown from empty would hold more
// than the share (batchTooLarge), or the charge cannot be made.
func (b *Batch) makeRoom(spans, resources int) bool {
	ns, nr, na := len(b.Spans)+spans, len(b.Resources)+resources, len(b.Attrs)+b.room
	s, r, a := growCap(cap(b.Spans), ns), growCap(cap(b.Resources), nr), growCap(cap(b.Attrs), na)
	if c := b.charge; c != nil {
		if need := batchBytes(growCap(0, ns), growCap(0, nr), growCap(0, na)); need > c.share.size {
			b.err = &batchTooLarge{need: need, share: c.share.size}
			return false
		}
		n := batchBytes(s, r, a)
		if err := c.add(n - b.charged); err != nil {
			b.err = err
			return false
		}
		b.charged = n
	}
	b.Spans, b.Resources, b.Attrs = regrow(b.Spans, s), regrow(b.Resources, r), regrow(b.Attrs, a)
	return true
}

// regrow returns s with capacity n (at least its own).
func regrow[T any](s []T, n int) []T {
	if n <= cap(s) {
		return s
	}
	t := make([]T, len(s), n)
	copy(t, s)
	return t
}

// settle ends b's charging for a record decoded whole: what its slices
// grew to past what was charged (nothing, as long as newSpan and
// newResource keep the room a span's attributes take) is charged too,
// and b no longer refers to the job's charge. It fails as makeRoom does.
func (b *Batch) settle() error {
	c := b.charge
	if c == nil {
		return nil
	}
	if n := b.capBytes(); n > b.charged {
		if err := c.add(n - b.charged); err != nil {
			return err
		}
		b.charged = n
	}
	b.charge, b.from = nil, c
	return nil
}

// uncharge gives what b holds back to its job, for a batch let go before
// the sink saw it (its record left to pdata, or refused).
func (b *Batch) uncharge() {
	b.charge.drop(b.charged)
	b.charge, b.charged = nil, 0
}

// batchRefused is the result of a record whose batch could not grow
// within the budget (err, from a projection decoder): the problem at,
// with the cause: errNoRoom where the decoder found no room it may wait
// for (the record parks: result.parks), else errBatchTooLarge's, the
// record left out.
func batchRefused(err error, at *ReadError, what string, size int) result {
	at.Err = errBatchTooLarge(err, what, size)
	return result{prob: at}
}

// RightSized returns b when its slices hold at most twice what slices of
// its lengths hold (as a slice grown by append may; read from b's lengths
// alone, never from the capacity a pooled batch came with), else a copy
// of b in slices of exactly its lengths, for a sink to keep instead
// (b is then its caller's to let go, as any batch ConsumeBatch was
// given). A batch whose spans were mostly left out (an invalid trace id)
// or a pooled batch given a small record holds its whole capacity: kept
// as it is, a batch of one span could hold a fourth of the budget. The
// copy is charged what it holds out of b's charge once kept (Keep), so
// it stays on the budget as b would.
func RightSized(b *Batch) *Batch {
	if b.capBytes() <= 2*batchBytes(len(b.Spans), len(b.Resources), len(b.Attrs)) {
		return b
	}
	c := &Batch{Resources: slices.Clone(b.Resources), Spans: slices.Clone(b.Spans), Attrs: slices.Clone(b.Attrs), from: b.from}
	if c.from != nil {
		c.charged = c.capBytes() // what b's charge covers of it, handed over when kept
	}
	return c
}
