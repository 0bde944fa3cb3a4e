package engine

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcptrace/mcptrace/analyze/ingest"
)

// TestAdviseHugePagesMarksTheHeapMapping pins that the advice reaches the
// kernel: the mapping holding the buffer's whole 2 MiB pages carries the
// "hg" (MADV_HUGEPAGE) flag in /proc/self/smaps afterwards.
func TestAdviseHugePagesMarksTheHeapMapping(t *testing.T) {
	if !hugePagesAdvisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	b := make([]byte, 8*hugePage)
	adviseHugePages(b)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	inside := (p + hugePage - 1) &^ (hugePage - 1) // the first whole huge page
	flags := vmFlagsAt(t, inside)
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("mapping at %#x has VmFlags %q, want hg (MADV_HUGEPAGE)", inside, flags)
	}
}

// vmFlagsAt returns the VmFlags line of the mapping of this process that
// holds address a.
func vmFlagsAt(t *testing.T, a uintptr) string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := mappingRange(line); ok {
			in = lo <= a && a < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.TrimSpace(rest)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("no mapping holds %#x", a)
	return ""
}

// mappingRange parses the range of a mapping's header line of smaps
// ("7f00-7f10 rw-p ...").
func mappingRange(line string) (lo, hi uintptr, ok bool) {
	rng, _, found := strings.Cut(line, " ")
	if !found {
		return 0, 0, false
	}
	l, h, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	lv, err1 := strconv.ParseUint(l, 16, 64)
	hv, err2 := strconv.ParseUint(h, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(lv), uintptr(hv), true
}

// TestPrepareHeapLeavesTheReserveUntouched pins that readying the heap for
// a 256 MiB input costs next to no resident memory: the reserve must stay
// virtual until the read's allocations use it. The heap is first given a
// freed, dirty run of pages at its top, as a process's startup garbage
// leaves one: a reserve allocated in one piece starts there, and the
// runtime then zeroes, so touches, all of it.
func TestPrepareHeapLeavesTheReserveUntouched(t *testing.T) {
	if !hugePagesAdvisable() {
		t.Skip("transparent huge pages are not in madvise mode here")
	}
	if raceEnabled {
		t.Skip("the race detector touches shadow memory for every allocation")
	}
	input := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(input)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 << 20
	if err := f.Truncate(size); err != nil { // sparse: sized, not written
		t.Fatal(err)
	}
	f.Close()
	top := make([]byte, 8<<20)
	for i := range top {
		top[i] = 1 // dirty: freed, these pages need zeroing when reused
	}
	top = nil
	runtime.GC()
	runtime.KeepAlive(top)
	before := residentBytes(t)
	prepareHeap(ingest.Files{input}.Bytes(), 4*size, 1)
	if grew := residentBytes(t) - before; grew > 32<<20 {
		t.Errorf("RSS grew by %d MiB readying the heap for a %d MiB input, want under 32 MiB: the reserve was touched", grew>>20, size>>20)
	}
}

// residentBytes returns this process's resident set size.
func residentBytes(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		t.Skipf("no statm: %v", err)
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		t.Fatalf("statm %q: want size and resident", b)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return pages * int64(os.Getpagesize())
}
