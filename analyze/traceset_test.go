package analyze

import (
	"encoding/binary"
	"os"
	"path/filepath"
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
// the log keeps everything in memory and is just as exact.
func TestTraceLogFindsATraceFinalizedTwiceInFlatMemory(t *testing.T) {
	defer func(n int) { logBatch = n }(logBatch)
	logBatch = 8
	id := func(n uint64) pcommon.TraceID {
		var b pcommon.TraceID
		binary.BigEndian.PutUint64(b[:8], 0x5eed)
		binary.BigEndian.PutUint64(b[8:], n)
		return b
	}
	const n = 1000
	for _, c := range []struct {
		name    string
		again   int64 // the trace added a second time, -1 none
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
			for i := range uint64(n) {
				l.add(id(i))
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
