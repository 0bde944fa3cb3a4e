package engine

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// TestTraceSetRemembersEveryTraceAdded pins the speculative run's memory of
// finalized traces through its growths: every id added is found, ids not
// added are not (the bench dumps' shape: a constant half and a counter), and
// adding an id twice counts it once.
func TestTraceSetRemembersEveryTraceAdded(t *testing.T) {
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x5eed)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	var s traceSet
	if s.has(id(1)) {
		t.Fatal("an empty set has a trace")
	}
	const n = 100_000
	for i := range uint64(n) {
		s.add(id(2 * i))
		s.add(id(2 * i)) // again: still one
	}
	if s.n != n {
		t.Errorf("the set counts %d traces, want %d", s.n, n)
	}
	for i := range uint64(n) {
		if !s.has(id(2 * i)) {
			t.Fatalf("trace %d added but not found", 2*i)
		}
		if s.has(id(2*i + 1)) {
			t.Fatalf("trace %d never added but found", 2*i+1)
		}
	}
	if 2*s.n > len(s.slots) {
		t.Errorf("%d traces in %d slots: more than half full", s.n, len(s.slots))
	}
}

// TestTraceLogFindsATraceFinalizedTwiceInFlatMemory pins the speculative
// run's memory of finalized traces: however many traces are added, memory
// holds at most two spills' worth; a trace added again is found, whether it
// is still in memory (at once) or only in a spilled run (at the end, by
// repeats), at the first, a middle and the last position of a run; a log
// with no repeat says none; and with no temporary directory to spill to
// the log keeps everything in memory and is just as exact. It runs with
// runs of 8 traces (each read back in one block) and of 2*printBlock+5
// (read back in three blocks, the last a short one).
func TestTraceLogFindsATraceFinalizedTwiceInFlatMemory(t *testing.T) {
	for _, batch := range []int{8, 2*printBlock + 5} {
		t.Run(fmt.Sprintf("runs of %d", batch), func(t *testing.T) {
			testTraceLogFindsATraceFinalizedTwice(t, batch, 125*batch)
		})
	}
}

// testTraceLogFindsATraceFinalizedTwice is the test above with logBatch
// set to batch, over n traces.
func testTraceLogFindsATraceFinalizedTwice(t *testing.T, batch, n int) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = batch
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x5eed)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	for _, c := range []struct {
		name    string
		again   int // the trace added a second time, -1 none
		noTmp   bool
		want    bool
		atOnce  bool // the repeat is caught by add (memory holds it)
		spilled bool
	}{
		{name: "no repeat", again: -1, spilled: true},
		{name: "the first trace, long spilled", again: 0, want: true, spilled: true},
		{name: "a middle trace, spilled", again: n / 2, want: true, spilled: true},
		{name: "the last trace, in memory", again: n - 1, want: true, atOnce: true, spilled: true},
		{name: "no temporary directory, no repeat", again: -1, noTmp: true},
		{name: "no temporary directory, the first trace", again: 0, noTmp: true, want: true, atOnce: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.noTmp {
				t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "gone"))
			} else {
				t.Setenv("TMPDIR", t.TempDir())
			}
			var l traceLog
			defer l.close()
			var early, maxMem int64 // the most memory over the first tenth, over all
			for i := range n {
				l.add(id(uint64(i)))
				maxMem = max(maxMem, l.memBytes())
				if i < n/10 {
					early = maxMem
				}
			}
			if c.again >= 0 {
				l.add(id(uint64(c.again)))
			}
			if l.dup != c.atOnce {
				t.Errorf("caught at once: %v, want %v", l.dup, c.atOnce)
			}
			if got := l.repeats(); got != c.want {
				t.Errorf("repeats: %v, want %v", got, c.want)
			}
			if spilled := len(l.runs) > 0; spilled != c.spilled {
				t.Errorf("spilled %d runs, want spilled %v", len(l.runs), c.spilled)
			}
			if c.spilled && maxMem != early {
				t.Errorf("the log held %d bytes for %d traces, %d for the first %d: not flat", maxMem, n, early, n/10)
			}
		})
	}
}

// TestTraceLogLeavesNoFileBehind pins that a log that spilled leaves its
// temporary directory as it found it once closed.
func TestTraceLogLeavesNoFileBehind(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 4
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	var l traceLog
	for i := range 64 {
		var id pcommon.TraceID
		id[0], id[15] = 1, byte(i)
		l.add(id)
	}
	if l.file == nil {
		t.Fatal("the log never spilled")
	}
	l.close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d files in the temporary directory: %v", len(left), left[0].Name())
	}
}

// TestTraceSetStaysShortOnIDsChosenToCollide pins fingerprint's key: trace
// ids chosen (by inverting the fixed MurmurHash3 finalizer the set once
// used) so that their unkeyed fingerprints share their low 20 bits land,
// under the keyed fingerprint, in clusters no longer than random ids'
// (under the fixed mix they made one cluster of every id, and each add
// walked it: quadratic in the dump).
func TestTraceSetStaysShortOnIDsChosenToCollide(t *testing.T) {
	const n = 20_000
	var s traceSet
	for k := range uint64(n) {
		s.add(collidingID(k<<20 | 0x5eed))
	}
	if s.n != n {
		t.Fatalf("the set counts %d traces, want %d", s.n, n)
	}
	longest, run := 0, 0
	for i := range 2 * len(s.slots) { // twice round: a cluster may wrap
		if s.slots[i%len(s.slots)] == 0 {
			run = 0
			continue
		}
		run++
		longest = max(longest, min(run, len(s.slots)))
	}
	// Random fingerprints at most half full: the longest cluster of 20k is
	// a few dozen slots; one of the chosen ids' would be 20k.
	if longest > 200 {
		t.Errorf("%d ids chosen to collide made a cluster of %d slots", n, longest)
	}
}

// collidingID returns the trace id whose fingerprint under the fixed mix
// (h = lo ^ rotl(hi, 17), then MurmurHash3's finalizer) is f: the first
// half zero, the second the finalizer inverted.
func collidingID(f uint64) pcommon.TraceID {
	inv := func(c uint64) uint64 { // c's inverse mod 2^64, by Newton's method
		x := c
		for range 6 {
			x *= 2 - c*x
		}
		return x
	}
	h := f
	h ^= h >> 33
	h *= inv(0xc4ceb9fe1a85ec53)
	h ^= h >> 33
	h *= inv(0xff51afd7ed558ccd)
	h ^= h >> 33
	var id pcommon.TraceID
	binary.LittleEndian.PutUint64(id[8:], bits.RotateLeft64(h, -17))
	return id
}

// TestTraceLogCannotTellWhenItsFileFails pins that a spilled run the log
// cannot read back makes repeats answer yes (the run is read again holding
// every trace, so the answer stays exact), whether the run's first block
// fails or one after it: a file closed under the log, and one cut a
// fingerprint short of its last run's end.
func TestTraceLogCannotTellWhenItsFileFails(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 2*printBlock + 5 // each run is three blocks
	for _, tc := range []struct {
		name  string
		spoil func(l *traceLog) error
	}{
		{"the file closed: every first block fails", func(l *traceLog) error { return l.file.Close() }},
		{"the last run cut short: its last block fails", func(l *traceLog) error { return l.file.Truncate(l.runs[len(l.runs)-1] - 8) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			var l traceLog
			defer l.close()
			for i := range 3 * logBatch {
				var id pcommon.TraceID
				binary.BigEndian.PutUint64(id[:8], 0xfa11)
				binary.BigEndian.PutUint64(id[8:], uint64(i))
				l.add(id)
			}
			if len(l.runs) < 2 {
				t.Fatalf("%d runs spilled, want at least 2", len(l.runs))
			}
			if l.repeats() {
				t.Fatal("repeats says yes before the file failed: the test proves nothing")
			}
			if err := tc.spoil(&l); err != nil {
				t.Fatal(err)
			}
			if !l.repeats() {
				t.Error("repeats says no on a run it could not read back")
			}
		})
	}
}

// TestTraceLogCannotTellWhenASpillFails pins that a run the log could not
// write makes repeats answer yes although every run it did write reads
// back without a repeat: the file swapped, after the first spill, for a
// read-only handle on it (Linux's /proc/self/fd), so the next spill's
// write fails and its traces are in no run.
func TestTraceLogCannotTellWhenASpillFails(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 8
	t.Setenv("TMPDIR", t.TempDir())
	var l traceLog
	defer l.close()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			var id pcommon.TraceID
			binary.BigEndian.PutUint64(id[:8], 0x5b111)
			binary.BigEndian.PutUint64(id[8:], uint64(i))
			l.add(id)
		}
	}
	add(0, logBatch)
	if len(l.runs) != 1 {
		t.Fatalf("%d runs spilled, want 1", len(l.runs))
	}
	ro, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", l.file.Fd()))
	if err != nil {
		t.Skipf("no read-only handle on the log's file: %v", err)
	}
	l.file.Close()
	l.file = ro
	add(logBatch, 3*logBatch)
	if !l.failed || len(l.runs) != 1 {
		t.Fatalf("failed %v with %d runs: the second spill's write did not fail", l.failed, len(l.runs))
	}
	if !l.repeats() {
		t.Error("repeats says no after a spill it could not write")
	}
}

// TestTraceLogChecksBucketsLargerThanAFirstTable pins that repeats' set
// grows with the bucket it holds: 600k traces spilled at the default batch
// put about 2300 fingerprints in each of the 256 buckets, past the 1024
// slots the set starts with (a set that did not count what it held would
// fill and never find an empty slot), and one trace added again among
// them is still found.
func TestTraceLogChecksBucketsLargerThanAFirstTable(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	const n = 600_000
	for _, again := range []int{-1, 7} {
		t.Run(fmt.Sprintf("again=%d", again), func(t *testing.T) {
			var l traceLog
			defer l.close()
			id := func(i int) pcommon.TraceID {
				var b pcommon.TraceID
				binary.BigEndian.PutUint64(b[:8], 0xb16)
				binary.BigEndian.PutUint64(b[8:], uint64(i))
				return b
			}
			for i := range n {
				l.add(id(i))
			}
			if again >= 0 {
				l.add(id(again))
			}
			if len(l.runs) < 8 || l.dup {
				t.Fatalf("%d runs, caught at once %v: want the trace long spilled", len(l.runs), l.dup)
			}
			if got, want := l.repeats(), again >= 0; got != want {
				t.Errorf("repeats = %v, want %v", got, want)
			}
		})
	}
}

// TestTraceLogHasTheTracesItHoldsInMemory pins has, which a speculative
// shard asks of every new trace so that a child exported just after its
// root's batch spilled is caught at once: it answers yes for the traces
// added since the last spill and for those of the spill before (the two
// tables memory holds), no for those only in the file (repeats finds them
// at the end) and for traces never added.
func TestTraceLogHasTheTracesItHoldsInMemory(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 8
	t.Setenv("TMPDIR", t.TempDir())
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x10c)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	var l traceLog
	defer l.close()
	for i := range uint64(20) { // spills after 8 and 16: 0-7 in the file, 8-15 the previous table, 16-19 recent
		l.add(id(i))
	}
	if len(l.runs) != 2 {
		t.Fatalf("%d runs spilled, want 2", len(l.runs))
	}
	for _, tc := range []struct {
		name     string
		from, to uint64
		want     bool
	}{
		{"only in the file", 0, 7, false},
		{"the spill before: the previous table", 8, 15, true},
		{"since the last spill", 16, 19, true},
		{"never added", 20, 25, false},
	} {
		var prints []uint64
		for i := tc.from; i <= tc.to; i++ {
			if got := l.has(id(i)); got != tc.want {
				t.Errorf("%s: has(trace %d) = %v, want %v", tc.name, i, got, tc.want)
			}
			prints = append(prints, fingerprint(id(i)))
		}
		in := make([]bool, len(prints))
		l.hasEach(prints, in)
		for i, got := range in {
			if got != tc.want {
				t.Errorf("%s: hasEach says %v for trace %d, want %v", tc.name, got, tc.from+uint64(i), tc.want)
			}
		}
	}
	if l.repeats() {
		t.Error("repeats says yes on a log without a repeat")
	}
}

// TestPrintFilterNeverForgetsAndRarelyGuesses pins the filter in front of
// a traceLog's tables: a fingerprint added says "maybe" for its own
// generation until the second turn after (recent, then previous, then
// gone), never for the other; and a generation of logBatch fingerprints
// (the production size) answers "maybe" for under 3% of fingerprints it
// does not hold, or the tables it spares would be read anyway.
func TestPrintFilterNeverForgetsAndRarelyGuesses(t *testing.T) {
	var p printFilter
	if p.mayHold(1, recentGen) || p.mayHold(1, previousGen) {
		t.Fatal("an empty filter says maybe")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	first := make([]uint64, 1<<16)
	for i := range first {
		first[i] = rng.Uint64() | 1
		p.add(first[i])
	}
	for _, f := range first {
		if !p.mayHold(f, recentGen) {
			t.Fatalf("fingerprint %#x added is not in recent's bits", f)
		}
	}
	p.turn()
	second := make([]uint64, 1<<16)
	for i := range second {
		second[i] = rng.Uint64() | 1
		p.add(second[i])
	}
	for i := range first {
		if !p.mayHold(first[i], previousGen) {
			t.Fatalf("fingerprint %#x of the generation before is not in previous's bits", first[i])
		}
		if !p.mayHold(second[i], recentGen) {
			t.Fatalf("fingerprint %#x added after the turn is not in recent's bits", second[i])
		}
	}
	guessed := 0
	const probes = 100_000
	for range probes {
		if p.mayHold(rng.Uint64()|1, previousGen) {
			guessed++
		}
	}
	if rate := float64(guessed) / probes; rate > 0.03 {
		t.Errorf("%.1f%% of fingerprints never added read as maybe in a generation of %d", 100*rate, len(first))
	}
	p.turn()
	gone := 0
	for _, f := range first {
		if !p.mayHold(f, previousGen) && !p.mayHold(f, recentGen) {
			gone++
		}
	}
	if gone < len(first)*9/10 {
		t.Errorf("two turns after, %d of %d fingerprints are still in the filter, want them cleared", len(first)-gone, len(first))
	}
}

// TestTraceLogAsksItsTablesWhereTheFilterMayErr pins that the filter only
// spares the tables a question: fingerprints that differ from ones added
// only in bits the filter does not read share their filter bits, and
// still read as not held, one at a time or together, in recent's table
// and in previous's; and addEach catches a trace added twice in one call,
// or added before and still in memory, as add does.
func TestTraceLogAsksItsTablesWhereTheFilterMayErr(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 4
	t.Setenv("TMPDIR", t.TempDir())
	var l traceLog
	defer l.close()
	added := []uint64{0x0123456789abcdef, 0x1122334455667788, 0x0a0b0c0d0e0f1011, 0x7766554433221100, 0x0fedcba987654321}
	l.addEach(added) // four spill to previous, the fifth stays in recent
	if l.dup || len(l.runs) != 1 {
		t.Fatalf("after five distinct adds: dup %v, %d runs, want false, 1", l.dup, len(l.runs))
	}
	const unread = 1 << 50 // above the filter's bits, below the bucket's byte
	var twins []uint64
	for _, f := range added {
		twin := f ^ unread
		w, b := filterSlot(f)
		if tw, tb := filterSlot(twin); tw != w || tb != b {
			t.Fatalf("fingerprint %#x and its twin %#x have different filter bits", f, twin)
		}
		twins = append(twins, twin)
		if l.holds(twin) {
			t.Errorf("holds(%#x) = true: only %#x was added", twin, f)
		}
		if !l.holds(f) {
			t.Errorf("holds(%#x) = false for a fingerprint added", f)
		}
	}
	in := make([]bool, len(twins))
	l.hasEach(twins, in)
	if slices.Contains(in, true) {
		t.Errorf("hasEach(twins) = %v, want all false", in)
	}
	l.addEach([]uint64{0x3333333333333333, 0x3333333333333333})
	if !l.dup {
		t.Error("addEach of one fingerprint twice in a call: not caught")
	}
	l.dup = false
	l.addEach([]uint64{added[1]}) // in previous
	if !l.dup {
		t.Error("addEach of a fingerprint in previous's table: not caught")
	}
}
