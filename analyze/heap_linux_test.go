package analyze

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
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
