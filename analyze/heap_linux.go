package analyze

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

// adviseHugePages asks for huge pages on the whole 2 MiB pages inside b.
// A refusal (an old kernel) only leaves the small pages.
func adviseHugePages(b []byte) {
	if len(b) == 0 {
		return
	}
	start := hugePage - int(uintptr(unsafe.Pointer(unsafe.SliceData(b)))%hugePage)
	if start == hugePage {
		start = 0
	}
	end := start + (len(b)-start)/hugePage*hugePage
	if end <= start {
		return
	}
	_ = unix.Madvise(b[start:end], unix.MADV_HUGEPAGE)
}
