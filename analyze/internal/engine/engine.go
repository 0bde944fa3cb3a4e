package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/internal/measure"
	"github.com/mcptrace/mcptrace/analyze/internal/phase"
	"github.com/mcptrace/mcptrace/analyze/internal/vocab"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// EngineOptions configures an Engine. The zero value is a batch run on
// every CPU: nothing is finalized before Flush, and the report equals
// Analyze's over one index holding every span.
type EngineOptions struct {
	// Shards is the number of workers the traces are spread over by trace
	// id; 0 means half of GOMAXPROCS, at least one (DefaultShards).
	Shards int
	// Window is how long, in span time, a trace stays open after its
	// latest span: once the watermark (the latest span end seen) is more
	// than Window past a trace's latest span end, the trace is finalized:
	// measured, and its spans freed. 0 keeps every trace open until Flush
	// (a batch run).
	Window time.Duration
	// MaxOpenTraces bounds the traces held open over all shards; past it
	// the traces whose latest span is oldest are finalized early and
	// counted as cut (each shard holds at most its share and cuts down to
	// seven eighths of it, so cuts come in batches). 0 means no bound.
	MaxOpenTraces int
	// HoldComplete keeps a stream's complete traces open until the window
	// passes them. By default a streaming engine finalizes a trace as soon
	// as its root span (no parent) has arrived: the pool's spans end, and
	// are exported, before their root, so a trace whose root is in holds
	// every pool span it will have. Spans exported later by another process
	// are then late spans, counted. Configurations with reads-per-request
	// measures always hold (their complete_when may wait on such spans).
	HoldComplete bool
}

// streaming reports whether traces may be finalized before Flush.
func (o EngineOptions) streaming() bool { return o.Window > 0 || o.MaxOpenTraces > 0 }

// ErrEngineFlushed is returned by an Engine's Add after Flush, Report or
// Close.
var ErrEngineFlushed = errors.New("engine already flushed")

// ErrEngineClosed is returned by Flush and Report after Close: what the
// shards held was dropped, so there is no report to give.
var ErrEngineClosed = errors.New("engine closed without flushing")

// Engine is the incremental analysis: spans arrive in any order, in any
// number of batches, and are spread by trace id over shards, each a
// goroutine owning an index of its open traces. Finalized traces are
// observed (observe.go) and their observations merged; shards share nothing
// else. A batch run feeds everything then calls Report; a stream sets
// Window and MaxOpenTraces, and its retained state then depends on the
// window, not on the length of the stream.
//
// Add and the fast path's batches are for one goroutine at a time (the
// reader's sink); Flush, Report and Close too. Always end an Engine with
// Report, Flush or Close: they stop its goroutines.
type Engine struct {
	cfg    rulefmt.Config
	opts   EngineOptions
	shards []*shard
	wm     int64 // the watermark: the latest span end given to Add so far
	// fastBatches counts the fast path's batches (as index.fastBatches):
	// tests pin that the CLI's path is the one they exercise.
	fastBatches int

	mu       sync.Mutex // guards what follows
	agg      *aggregate
	lowMarks []int64 // per shard: no acquire of a trace it holds open starts before it
	// nextPairAdvance is the acquires a speculative run's pair stage must
	// hold before its next early advance (advanceEarly).
	nextPairAdvance int
	earlyAcquires   int // the acquires advanceEarly attributed, for tests
	err             error

	// What the shards count as they scan (count, raisePeak), added without
	// mu: the observer holds mu while it merges, and a shard waiting for it
	// leaves the decoders waiting too.
	late, cut, early, complete atomic.Int64
	peakOpen                   atomic.Int64 // the sum of the shards' peaks of open traces

	// stopped is set, under mu, when flushed or err is: while it and
	// spoiled are clear, usable answers without mu, so feeding the shards
	// never waits for a merge.
	stopped atomic.Bool

	pairBytes atomic.Int64 // what the aggregate's state across traces takes (aggregate.stateBytes)
	scopes    atomic.Int64 // the distinct pool scopes the aggregate holds
	pairKeys  atomic.Int64 // the distinct (scope, key) pairs it holds
	pending   atomic.Int64 // the part of pairBytes the acquires waiting for the pair stage take
	// memLimit is what MemBytes may reach (half of the memory budget),
	// set by Feed: Flush checks the aggregate against it once the last
	// traces are merged, before their report is made. 0: no check.
	memLimit int64

	// speculative: a batch run that finalizes each trace at its root, as a
	// stream does, and gives up (errSpoiled) as soon as a span arrives for
	// a trace already finalized (see newSpeculativeEngine).
	speculative bool
	// spoiledAt is the first batch (shardMsg.seq) a shard found spoiling
	// the run at, noBatch while none did (Engine.isSpoiled): the shards
	// read every batch up to it, so it is the same on every run
	// (engine_budget.go).
	spoiledAt atomic.Int64

	// The memory budget's verdict (engine_budget.go): the batches sent
	// and what the latest of them are charged (the sink's), and, under
	// mu, the first batch whose tally passed memLimit and its error.
	seq       int64
	budgetAt  int64
	budgetErr error
	// passedAt is, per shard that finalizes early, the last batch its
	// observer passed, everything the shard finalized up to it merged
	// (noBatch once the observer is done); turns, on mu, wakes the merges
	// waiting for their turn (awaitTurn).
	passedAt []atomic.Int64
	turns    *sync.Cond
	waiting  atomic.Int32 // merges waiting in awaitTurn

	det engineDetection // engine_detect.go: the vocabulary of --profile auto

	inputs  []report.InputReport
	flushed bool
	report  *report.Report
	// heldAtFlush is MemBytes when Flush began: what the shards' indexes
	// held, garbage once they are observed.
	heldAtFlush int64
}

// NewEngine returns an engine analyzing with cfg, its shards started.
func NewEngine(cfg rulefmt.Config, opts EngineOptions) (*Engine, error) {
	return newEngine(cfg, opts, false)
}

// DefaultShards is an engine's shards when EngineOptions.Shards is 0: half
// of GOMAXPROCS rounded up (GOMAXPROCS is at least one, so this is too). Feed's decoding workers take the other half
// (ReadOptions.Workers 0): each shard reads every batch to pick its traces
// and each goroutine past the CPUs only waits, so one shard and one worker
// per pair of CPUs beat one of each per CPU (2 CPUs, 4M spans: 2.07 s
// against 2.35 s, and 11% less CPU).
func DefaultShards() int { return (runtime.GOMAXPROCS(0) + 1) / 2 }

// errSpoiled is a speculative engine's answer once a span arrived for a
// trace it had finalized: its figures would differ from a batch run's, so
// the input must be read again by a batch engine that holds every trace.
var errSpoiled = errors.New("a span arrived after its trace's root: reading again, holding every trace")

// newSpeculativeEngine returns a batch engine (opts must not stream) that
// finalizes every trace as soon as its root span has arrived, as a stream
// does, rather than at Flush: a time-ordered or trace-grouped dump (the
// pool's spans end, and are exported, before their root) is then measured
// while it is read, on every shard, and its spans freed, so the run's
// memory and the measures' work at the end shrink to what the open traces
// and the pair stage hold. Its figures equal a batch run's as long as no
// span arrives for a trace already finalized, and the engine checks that
// exactly (it remembers every finalized trace id): the first such span
// spoils it, and Add, Report and Flush then return errSpoiled, for the
// caller to read the input again with NewEngine. Its pair stage waits for
// Flush, as a batch run's does. Where traces are never complete at their
// root (CompleteAtRoot), it returns a plain batch engine.
func newSpeculativeEngine(cfg rulefmt.Config, opts EngineOptions) (*Engine, error) {
	if opts.streaming() {
		return nil, fmt.Errorf("analyze: a speculative engine is a batch run: no window, no bound")
	}
	return newEngine(cfg, opts, ChooseEngine(EngineRequest{Config: cfg, Options: opts, Rereadable: true}).Kind == EngineSpeculative)
}

func newEngine(cfg rulefmt.Config, opts EngineOptions, speculative bool) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	if opts.Shards < 0 || opts.Window < 0 || opts.MaxOpenTraces < 0 {
		return nil, fmt.Errorf("analyze: engine options: shards, window and max open traces must not be negative")
	}
	cfg = cfg.WithDefaults()
	// Compile the selectors once against an empty index, so a bad one is
	// an error here rather than from a shard.
	if _, err := observe(index.New(cfg.IndexOptions()), cfg); err != nil {
		return nil, err
	}
	if opts.Shards == 0 {
		opts.Shards = DefaultShards()
	}
	e := &Engine{cfg: cfg, opts: opts, agg: newAggregate(cfg), wm: math.MinInt64, speculative: speculative, budgetAt: noBatch}
	e.spoiledAt.Store(noBatch)
	if !opts.streaming() {
		e.agg.pairs = measure.NewBatchPairStage(cfg) // it advances once, at the end
	}
	e.passedAt = make([]atomic.Int64, opts.Shards)
	e.turns = sync.NewCond(&e.mu)
	e.lowMarks = make([]int64, opts.Shards)
	for i := range e.lowMarks {
		e.lowMarks[i] = math.MinInt64
	}
	e.shards = make([]*shard, opts.Shards)
	for i := range e.shards {
		s := &shard{e: e, id: i, in: make(chan shardMsg, shardQueue), done: make(chan struct{}), ctx: context.Background(),
			completeAtRoot: speculative || ChooseEngine(EngineRequest{Config: cfg, Options: opts}).FinalizeAtRoot}
		s.x = s.newOpenIndex()
		if opts.MaxOpenTraces > 0 {
			s.maxOpen = (opts.MaxOpenTraces + opts.Shards - 1) / opts.Shards // at least 1: rounded up
		}
		e.shards[i] = s
		if e.finalizesEarly() {
			s.startObserver()
		}
		phase.Go(context.Background(), phase.Track, s.run) // its own bookkeeping, between its inner phases
	}
	return e, nil
}

// Add hands td to the shards. td is shared by them while they read it: the
// caller must not modify it afterwards (Read's batches never are).
func (e *Engine) Add(td ptrace.Traces) error { return e.add(td, nil, nil) }

// add is Add of a batch that ends at at in the input: Feed's sink's,
// which the memory budget judges (nil: Add's, which it does not). Each
// shard releases h, td's charge to the reader's share of the budget
// (nil: none), once it has read td.
func (e *Engine) add(td ptrace.Traces, h *ingest.Hold, at *readPoint) error {
	if err := e.usable(); err != nil {
		return err
	}
	if e.opts.streaming() {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				ss := sss.At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					sp := ss.At(k)
					e.wm = max(e.wm, int64(sp.EndTimestamp()), int64(sp.StartTimestamp()))
				}
			}
		}
	}
	if h != nil {
		for range e.shards {
			h.Keep()
		}
	}
	e.sendBatch(shardMsg{td: td, hasTD: true, hold: h, wm: e.wm}, at)
	return nil
}

// addFast hands a projection decoder's batch (analyze/ingest), the one
// that ends at at in the input, to the shards, each taking its part: it
// keeps one reference to b, or to its right-sized copy (ingest.RightSized),
// per shard (b.Keep), which each shard releases once read, so the last one
// recycles it and gives its charge back to the reader's share of the
// memory budget. Call
// it from a sink's ConsumeBatch. This is the one place the engine knows
// the batch type.
func (e *Engine) addFast(b *ingest.Batch, at *readPoint) error {
	if err := e.usable(); err != nil {
		return err
	}
	if e.opts.streaming() {
		for i := range b.Spans {
			e.wm = max(e.wm, int64(b.Spans[i].End), int64(b.Spans[i].Start))
		}
	}
	b = ingest.RightSized(b)
	e.fastBatches++
	for range e.shards {
		b.Keep()
	}
	e.sendBatch(shardMsg{fast: b, wm: e.wm}, at)
	return nil
}

// usable returns why the engine takes no more spans, if it does not.
func (e *Engine) usable() error {
	if !e.stopped.Load() && !e.isSpoiled() {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.flushed {
		return ErrEngineFlushed
	}
	if e.err != nil {
		return e.err
	}
	return e.readVerdict()
}

// finalizesEarly reports whether traces may be finalized before Flush.
func (e *Engine) finalizesEarly() bool { return e.speculative || e.opts.streaming() }

// send gives m to every shard.
func (e *Engine) send(m shardMsg) {
	for _, s := range e.shards {
		s.in <- m
	}
}

// SetInputs records what was read, for the report's inputs list.
func (e *Engine) SetInputs(inputs []Input) {
	x := index.Index{}
	x.SetInputs(inputs)
	e.mu.Lock()
	e.inputs = x.InputReports
	e.mu.Unlock()
}

// MemBytes estimates the memory the shards' open indexes hold, for the
// memory budget: the same estimate as one index's, summed, and the
// acquires waiting for the pair stage.
func (e *Engine) MemBytes() int64 {
	n := e.pairBytes.Load()
	for _, s := range e.shards {
		n += s.mem.Load()
	}
	return n
}

// Flush finalizes every open trace and stops the shards. It is idempotent;
// Add fails afterwards.
func (e *Engine) Flush() error {
	e.mu.Lock()
	if e.flushed {
		err := e.err
		e.mu.Unlock()
		return err
	}
	e.flushed = true
	e.stopped.Store(true)
	e.heldAtFlush = e.MemBytes()
	e.mu.Unlock()
	e.detectBatch()
	e.stop(true)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.checkDetection()
	if e.err == nil {
		e.err = e.readVerdict()
	}
	if m := e.pairBytes.Load(); e.err == nil && e.memLimit > 0 && m > e.memLimit {
		e.err = e.overBudget(-1, m, e.memLimit)
	}
	return e.err
}

// Close stops the shards without finalizing what they hold: for a caller
// that gives up (a read error). It is idempotent and safe after Flush;
// after Close without Flush, Flush and Report return ErrEngineClosed.
func (e *Engine) Close() {
	e.mu.Lock()
	if e.flushed {
		e.mu.Unlock()
		return
	}
	e.flushed = true
	e.stopped.Store(true)
	if e.err == nil {
		e.err = ErrEngineClosed
	}
	e.mu.Unlock()
	e.stop(false)
}

// stop ends every shard, finalizing its traces first when final.
func (e *Engine) stop(final bool) {
	for _, s := range e.shards {
		s.in <- shardMsg{stop: true, final: final}
		close(s.in)
	}
	for _, s := range e.shards {
		<-s.done
	}
}

// Report flushes the engine and returns its report: the same as Analyze's
// over one index holding every span, for a batch run. Later calls return
// the same report.
func (e *Engine) Report() (*report.Report, error) {
	if err := e.Flush(); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.report == nil {
		if !e.opts.streaming() && e.heldAtFlush >= hugeHeapMin {
			// The shards' indexes are garbage now: collecting them lets
			// the pair stage and the report reuse their pages instead of
			// faulting in new ones (4M spans: 649 MB peak RSS against 725).
			runtime.GC()
		}
		if e.opts.streaming() {
			e.agg.sticky = e.det.sticky
		}
		phase.Do(context.Background(), phase.Report, func() { e.report = e.agg.report(slices.Clone(e.inputs)) })
		if e.opts.streaming() {
			e.report.Stream = &report.StreamReport{
				WindowSeconds:  e.opts.Window.Seconds(),
				MaxOpenTraces:  e.opts.MaxOpenTraces,
				LateSpans:      int(e.late.Load()),
				CutTraces:      int(e.cut.Load()),
				LateAcquires:   e.agg.pairs.Late,
				EarlyTraces:    int(e.early.Load()),
				CompleteTraces: int(e.complete.Load()),
				PeakOpenTraces: int(e.peakOpen.Load()),
			}
		}
	}
	return e.report, nil
}

// merge folds a shard's observation in and, in a stream, attributes the
// acquires every shard is done with.
func (e *Engine) merge(shard int, o *observation, lowMark, seq int64, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.finalizesEarly() {
		e.awaitTurn(shard, seq)
	}
	if err != nil {
		if e.err == nil {
			e.err = err
			e.stopped.Store(true)
		}
		return
	}
	if o != nil {
		e.agg.merge(o)
		e.pairBytes.Store(e.agg.stateBytes())
		e.scopes.Store(int64(e.agg.pairs.NumScopes()))
		e.pairKeys.Store(int64(e.agg.pairs.NumPairs()))
		e.pending.Store(e.agg.pairs.PendingBytes())
	}
	if e.opts.streaming() {
		e.lowMarks[shard] = lowMark
		e.agg.pairs.Advance(slices.Min(e.lowMarks))
	}
	if e.speculative {
		e.advanceEarly(shard, lowMark, seq)
	}
}

// earlyPairBatch is how many acquires a speculative run's pair stage holds
// at least before it advances: each advance walks every pair, so it waits
// for at least as many acquires as there are pairs, and for this many.
// An advance runs in the observer's merge, and the shard waits for the
// scratch indexes the observer holds meanwhile, so a larger batch is a
// longer burst with every other goroutine waiting (65536 acquires: 12 to
// 40 ms on the bench dumps). 16384 keeps an advance near one
// observation's length, and holds less (4M spans of protobuf: 105 MiB
// peak RSS against 114 at 65536). A variable only so tests can advance
// after every few acquires.
var earlyPairBatch = 1 << 14

// advanceEarly lets a speculative run's pair stage attribute, while the
// read goes on, the acquires no trace still to come can precede, as a
// stream's does: those that started before every shard's open traces
// (their low marks) and before the stage's earlyMark (twice the worst lag
// an acquire has arrived with behind the latest one). A time-ordered dump
// then holds only the acquires within that lag, not all of them. Should
// an acquire still arrive behind what its pair had attributed (a dump out
// of time order), the run is spoiled and read again holding every trace,
// so the figures are the batch run's either way. e.mu must be held.
func (e *Engine) advanceEarly(shard int, lowMark, seq int64) {
	p := e.agg.pairs
	e.lowMarks[shard] = lowMark
	if p.OutOfOrder {
		e.spoil(seq)
		return
	}
	if p.Held < max(earlyPairBatch, e.nextPairAdvance, len(p.Buckets)) {
		return
	}
	before := p.Held
	p.Advance(min(slices.Min(e.lowMarks), p.EarlyMark()))
	e.earlyAcquires += before - p.Held
	// An advance that freed little (the dump's lag is long) waits for
	// twice as many acquires: the advances stay linear in the acquires.
	e.nextPairAdvance = 2 * p.Held
}

// count adds a shard's late spans, cut traces and traces finalized early.
func (e *Engine) count(late, cut, early, complete int) {
	if late == 0 && cut == 0 && early == 0 && complete == 0 {
		return
	}
	e.late.Add(int64(late))
	e.cut.Add(int64(cut))
	e.early.Add(int64(early))
	e.complete.Add(int64(complete))
}

// raisePeak adds a rise of one shard's peak of open traces to the
// shards' sum (StreamReport.PeakOpenTraces).
func (e *Engine) raisePeak(rise int) {
	e.peakOpen.Add(int64(rise))
}

// shardMsg is one message to a shard: a batch (td or fast), or stop.
type shardMsg struct {
	td    ptrace.Traces
	hasTD bool
	hold  *ingest.Hold  // td's charge to the reader's share (nil: none); each shard releases it
	fast  *ingest.Batch // shared by the shards; each releases its reference
	wm    int64         // the engine's watermark once this batch is counted
	seq   int64         // a batch's place among those sent, from 1
	// tally sums the shards' memory once each has read the batch, for
	// the memory budget (nil: no budget).
	tally *tally
	stop  bool
	final bool // with stop: finalize what is open first
	// detect asks for the evidence of every open trace (engine_detect.go).
	detect chan<- *vocab.Detection
}

// shard owns the open traces of its part of the trace ids.
type shard struct {
	e    *Engine
	id   int
	in   chan shardMsg
	done chan struct{}
	x    *index.Index
	mem  atomic.Int64 // x's memBytes, for Engine.MemBytes
	seq  int64        // the batch being read (shardMsg.seq)
	// obs measures the traces the shard finalizes early (observer.go),
	// nil for a batch shard.
	obs *observer
	// ctx carries the labels of the shard's goroutine (phase track), which
	// each inner phase gives it back when it ends; set by run.
	ctx context.Context
	// Streaming state, per trace index of x.
	lastEnd  []int64 // the latest span end (or start) of the trace
	minStart []int64 // the earliest span start
	dead     []bool  // finalized: its spans wait for the next handover
	rooted   []bool  // its root span has arrived: complete, unless held
	spans    []int32 // the spans it has in x
	// completeAtRoot finalizes rooted traces at the next scan; rootedOpen
	// counts those waiting for it.
	completeAtRoot bool
	rootedOpen     int
	open           int // traces of x neither dead nor finalized
	peakOpen       int // the most open at once
	deadSpans      int
	copiedSpans    int // spans copied out of an open index, for tests
	handovers      int // open indexes handed over before the flush, for tests
	dropped        int // duplicates the indexes handed over had dropped
	maxOpen        int // this shard's share of MaxOpenTraces, 0 none
	wm             int64
	scannedAt      int64 // the watermark at the last finalization scan
	newTraces      int   // traces opened since the last scan
	// finalized remembers the ids of traces finalized and handed over,
	// the latest ones (a bounded ring), so their late spans are counted.
	finalized     map[pcommon.TraceID]struct{}
	finalizedRing []pcommon.TraceID
	ringNext      int
	// allFinalized is a speculative shard's memory of every trace it
	// finalized, which it must not forget: the latest in memory, the rest
	// spilled (traceLog), checked at the end for a trace finalized twice.
	allFinalized traceLog
	prints       []uint64 // scratch: fingerprints asked of allFinalized at once
}

// finalizedMemory is how many handed-over trace ids a shard remembers
// to recognise late spans.
const finalizedMemory = 1 << 16

// run is the shard's goroutine: ctx carries its phase label (track),
// which its inner phases give back (s.ctx).
func (s *shard) run(ctx context.Context) {
	defer close(s.done)
	s.ctx = ctx
	early := s.e.finalizesEarly()
	s.wm, s.scannedAt = math.MinInt64, math.MinInt64
	for m := range s.in {
		switch {
		case m.stop:
			if m.final {
				s.flush()
			}
			s.stopObserver()
			s.x = nil
			s.allFinalized.close()
			s.mem.Store(0)
			continue
		case m.detect != nil:
			group(s.ctx, s.x)
			phase.Do(s.ctx, phase.Detect, func() { m.detect <- vocab.Detect(s.x, nil) })
			continue
		}
		s.read(m, early)
		switch {
		case early: // the observer passes the batch once it has merged what the shard finalized before
			s.hand(finalization{passed: true, tally: m.tally, mem: s.mem.Load()})
		case m.tally != nil:
			s.e.settle(m.tally, s.mem.Load())
		}
	}
}

// release lets go of the shard's reference to m's batch, and with the
// last one its charge to the reader's share of the budget.
func (m shardMsg) release() {
	if m.fast != nil {
		ingest.Release(m.fast)
	}
	if m.hold != nil {
		m.hold.Release()
	}
}

// read indexes the shard's part of a batch and, when early, finalizes
// what it lets go. A batch past the one a shard spoiled the run at is
// let go unread: every shard reads every batch up to that one, so the
// first spoiling batch is found whichever shard runs ahead.
func (s *shard) read(m shardMsg, early bool) {
	s.seq = m.seq
	if m.seq > s.e.spoiledAt.Load() {
		m.release()
		return
	}
	before, traces := s.x.NumSpans, len(s.x.TraceRecs)
	if m.hasTD {
		phase.Do(s.ctx, phase.Index, func() { s.x.AddPart(m.td, s.id, len(s.e.shards)) })
	} else {
		phase.Do(s.ctx, phase.Index, func() { s.x.AddFastPart(m.fast, s.id, len(s.e.shards)) })
	}
	m.release() // what the shard keeps, it copied
	if early {
		s.track(before, traces, m.wm)
	}
	s.mem.Store(s.x.MemBytes() + int64(len(s.lastEnd))*17 + s.allFinalized.memBytes())
}

// track updates the streaming state for the spans added since before (and
// the traces since traces), then finalizes what the window or the bound
// lets go.
func (s *shard) track(before int32, traces int, wm int64) {
	x := s.x
	s.wm = wm // the engine's watermark, sent in order, never goes back
	late := 0
	s.openTraces(traces)
	for i := before; i < x.NumSpans; i++ {
		sp := x.Span(i)
		if s.dead[sp.Trace] {
			late++
			s.deadSpans++
			continue
		}
		if !s.e.speculative { // only a stream's window reads it
			s.lastEnd[sp.Trace] = max(s.lastEnd[sp.Trace], sp.End)
		}
		s.minStart[sp.Trace] = min(s.minStart[sp.Trace], sp.Start) // the pair stage's low mark
		s.spans[sp.Trace]++
		if sp.ParentID == 0 && !s.rooted[sp.Trace] {
			s.rooted[sp.Trace] = true
			s.rootedOpen++
		}
	}
	if late > 0 && s.e.speculative {
		s.e.spoil(s.seq) // a span came for a trace it finalized
		return
	}
	s.e.count(late, 0, 0, 0)
	s.newTraces += len(x.TraceRecs) - traces
	if s.scanDue() {
		s.scan()
	}
}

// openTraces extends the per-trace streaming state over the traces the
// index opened from index traces on. A trace the shard already finalized
// comes back dead (its late spans are counted, never measured twice), so
// it is not open.
func (s *shard) openTraces(traces int) {
	recs := s.x.TraceRecs[traces:]
	for range recs {
		s.lastEnd = append(s.lastEnd, math.MinInt64)
		s.minStart = append(s.minStart, math.MaxInt64)
		s.dead = append(s.dead, false)
		s.rooted = append(s.rooted, false)
		s.spans = append(s.spans, 0)
	}
	gone := s.dead[len(s.dead)-len(recs):]
	s.finalizedAmong(recs, gone)
	for _, g := range gone {
		if !g {
			s.open++
		}
	}
	if rise := s.open - s.peakOpen; rise > 0 {
		s.peakOpen = s.open
		s.e.raisePeak(rise)
	}
}

// scanDue reports whether a scan may finalize something now: the
// watermark moved an eighth of the window past the last scan, the open
// traces passed the bound (or an eighth of it opened since), or a batch
// of complete traces waits. Scanning on every part instead would walk
// every open trace per part.
func (s *shard) scanDue() bool {
	w := int64(s.e.opts.Window)
	return (w > 0 && s.wm-w/8 >= s.scannedAt) || (s.maxOpen > 0 && (s.open > s.maxOpen || s.newTraces > s.maxOpen/8)) ||
		(s.completeAtRoot && s.rootedOpen >= rootedBatch)
}

// rootedBatch is how many complete traces a shard gathers before it
// finalizes them in one copy: finalizing each alone would cost a fresh
// index per trace. Each finalization's index interns again the names and
// values its traces share with earlier ones (a cache key, a tool name), so
// fewer, larger ones cost less, and the open index is compacted less
// often. Each doubling costs peak memory: on the 1M- and 4M-span bench
// dumps, 2048 does 0.7% fewer instructions than 1024 for 4 to 7 MiB more,
// 4096 another 0.3% for 13 more. A variable only so tests can finalize
// every few traces of a small dump.
var rootedBatch = 2048

// scan finalizes the complete traces (unless held), the traces quiet for
// longer than the window, then, past the bound, the oldest open ones.
func (s *shard) scan() {
	s.scannedAt, s.newTraces = s.wm, 0
	w := int64(s.e.opts.Window)
	sel := make([]bool, len(s.x.TraceRecs))
	n, complete := 0, 0
	var live []int32
	for t := range s.x.TraceRecs {
		if s.dead[t] {
			continue
		}
		if s.completeAtRoot && s.rooted[t] {
			sel[t] = true
			n++
			complete++
			continue
		}
		if w > 0 && s.lastEnd[t] < s.wm-w {
			sel[t] = true
			n++
			continue
		}
		live = append(live, int32(t))
	}
	cut := 0
	if s.maxOpen > 0 && len(live) > s.maxOpen {
		target := s.maxOpen - s.maxOpen/8
		slices.SortFunc(live, func(a, b int32) int { return cmp.Compare(s.lastEnd[a], s.lastEnd[b]) })
		cut = len(live) - target
		for _, t := range live[:cut] {
			sel[t] = true
		}
		live = live[cut:]
		n += cut
	}
	// No acquire still to come starts before low: the open traces' spans
	// start after their minStart, and a trace not seen yet is assumed to
	// start within the window of the watermark (one that does not brings
	// late acquires, counted).
	low := s.wm - w
	if s.e.speculative { // no window: only the open traces bound it
		low = math.MaxInt64
	}
	for _, t := range live {
		low = min(low, s.minStart[t])
	}
	s.rootedOpen = 0
	s.e.count(0, cut, n, complete)
	if n == 0 {
		s.hand(finalization{low: low})
		return
	}
	s.finalize(sel, low)
}

// finalize hands the selected traces to the observer and marks them
// dead. When they and the dead traces hold most of the open index, the
// open index itself is handed over (handOver); otherwise the selected
// traces are copied out of it, and it keeps their spans, dead, until a
// later handover drops them.
func (s *shard) finalize(sel []bool, low int64) {
	selected := s.retire(sel)
	if s.deadSpans+selected > int(s.x.NumSpans)/2 {
		s.handOver(sel, low, false)
		return
	}
	small := s.scratch()
	var copied int
	phase.Do(s.ctx, phase.Finalize, func() { _, copied = index.BorrowTraces(small, s.x, sel) })
	s.hand(finalization{small: small, low: low})
	s.deadSpans += copied
	s.copiedSpans += copied
}

// retire marks the selected traces finalized, dead and no longer open,
// and returns how many spans they hold in the open index.
func (s *shard) retire(sel []bool) (spans int) {
	for t, ok := range sel {
		if ok {
			s.dead[t] = true
			s.open--
			spans += int(s.spans[t])
		}
	}
	return spans
}

// handOver finalizes the selected traces, already retired, by handing the
// open index itself to the observer: the traces still open are copied
// into a fresh open index (a scratch one, so the shard and its observer
// share a fixed set), and the handed index keeps only the selected traces
// (index.KeepTraces).
// Every trace leaving the open index, finalized now or dead before, is
// remembered, so its late spans are recognised. The last finalization
// (flush) carries the count of copies the shard's indexes dropped.
func (s *shard) handOver(sel []bool, low int64, last bool) {
	old := s.x
	live := make([]bool, len(old.TraceRecs))
	for t := range live {
		live[t] = !s.dead[t]
	}
	if !last { // after the last, nothing is read to recognise
		s.rememberDead(old.TraceRecs)
	}
	s.x = s.asOpen(s.scratch())
	var newIdx []int32
	var copied int
	phase.Do(s.ctx, phase.Compact, func() { newIdx, copied = index.CopyTraces(s.x, old, live) })
	s.copiedSpans += copied
	if !last {
		s.handovers++
	}
	s.dropped += old.Dropped // KeepTraces clears it
	phase.Do(s.ctx, phase.Finalize, func() { old.KeepTraces(sel) })
	f := finalization{small: old, low: low}
	if last {
		f.dups = s.dropped
	}
	s.hand(f)
	s.carryOver(newIdx)
}

// carryOver moves the streaming state of the traces copied into the new
// open index (newIdx, per old trace index, as CopyTraces returns it).
func (s *shard) carryOver(newIdx []int32) {
	n := len(s.x.TraceRecs)
	lastEnd, minStart, rooted, spans := make([]int64, n), make([]int64, n), make([]bool, n), make([]int32, n)
	for t, nt := range newIdx {
		if nt >= 0 {
			lastEnd[nt], minStart[nt], rooted[nt], spans[nt] = s.lastEnd[t], s.minStart[t], s.rooted[t], s.spans[t]
		}
	}
	s.lastEnd, s.minStart, s.dead, s.rooted, s.spans = lastEnd, minStart, make([]bool, n), rooted, spans
	s.deadSpans = 0
}

// newOpenIndex returns an empty index for the shard's open traces.
func (s *shard) newOpenIndex() *index.Index {
	return s.asOpen(index.New(s.e.cfg.IndexOptions()))
}

// asOpen readies the empty index x to hold the shard's open traces. A
// speculative shard's has no duplicate cache (index.noCopyCache): a copy of
// a span it finalized spoils the run anyway, and finish leaves out the
// copies within a trace still open, so the cache would only cost its
// probes.
func (s *shard) asOpen(x *index.Index) *index.Index {
	x.NoCopyCache = s.e.speculative
	return x
}

// rememberDead adds the dead traces of recs (the open index's), finalized
// now or before, to the memory of finalized traces: whole in a
// speculative batch run, which must see every late span, and all at once
// (traceLog.addEach); the latest finalizedMemory in a stream.
func (s *shard) rememberDead(recs []index.TraceRec) {
	if !s.e.speculative {
		for t := range recs {
			if s.dead[t] {
				s.remember(recs[t].ID)
			}
		}
		return
	}
	s.prints = s.prints[:0]
	for t := range recs {
		if s.dead[t] {
			s.prints = append(s.prints, fingerprint(recs[t].ID))
		}
	}
	s.allFinalized.addEach(s.prints)
}

// remember adds a finalized trace id to a stream shard's bounded memory
// of them (the latest finalizedMemory).
func (s *shard) remember(id pcommon.TraceID) {
	if s.finalized == nil {
		s.finalized = make(map[pcommon.TraceID]struct{})
		s.finalizedRing = make([]pcommon.TraceID, 0, finalizedMemory)
	}
	if _, ok := s.finalized[id]; ok {
		return
	}
	if len(s.finalizedRing) < finalizedMemory {
		s.finalizedRing = append(s.finalizedRing, id)
	} else {
		delete(s.finalized, s.finalizedRing[s.ringNext])
		s.finalizedRing[s.ringNext] = id
		s.ringNext = (s.ringNext + 1) % finalizedMemory
	}
	s.finalized[id] = struct{}{}
}

// finalizedAmong sets gone[i] to whether the shard remembers finalizing
// the trace of recs[i], for a part's new traces at once: a speculative
// shard asks its traceLog for all of them together (traceLog.hasEach).
func (s *shard) finalizedAmong(recs []index.TraceRec, gone []bool) {
	if !s.e.speculative {
		for i := range recs {
			_, gone[i] = s.finalized[recs[i].ID]
		}
		return
	}
	s.prints = s.prints[:0]
	for i := range recs {
		s.prints = append(s.prints, fingerprint(recs[i].ID))
	}
	s.allFinalized.hasEach(s.prints, gone)
}

// flush finalizes every open trace. A batch shard observes its index as
// it is; a streaming one observes the live traces from a copy.
func (s *shard) flush() {
	if !s.e.finalizesEarly() {
		s.measure(s.ctx, finalization{small: s.x, low: math.MaxInt64})
		return
	}
	if s.e.speculative && (s.e.isSpoiled() || s.finalizedTwice()) {
		s.e.spoil(endOfRead)
		return
	}
	s.seq++ // merged after every batch, the shards' in their order
	sel := make([]bool, len(s.x.TraceRecs))
	for t := range sel {
		sel[t] = !s.dead[t]
	}
	s.retire(sel)
	s.handOver(sel, math.MaxInt64, true)
}

// finalizedTwice reports whether a speculative shard measured a trace
// twice: opened again, by a span that came after its trace was finalized
// and handed over (and no longer in the log's memory, or track would
// have spoiled the run at once). Every trace still in the open index is
// finalized now, so the log takes them all before it looks for a repeat.
func (s *shard) finalizedTwice() bool {
	for t := range s.x.TraceRecs {
		s.allFinalized.add(s.x.TraceRecs[t].ID)
	}
	return s.allFinalized.repeats()
}
