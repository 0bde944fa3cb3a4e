package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcptrace/mcptrace/analyze/internal/phase"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// rec is one undecoded record of an input: a JSON line, a length-prefixed
// protobuf record, or one element of a JSON document's array.
type rec struct {
	data []byte
	line int   // 1-based line, 0 when the format has no lines
	off  int64 // byte offset of the record in the (decompressed) stream
	last bool  // the input ended inside this record (no newline after it)
	// array and elem place a document's record: the element elem
	// (0-based) of the array under key array; array is "" elsewhere.
	array string
	elem  int
	seq   uint64 // the job the record is decoded in (runPipeline's count), for its share of the budget in flight
	// consumer says the goroutine that feeds the sink decodes the record
	// (pipeline.await): it must never wait for room in the share, which
	// only it gives back.
	consumer bool
	// charge is the job's charge to the share in flight for what the
	// projection decoders' batches hold (jobCharge); nil: none.
	charge *jobCharge
}

// placed adds a document record's element to the cause of its problem:
// in a document of one line the byte alone is hard to find.
func (r rec) placed(err error) error {
	if r.array == "" || err == nil {
		return err
	}
	return fmt.Errorf("%w (in element %d of %s)", err, r.elem, QuoteText(r.array))
}

// result is what became of one record, or a problem the producer found
// between records (a truncation, a corrupt length).
type result struct {
	td      ptrace.Traces
	batch   *Batch     // a projection decoder's batch instead of td (fastjson.go, fastproto.go)
	prob    *ReadError // non-nil: nothing was decoded here
	format  Format     // the record's format when it can differ from the input's (zstd records)
	held    int64      // bytes charged to the share in flight (inflight), given back once consumed
	cut     deepCut    // values past MaxDepth cut from the record decoded (depth.go)
	lone    loneNote   // escaped lone surrogates read as U+FFFD (rawstring.go)
	noTrace noTraceIDs // spans left out for an invalid trace id (span_ids.go)
}

// parks reports whether r's record found no room in the share where its
// decoder may not wait for it (errNoRoom: a projection batch's charge,
// jobCharge.add, or a pdata record's, inflight.chargePdata): nothing was
// decoded, and the record is decoded again, by the goroutine that feeds
// the sink, once the records before it were consumed (pipeline.decodeJob).
// It is the one test of a park: every decoder reports one as that error.
func (r *result) parks() bool { return r.prob != nil && errors.Is(r.prob, errNoRoom) }

// job is a batch of records decoded by one worker, or a batch of results the
// producer made itself (ready: done is already closed).
type job struct {
	recs  []rec
	block *[]byte // the pooled buffer recs point into, if any; recycled once decoded
	res   []result
	done  chan struct{}
	seq   uint64 // the job's place in the input, from 1 (runPipeline's count)
	// blockHeld is what the block is charged to the share in flight,
	// given back once the job is decoded and its block recycled.
	blockHeld int64
	// charge is what the projection decoders' batches of its records
	// hold charged to the share, given back once the sink took them all.
	charge jobCharge
	// parked says the job's decoding stopped at record next for want of
	// room in the share (result.parks; set before done is closed): the
	// consumer decodes the rest once the job is served (consumeParked).
	parked bool
	next   int
}

func newJob() *job { return &job{done: make(chan struct{})} }

// readyJob carries producer-made results in order with the decoded ones.
func readyJob(res ...result) *job {
	j := &job{res: res, done: make(chan struct{})}
	close(j.done)
	return j
}

// blockBytes is the size of the pooled read buffers: the records of one job
// are read into one block.
const blockBytes = 2 << 20

// freeBlocks recycles the buffers records are read into. pdata copies
// every string and byte slice out of its input (and so do the normalising
// and Jaeger decoders), so a block is free again as soon as its job is
// decoded. Reusing blocks spares the allocator and the garbage collector
// the bulk of the input, which is most of what the reader itself would
// cost. It is a plain list rather than a sync.Pool: a pool is emptied by
// every other collection, and each block made again is 2 MiB of fresh
// memory the read faults in and the runtime zeroes (4M spans of JSON
// lines: dozens of collections). It keeps at most maxFreeBlocks, about
// what a pipeline holds in flight, and only while a read runs (readers:
// Read counts itself in for all its inputs, so a directory of ten
// thousand small files reuses the blocks of the first rather than making
// and zeroing two of 2 MiB for each; runPipeline counts each pipeline):
// once the last read ends it lets them all go, so a process that read a
// dump does not keep megabytes of its blocks.
var freeBlocks struct {
	sync.Mutex
	list    []*[]byte
	readers int // pipelines running
}

// maxFreeBlocks bounds freeBlocks: the jobs in flight on a machine of up
// to eight cores (2 per worker and the one consumed), each with its block.
const maxFreeBlocks = 2*8 + 2

// startReader counts a read or a pipeline in; endReader counts it out,
// and empties freeBlocks after the last.
func startReader() {
	freeBlocks.Lock()
	freeBlocks.readers++
	freeBlocks.Unlock()
}

// endReader is startReader's end.
func endReader() {
	freeBlocks.Lock()
	if freeBlocks.readers--; freeBlocks.readers == 0 {
		freeBlocks.list = nil
	}
	freeBlocks.Unlock()
}

// getBlock returns an empty buffer of at least size bytes of capacity.
func getBlock(size int) *[]byte {
	if size > blockBytes {
		b := make([]byte, 0, size)
		return &b
	}
	freeBlocks.Lock()
	if n := len(freeBlocks.list); n > 0 {
		b := freeBlocks.list[n-1]
		freeBlocks.list[n-1] = nil
		freeBlocks.list = freeBlocks.list[:n-1]
		freeBlocks.Unlock()
		*b = (*b)[:0]
		return b
	}
	freeBlocks.Unlock()
	b := make([]byte, 0, blockBytes)
	return &b
}

// putBlock recycles a buffer from getBlock; odd sizes are left to the GC,
// and so is every buffer put while no pipeline runs, and every one once a
// read was abandoned (read_cancel.go): the abandoned read may still write
// into one.
func putBlock(b *[]byte) {
	if b == nil || cap(*b) != blockBytes || readsAbandoned.Load() {
		return
	}
	freeBlocks.Lock()
	if freeBlocks.readers > 0 && len(freeBlocks.list) < maxFreeBlocks {
		freeBlocks.list = append(freeBlocks.list, b)
	}
	freeBlocks.Unlock()
}

// Job sizes: big enough that channel hand-offs cost nothing next to
// decoding, small enough that workers stay balanced and memory stays bounded
// (in flight: about 2 jobs per worker plus the one being consumed).
const (
	jobMaxBytes = 1 << 20
	jobMaxRecs  = 1024
)

// emitFunc hands a job to the pipeline; it returns false when the pipeline
// is stopping and the producer must return.
type emitFunc func(*job) bool

// producer reads an input and emits its records in order. It reports every
// problem as a result (through a ready job) and returns when the input ends,
// after a problem it cannot read past, or when emit returns false.
type producer func(ctx context.Context, emit emitFunc)

// runPipeline decodes the records produce emits on workers goroutines and
// hands the results to consume in input order, from the calling goroutine.
// It returns consume's first error or ctx's error, after every goroutine it
// started has returned. share, when not nil, is the budget's share the
// records in flight hold: the pipeline numbers the jobs, tells share which
// one consume waits on, and gives back what each result held once consume
// has taken it. A job's block is charged to share when the job is handed
// over (the producer waits for room) and given back once it is decoded,
// so the blocks in flight stay within the share however many workers
// wait.
func runPipeline(ctx context.Context, workers int, produce producer, decode func(rec) result, consume func(*result) error, share *inflight) error {
	startReader()
	defer endReader()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if share != nil {
		share.stop = ctx.Done()
	}
	p := &pipeline{ctx: ctx, ordered: make(chan *job, 2*workers+1), work: make(chan *job, 2*workers+1), share: share}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(p.ordered)
		defer close(p.work)
		phase.Do(ctx, phase.Read, func() { produce(ctx, p.emit) })
	}()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			phase.Do(ctx, phase.Decode, func() { p.decodeJobs(decode) })
		}()
	}
	err := p.consumeJobs(decode, consume)
	// The producer's and workers' sends and decodes watch ctx: after the
	// cancel they drop what is queued and return.
	cancel()
	wg.Wait()
	return err
}

// pipeline is one runPipeline's state: its jobs in order (ordered), the
// jobs the workers take (work), and the count that numbers them.
type pipeline struct {
	ctx     context.Context
	ordered chan *job
	work    chan *job
	share   *inflight
	seq     uint64 // the jobs emitted so far (the producer's own)
}

// emit is the producer's emitFunc: it numbers the job, charges its block
// to the share (waiting for room) when workers will decode it, and queues
// it in order and for the workers.
func (p *pipeline) emit(j *job) bool {
	p.seq++
	j.seq = p.seq
	if j.block != nil && len(j.recs) > 0 {
		took, err := p.share.take(j.seq, int64(cap(*j.block)))
		if err != nil {
			return false
		}
		j.blockHeld = took
	}
	select {
	case p.ordered <- j:
	case <-p.ctx.Done():
		return false
	}
	if len(j.recs) == 0 {
		return true
	}
	select {
	case p.work <- j:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// decodeJobs is one worker: it decodes the jobs it takes.
func (p *pipeline) decodeJobs(decode func(rec) result) {
	for j := range p.work {
		p.decodeJob(j, decode, false)
	}
}

// decodeJob decodes j's records, recycles its block, gives back its
// block's charge and marks it done. consumer says the goroutine that
// feeds the sink decodes it (rec.consumer). A record whose batch finds
// no room in the share where its decoder may not wait for it
// (result.parks: the consumer's, or a worker's for the job served) parks
// the job: it is marked done with the records before it decoded, and the
// consumer decodes the rest once the job is served (consumeParked).
func (p *pipeline) decodeJob(j *job, decode func(rec) result, consumer bool) {
	if p.ctx.Err() == nil && !p.decodeRecs(j, decode, consumer) {
		close(j.done) // parked: the block stays with the records left
		return
	}
	p.release(j)
	close(j.done)
}

// release recycles j's block, its records decoded, and gives back the
// block's charge.
func (p *pipeline) release(j *job) {
	j.recs = nil
	putBlock(j.block)
	p.share.give(j.blockHeld)
	j.block, j.blockHeld = nil, 0
}

// decodeRecs decodes j's records, and reports false when it parked j at
// one of them (decodeJob): a record whose batch or pdata charge found no
// room where its decoder may not wait.
func (p *pipeline) decodeRecs(j *job, decode func(rec) result, consumer bool) bool {
	j.res = make([]result, len(j.recs))
	j.charge.share, j.charge.seq, j.charge.consumer = p.share, j.seq, consumer
	for i, r := range j.recs {
		r.seq, r.consumer, r.charge = j.seq, consumer, &j.charge
		res := decode(r)
		if res.parks() {
			j.res, j.next, j.parked = j.res[:i], i, true
			return false
		}
		j.res[i] = res
	}
	return true
}

// await returns once j is decoded, or ctx is done. Until then the
// consumer decodes the jobs still waiting for a worker itself: while it
// waits, what it feeds has nothing to do, and the core that would run it
// sits idle (2 CPUs: a worker decoding alone was a quarter of a run's
// idle core time). It looks at j first, so a decoded job is never kept
// waiting for another's decoding. Where the decoders charge the share as
// they decode (zstd records), it only waits: a decoder may wait there for
// the room that the consumer alone gives back. Once a job it decodes is
// parked for want of room (decodeJob: a batch's or a pdata record's
// charge), it only waits too: the share is full.
func (p *pipeline) await(j *job, decode func(rec) result) {
	work := p.work
	if p.share.decodersWait() {
		work = nil
	}
	for {
		select {
		case <-j.done:
			return
		default:
		}
		select {
		case <-j.done:
			return
		case <-p.ctx.Done():
			return
		case k, ok := <-work:
			if !ok {
				work = nil // every job is taken: only j's end is left to wait for
				continue
			}
			phase.Do(p.ctx, phase.Decode, func() { p.decodeJob(k, decode, true) })
			if k.parked || p.share.decodersWait() {
				work = nil // the share is full, or the decoders wait on it: only the workers decode now
			}
		}
	}
}

// consumeJobs hands the results to consume in order, telling the share
// which job it waits on (and decoding others meanwhile: await) and giving
// back what each result held, and once a job's results are all taken,
// what its batches held; it returns consume's first error or the
// context's.
func (p *pipeline) consumeJobs(decode func(rec) result, consume func(*result) error) error {
	for j := range p.ordered {
		p.share.serve(j.seq)
		p.await(j, decode)
		if err := p.ctx.Err(); err != nil {
			return err
		}
		if err := p.consumeResults(j, consume); err != nil {
			return err
		}
		if j.parked {
			if err := p.consumeParked(j, decode, consume); err != nil {
				return err
			}
		}
	}
	return nil
}

// consumeResults hands j's decoded results to consume and gives back
// what they held, the batches' charge included.
func (p *pipeline) consumeResults(j *job, consume func(*result) error) error {
	defer p.giveBatches(j)
	for i := range j.res {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		r := &j.res[i]
		err := consume(r) // may hand r.held over (HoldingSink), leaving 0
		p.share.give(r.held)
		if err != nil {
			return err
		}
	}
	return nil
}

// giveBatches gives back what j's batches held, all of them consumed.
func (p *pipeline) giveBatches(j *job) {
	p.share.give(j.charge.held)
	j.charge.held, j.charge.used = 0, 0
}

// consumeParked decodes the records of j, the job served, that were left
// when it was parked, each handed to consume and its charges given back
// before the next is decoded: the share had no room for them, and as the
// job served they are charged without waiting (a worker might wait for
// room only the sink's progress gives back), so the job passes the share
// by one record at most.
func (p *pipeline) consumeParked(j *job, decode func(rec) result, consume func(*result) error) error {
	j.charge.consumer = true
	for _, r := range j.recs[j.next:] {
		if err := p.ctx.Err(); err != nil {
			return err
		}
		r.seq, r.consumer, r.charge = j.seq, true, &j.charge
		var res result
		phase.Do(p.ctx, phase.Decode, func() { res = decode(r) })
		j.res = append(j.res[:0], res)
		if err := p.consumeResults(j, consume); err != nil {
			return err
		}
	}
	j.res = nil
	p.release(j)
	return nil
}
