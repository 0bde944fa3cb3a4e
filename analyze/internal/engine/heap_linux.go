package engine

import (
	"os"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugePage is the size of a transparent huge page on the architectures Go
// runs Linux on with THP (amd64, arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// hugePagesAdvisable reports whether the kernel backs memory advised with
// MADV_HUGEPAGE by huge pages: THP in mode "madvise" (with "always" the
// heap has them already; with "never", or without THP, nothing to ask).
func hugePagesAdvisable() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && strings.Contains(string(b), "[madvise]")
}

// adviseHugePages asks for huge pages on the 2 MiB pages b overlaps,
// rounded out to whole ones: the advice sets a flag on the mapping and
// touches nothing, and what the rounding takes in beyond b is heap too (or
// its reservation, which the runtime maps afresh before use). A refusal
// (an old kernel, a gap in the range) only leaves small pages.
func adviseHugePages(b []byte) {
	if len(b) == 0 {
		return
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := p &^ (hugePage - 1)
	hi := (p + uintptr(len(b)) + hugePage - 1) &^ (hugePage - 1)
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, lo, hi-lo, unix.MADV_HUGEPAGE)
}
