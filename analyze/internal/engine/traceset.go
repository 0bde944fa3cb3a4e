package engine

import (
	"encoding/binary"
	"hash/maphash"
	"os"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// traceSet is a set of trace ids kept as 64-bit fingerprints in one
// open-addressing table: a speculative run remembers every trace it
// finalized (hundreds of thousands in a large dump) and asks about every
// new one, and a Go map of 16-byte keys cost it several times the time
// and memory. Two ids may share a fingerprint (for a million traces, about
// one chance in 10^7 per run): a new trace is then taken for a finalized
// one, which spoils the speculative run and makes it read the input again,
// holding every trace; the answer stays exact.
type traceSet struct {
	slots []uint64 // 0: empty
	n     int
}

// fingerprintSeed keys fingerprint per process. Trace ids come from the
// dump, so whoever writes it chooses them: with a fixed mix (an invertible
// one, as MurmurHash3's finalizer is) a dump of ids chosen to share a
// fingerprint's low bits would pile them into one cluster of the
// open-addressing tables below and make every add and has walk it, a run
// quadratic in the traces. A random key per process leaves no id worse
// than another.
var fingerprintSeed = maphash.MakeSeed()

// fingerprint hashes id (keyed by fingerprintSeed) into a non-zero word.
func fingerprint(id pcommon.TraceID) uint64 {
	h := maphash.Bytes(fingerprintSeed, id[:])
	if h == 0 {
		h = 1
	}
	return h
}

// add puts id in the set.
func (s *traceSet) add(id pcommon.TraceID) { s.addPrint(fingerprint(id)) }

// addPrint puts fingerprint f in the set, reporting whether it was new.
func (s *traceSet) addPrint(f uint64) bool {
	if 2*(s.n+1) > len(s.slots) {
		s.grow()
	}
	if !s.insert(f) {
		return false
	}
	s.n++
	return true
}

// reset empties the set, keeping its table for the next fill.
func (s *traceSet) reset() {
	clear(s.slots)
	s.n = 0
}

// has reports whether id (or an id of the same fingerprint) is in the set.
func (s *traceSet) has(id pcommon.TraceID) bool {
	if s.n == 0 {
		return false
	}
	return s.hasPrint(fingerprint(id))
}

// hasPrint reports whether fingerprint f is in the set.
func (s *traceSet) hasPrint(f uint64) bool {
	if s.n == 0 {
		return false
	}
	_, found := s.find(f)
	return found
}

// insert places fingerprint f, reporting whether it was new.
func (s *traceSet) insert(f uint64) bool {
	i, found := s.find(f)
	s.slots[i] = f
	return !found
}

// find returns the slot holding f, or the empty one where it would go.
func (s *traceSet) find(f uint64) (uint64, bool) {
	mask := uint64(len(s.slots) - 1)
	for i := f & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case f:
			return i, true
		case 0:
			return i, false
		}
	}
}

// grow doubles the table (at most half full keeps probes short).
func (s *traceSet) grow() {
	old := s.slots
	s.slots = make([]uint64, max(1024, 2*len(old)))
	for _, f := range old {
		if f != 0 {
			s.insert(f)
		}
	}
}

// traceLog is a speculative shard's memory of every trace it finalized,
// in memory that does not grow with the dump. The run must know, exactly,
// whether any span came for a trace it had already measured; a set of
// every finalized trace grew by 16 to 32 bytes a trace (16M spans: 32 MiB
// live, 48 during its last doubling, twice that in RSS under the
// collector's goal), the one part of a time-ordered batch run that grew
// with the dump. The log keeps the fingerprints of the latest logBatch to
// 2*logBatch traces in memory, which catches the usual late span (a child
// exported just after its root) at once, and writes older ones to a
// temporary file as runs of logBatch, each grouped by the fingerprint's
// top byte (its bucket); at the end repeats reads the runs a bucket at a
// time and finds any trace finalized twice (opened again after it was
// measured and handed over), which spoils the run as a late span
// would. Grouping a run is one counting pass and checking a bucket one
// insert per fingerprint, where sorting the runs and merging them cost
// several times that (about 0.5% of a batch run's instructions at 4M
// spans, BENCHMARKS.md). Where no temporary file can be made it keeps
// every fingerprint in memory, as the set alone did; a file that fails
// after that makes repeats answer yes, so the input is read again holding
// every trace: the answer stays exact.
type traceLog struct {
	recent   traceSet // fingerprints added since the last spill
	previous traceSet // the run spilled last, kept for has
	dup      bool     // a fingerprint was added while memory held it
	file     *os.File // the spilled runs, one after another; nil before the first
	runs     []int64  // where each run ends in file
	unlinked bool     // the file's name is gone already
	inMemory bool     // no file could be made: recent keeps growing
	failed   bool     // a write to file failed: repeats says yes
	scratch  []uint64
	filter   printFilter // which fingerprints recent and previous may hold
	touched  uint64      // touch's sum of what it read
}

// logBatch is how many fingerprints a traceLog spills at a time: 512 KiB
// of file, 1 MiB of table for each of recent and previous. A variable only
// so tests can spill every few traces.
var logBatch = 1 << 16

// add records a finalized trace.
func (l *traceLog) add(id pcommon.TraceID) { l.addPrint(fingerprint(id)) }

// addPrint records the finalized trace of fingerprint f.
func (l *traceLog) addPrint(f uint64) {
	// One probe of recent finds f or the slot it goes to: grown first, so
	// the slot stays valid (a duplicate grows it no sooner than the next
	// add would).
	if 2*(l.recent.n+1) > len(l.recent.slots) {
		l.recent.grow()
	}
	i, found := l.recent.find(f)
	if found || l.filter.mayHold(f, previousGen) && l.previous.hasPrint(f) {
		l.dup = true
		return
	}
	l.recent.slots[i] = f
	l.recent.n++
	l.filter.add(f)
	if l.recent.n >= logBatch && !l.inMemory {
		l.spill()
	}
}

// addEach records the finalized traces of fingerprints prints, as add
// does one at a time, after reading in one loop the filter word and the
// table slot each will look at (touch).
func (l *traceLog) addEach(prints []uint64) {
	l.touch(prints)
	for _, f := range prints {
		l.addPrint(f)
	}
}

// touch reads the filter word and recent's slot of each fingerprint, so
// that their cache lines are loaded when addEach comes to them. The log's
// 1.3 MiB are rarely in a cache (a run streams gigabytes past them):
// asked one trace at a time, between the engine's other work, each
// question waited for its own miss, about 100 ns a trace on a 4M-span
// run; a loop of independent loads lets the core wait for many at once.
func (l *traceLog) touch(prints []uint64) {
	if l.filter.words == nil || len(l.recent.slots) == 0 {
		return
	}
	mask := uint64(len(l.recent.slots) - 1)
	var sum uint64
	for _, f := range prints {
		w, _ := filterSlot(f)
		sum += l.filter.words[2*w] + l.recent.slots[f&mask]
	}
	l.touched = sum // kept, so the compiler keeps the loads
}

// has reports whether id was finalized among the traces the log holds in
// memory (the latest ones); repeats answers for all of them.
func (l *traceLog) has(id pcommon.TraceID) bool { return l.holds(fingerprint(id)) }

// holds is has for fingerprint f.
func (l *traceLog) holds(f uint64) bool {
	return l.filter.mayHold(f, recentGen) && l.recent.hasPrint(f) ||
		l.filter.mayHold(f, previousGen) && l.previous.hasPrint(f)
}

// hasEach sets in[i] to has for the trace of fingerprint prints[i], for
// every one: the filter is read for all of them first, in one loop of
// independent loads (touch says why), and the tables only for those it
// may hold.
func (l *traceLog) hasEach(prints []uint64, in []bool) {
	in = in[:len(prints)]
	if l.filter.words == nil {
		clear(in)
		return
	}
	for i, f := range prints {
		in[i] = l.filter.mayHoldEither(f)
	}
	for i, f := range prints {
		if in[i] {
			in[i] = l.holds(f)
		}
	}
}

// memBytes is what the log holds in memory, for the memory budget.
func (l *traceLog) memBytes() int64 {
	return int64(len(l.recent.slots)+len(l.previous.slots)+cap(l.scratch)+len(l.filter.words)) * 8
}

// printFilter is a Bloom filter over each of a traceLog's two tables, so
// that has and add can answer "not there" without reading them. Every new
// trace asks has and every finalized trace add, each at a random slot of
// two tables of 1 MiB that a run streaming gigabytes keeps out of the
// caches: two cache misses a question were about 5% of a 4M-span batch
// run's CPU time, though few instructions. The filter is a quarter of
// the tables' size, and a fingerprint's two bits for both tables share
// one word pair, so one cache line answers for both; a table is read only
// when its bits say it may hold the fingerprint (about 1.5% of new traces
// at a full table). Its lines miss the caches too, so hasEach and addEach
// read them for many traces at once. Two bits a generation, of 2^20
// each, for up to logBatch fingerprints; a log that keeps everything in
// memory (no file) fills it, and then only answers "maybe", as exact as
// before.
type printFilter struct {
	words []uint64 // word 2w+g: generation g's bits of word w
	cur   int      // the generation of recent's bits
}

// The generations mayHold asks about.
const (
	recentGen   = 0
	previousGen = 1
)

// filterWords is how many words each generation has.
const filterWords = 1 << 14

// filterSlot returns fingerprint f's word (of a generation) and two bits.
// The word comes from bits the tables' slots and printBucket do not use
// first (the tables take the low bits, the buckets the top byte).
func filterSlot(f uint64) (int, uint64) {
	w := int(f>>20) & (filterWords - 1)
	return w, 1<<(f>>34&63) | 1<<(f>>40&63)
}

// add sets f's bits in recent's generation.
func (p *printFilter) add(f uint64) {
	if p.words == nil {
		p.words = make([]uint64, 2*filterWords)
	}
	w, bits := filterSlot(f)
	p.words[2*w+p.cur] |= bits
}

// mayHold reports whether generation gen (recentGen, previousGen) may
// hold f: false only if it surely does not.
func (p *printFilter) mayHold(f uint64, gen int) bool {
	if p.words == nil {
		return false
	}
	w, bits := filterSlot(f)
	return p.words[2*w+(p.cur^gen)]&bits == bits
}

// mayHoldEither reports whether either generation may hold f.
func (p *printFilter) mayHoldEither(f uint64) bool {
	w, bits := filterSlot(f)
	pair := p.words[2*w : 2*w+2]
	return pair[0]&bits == bits || pair[1]&bits == bits
}

// turn follows a spill: recent's bits become previous's, and previous's
// are cleared for the new recent.
func (p *printFilter) turn() {
	if p.words == nil {
		return
	}
	p.cur ^= 1
	for w := p.cur; w < len(p.words); w += 2 {
		p.words[w] = 0
	}
}

// logBuckets is how many buckets a run is grouped into, by the top byte
// of the fingerprint: at the end repeats holds one bucket of every run at
// a time, 1/256 of the fingerprints.
const logBuckets = 256

// printBucket is fingerprint f's bucket.
func printBucket(f uint64) int { return int(f >> 56) }

// groupedRecent returns recent's fingerprints grouped by bucket in
// ascending order (a counting sort on the top byte), in l.scratch.
func (l *traceLog) groupedRecent() []uint64 {
	var at [logBuckets]int
	for _, f := range l.recent.slots {
		if f != 0 {
			at[printBucket(f)]++
		}
	}
	n := 0
	for b, c := range at {
		at[b] = n
		n += c
	}
	l.scratch = slices.Grow(l.scratch[:0], n)[:n]
	for _, f := range l.recent.slots {
		if f != 0 {
			b := printBucket(f)
			l.scratch[at[b]] = f
			at[b]++
		}
	}
	return l.scratch
}

// spill writes recent to the file as one run and makes it previous.
func (l *traceLog) spill() {
	if l.file == nil && !l.failed {
		f, err := os.CreateTemp("", "mcptrace-traces-*")
		if err != nil {
			l.inMemory = true // keep everything in memory: exact, not flat
			return
		}
		l.file = f
		// Unlinked while open where the system allows it, so a killed run
		// leaves nothing behind; close removes it otherwise.
		l.unlinked = os.Remove(f.Name()) == nil
	}
	if !l.failed {
		run := l.groupedRecent()
		buf := make([]byte, 8*len(run))
		for i, f := range run {
			binary.LittleEndian.PutUint64(buf[8*i:], f)
		}
		end := int64(0)
		if len(l.runs) > 0 {
			end = l.runs[len(l.runs)-1]
		}
		if _, err := l.file.WriteAt(buf, end); err != nil {
			l.failed = true
		} else {
			l.runs = append(l.runs, end+int64(len(buf)))
		}
	}
	l.previous, l.recent = l.recent, l.previous
	l.recent.reset()
	l.filter.turn()
}

// repeats reports whether any trace was added twice over the log's life
// (or it cannot tell: a file error): every run, spilled and in memory, read
// a bucket at a time into one set, in memory of a block per run and a
// bucket's fingerprints.
func (l *traceLog) repeats() bool {
	if l.dup || l.failed {
		return true
	}
	if len(l.runs) == 0 {
		return false
	}
	cursors := make([]*printCursor, 0, len(l.runs)+1)
	start := int64(0)
	for _, end := range l.runs {
		c := &printCursor{file: l.file, off: start, end: end}
		start = end
		if !c.next() && c.err != nil {
			return true
		}
		cursors = append(cursors, c)
	}
	mem := &printCursor{block: l.groupedRecent()}
	mem.next()
	cursors = append(cursors, mem)
	var seen traceSet
	for b := range logBuckets {
		seen.reset()
		for _, c := range cursors {
			for c.ok && printBucket(c.cur) == b {
				if !seen.addPrint(c.cur) {
					return true
				}
				if !c.next() && c.err != nil {
					return true
				}
			}
		}
	}
	return false
}

// close drops the log's file.
func (l *traceLog) close() {
	if l.file == nil {
		return
	}
	_ = l.file.Close() // read only at the end: nothing is lost with it
	if !l.unlinked {
		_ = os.Remove(l.file.Name())
	}
	l.file = nil
}

// printCursor walks one run of fingerprints: from the file (between off
// and end) a block at a time, or from memory (block alone).
type printCursor struct {
	file     *os.File
	off, end int64
	block    []uint64 // what is left of the block read last
	cur      uint64
	ok       bool // cur holds the run's next fingerprint
	err      error
	raw      []byte   // the file's bytes of a block
	buf      []uint64 // what block is cut from
}

// printBlock is how many fingerprints a cursor reads from the file at a
// time: 4 KiB per run.
const printBlock = 512

// next moves to the run's next fingerprint, false at its end (or on a read
// error, in err).
func (c *printCursor) next() bool {
	if len(c.block) == 0 && !c.fill() {
		c.ok = false
		return false
	}
	c.cur, c.block, c.ok = c.block[0], c.block[1:], true
	return true
}

// fill reads the run's next block from the file, false at the run's end
// or on an error (in err).
func (c *printCursor) fill() bool {
	n := min(c.end-c.off, 8*printBlock)
	if c.file == nil || n <= 0 {
		return false
	}
	if c.raw == nil {
		c.raw = make([]byte, 8*printBlock)
		c.buf = make([]uint64, printBlock)
	}
	raw := c.raw[:n]
	if _, err := c.file.ReadAt(raw, c.off); err != nil {
		c.err = err
		return false
	}
	c.off += n
	c.block = c.buf[:n/8]
	for i := range c.block {
		c.block[i] = binary.LittleEndian.Uint64(raw[8*i:])
	}
	return true
}
