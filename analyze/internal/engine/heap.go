package engine

import "runtime"

// The heap a batch analysis grows into. A run keeps about half a JSON
// dump's size (the index, then the measures' arrays) and every byte of it
// is touched for the first time once: on Linux each 4 KiB page costs a
// minor fault, and on the virtual machines the benches ran on a fault
// costs about 10 µs, about a quarter of a 1M-span run's CPU (BENCHMARKS.md,
// "Engine"). The Go runtime no longer asks for transparent huge pages
// (go1.21.1 dropped it), and with the common THP mode "madvise" the kernel
// then backs the heap with 4 KiB pages only. prepareHeap grows the heap
// once, ahead of the read, by the size the inputs suggest, marks that span
// for huge pages and frees it again: the allocations of the read land
// there (the runtime reuses the lowest free addresses first), and fault
// 2 MiB at a time. Nothing is touched: memory the run does not use stays
// virtual and out of the RSS.

// hugeHeapMin is the smallest expected heap worth preparing: below it the
// faults cost less than the collection prepareHeap runs.
const hugeHeapMin = 64 << 20

// prepareHeap readies the heap for a read of a source of size bytes
// (ingest.Source's Bytes) within a memory budget
// (ReadOptions.MemoryBudget): the size divided by
// per (1 for a run that holds every span; speculativeHeapShare for a
// speculative one) but at least hugeHeapMin, at most half of the budget
// (the index's share of it).
// Below hugeHeapMin, or where the system has no transparent huge pages to ask
// for, it does nothing.
func prepareHeap(size, budget, per int64) {
	n := heapToPrepare(size, budget, per)
	if n == 0 || !hugePagesAdvisable() {
		return
	}
	// In chunks: the runtime zeroes a new object that starts in a hole
	// the heap's earlier garbage left, and zeroing one object of the
	// whole size touched all of it in 4 KiB pages (one run in five grew
	// to 1.8 GB of RSS); a chunk zeroed so costs at most its own size.
	// Each chunk's advice is rounded out to whole huge pages, so the
	// chunks' run is covered whatever their alignment.
	held := make([][]byte, 0, n/reserveChunk+1)
	for got := int64(0); got < n; got += reserveChunk {
		held = append(held, make([]byte, reserveChunk))
	}
	for _, b := range held {
		adviseHugePages(b)
	}
	clear(held)
	runtime.GC() // free the chunks now, so the read's allocations reuse their pages
}

// heapToPrepare is prepareHeap's decision, apart from its I/O: how many
// bytes of heap to prepare for in bytes of input, or 0 for none.
func heapToPrepare(in, budget, per int64) int64 {
	n := min(max(in/per, hugeHeapMin), in, budget/2)
	if n < hugeHeapMin {
		return 0
	}
	return n
}

// speculativeHeapShare is how much smaller than its JSON input a
// speculative run's heap stays: it holds the open traces and the acquires
// waiting for the pair stage, not the index (4M spans: a peak heap of
// about 190 MB for 1.8 GB of input). Preparing the input's whole size for
// it cost more than the faults it spared (4M spans: 2.57 s against 2.40 s
// with an eighth).
const speculativeHeapShare = 8

// reserveChunk is the size of prepareHeap's allocations.
const reserveChunk = 4 << 20
