package ingest

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestBlockPoolRecyclesOnlyWholeBlocksWhileNoReadIsAbandoned pins
// putBlock's three guards by what getBlock hands out next: a nil block is
// ignored, a block of another size never enters the pool (getBlock would
// hand it to a caller that was promised blockBytes of room), and once a
// read was abandoned no block is recycled at all (the abandoned read may
// still write into it). A put that must be refused is checked over several
// rounds: a refused block never comes back, while the free list hands the
// block put last straight back, so a put let through is seen in the first
// round. The process's abandoned flag is
// restored after, so an abandoned read of an earlier test stays counted.
func TestBlockPoolRecyclesOnlyWholeBlocksWhileNoReadIsAbandoned(t *testing.T) {
	startReader() // a pipeline runs: putBlock keeps what it may
	t.Cleanup(endReader)
	was := readsAbandoned.Load()
	t.Cleanup(func() { readsAbandoned.Store(was) })
	const rounds = 50
	for _, tc := range []struct {
		name      string
		abandoned bool
		size      int // the capacity of the block put back
	}{
		{"an odd size is left to the GC", false, blockBytes / 2},
		{"a larger block is left to the GC", false, blockBytes + 1},
		{"after an abandoned read nothing is recycled", true, blockBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if was && !tc.abandoned {
				t.Skip("a read of an earlier test was abandoned: the pool recycles nothing in this process")
			}
			readsAbandoned.Store(tc.abandoned)
			for range rounds {
				b := make([]byte, 0, tc.size)
				putBlock(&b)
				got := getBlock(blockBytes)
				if got == &b {
					t.Fatalf("a block of capacity %d was recycled (abandoned read %v)", tc.size, tc.abandoned)
				}
				if cap(*got) < blockBytes {
					t.Fatalf("getBlock(%d) returned a block of capacity %d", blockBytes, cap(*got))
				}
			}
		})
	}
	t.Run("nil is ignored", func(t *testing.T) {
		readsAbandoned.Store(false)
		putBlock(nil) // a job without a block: must not panic
	})
}

// TestFreeBlocksOutliveACollectionUpToTheirBound pins why the read blocks
// are not a sync.Pool: a block put back is handed out again after a
// collection (a pool drops it, and making it again faults 2 MiB of fresh
// memory in), and the list keeps no more than maxFreeBlocks, so what it
// holds stays bounded however many blocks a run had in flight.
func TestFreeBlocksOutliveACollectionUpToTheirBound(t *testing.T) {
	if readsAbandoned.Load() {
		t.Skip("a read of an earlier test was abandoned: nothing is recycled in this process")
	}
	startReader()
	defer endReader()
	freeBlocks.Lock()
	was := freeBlocks.list
	freeBlocks.list = nil // start empty: earlier reads left blocks in it
	freeBlocks.Unlock()
	t.Cleanup(func() {
		freeBlocks.Lock()
		freeBlocks.list = was
		freeBlocks.Unlock()
	})
	put := make(map[*[]byte]bool)
	for range maxFreeBlocks + 3 {
		b := make([]byte, 0, blockBytes)
		put[&b] = true
		putBlock(&b)
	}
	runtime.GC()
	runtime.GC() // a sync.Pool keeps its victims through one collection
	back := 0
	for range maxFreeBlocks + 3 {
		if put[getBlock(blockBytes)] {
			back++
		}
	}
	if back != maxFreeBlocks {
		t.Fatalf("%d of %d blocks put back came back after two collections, want the list's bound %d", back, maxFreeBlocks+3, maxFreeBlocks)
	}
}

// TestFreeBlocksGoWithTheLastReader pins that the free list holds blocks
// only while a pipeline runs: once the last of two ends it is empty, and
// a block put back then is not kept, so a process that read a dump keeps
// none of its blocks (the HTML run's memory bound in the engine's tests
// counts them).
func TestFreeBlocksGoWithTheLastReader(t *testing.T) {
	if readsAbandoned.Load() {
		t.Skip("a read of an earlier test was abandoned: nothing is recycled in this process")
	}
	held := func() int {
		freeBlocks.Lock()
		defer freeBlocks.Unlock()
		return len(freeBlocks.list)
	}
	startReader()
	startReader()
	b := make([]byte, 0, blockBytes)
	putBlock(&b)
	endReader()
	if n := held(); n == 0 {
		t.Fatal("the list let its block go while a reader still runs")
	}
	endReader()
	if n := held(); n != 0 {
		t.Fatalf("the list holds %d blocks after the last reader ended, want 0", n)
	}
	c := make([]byte, 0, blockBytes)
	putBlock(&c)
	if n := held(); n != 0 {
		t.Fatalf("a block put back with no reader running was kept (%d held)", n)
	}
}

// TestTheConsumerDecodesWhileItWaits pins that the goroutine handing the
// results on, while it waits for the next job in order, decodes the jobs
// no worker has taken: here the one worker's first job cannot end until
// the second is decoded, which only the consumer is free to do. The
// results still come in input order. The minute's bound only ends a
// failing run.
func TestTheConsumerDecodesWhileItWaits(t *testing.T) {
	second := make(chan struct{})
	var stuck atomic.Bool
	produce := func(ctx context.Context, emit emitFunc) {
		for line := 1; line <= 3; line++ {
			j := newJob()
			j.recs = []rec{{line: line}}
			if !emit(j) {
				return
			}
		}
	}
	decode := func(r rec) result {
		switch r.line {
		case 1:
			select {
			case <-second:
			case <-time.After(time.Minute):
				stuck.Store(true)
			}
		case 2:
			close(second)
		}
		return result{held: int64(r.line)} // no share: held only names the record here
	}
	var got []int64
	consume := func(r *result) error {
		got = append(got, r.held)
		return nil
	}
	if err := runPipeline(context.Background(), 1, produce, decode, consume, nil); err != nil {
		t.Fatal(err)
	}
	if stuck.Load() || !slices.Equal(got, []int64{1, 2, 3}) {
		t.Errorf("consumed %v, first job stuck behind the second: %v; want 1, 2, 3 and no wait", got, stuck.Load())
	}
}
