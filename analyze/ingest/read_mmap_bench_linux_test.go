package ingest

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime"
	"syscall"
	"testing"
)

// BenchmarkReadFile measures what a file's bytes cost before any decoding:
// the reader's way, its JSON lines producer reading the file with read(2)
// into pooled blocks (blockBytes) and filing the lines, against mapping
// the file (mmap(2)) window by window and filing the same lines straight
// from the mapping, with and without MAP_POPULATE. The file is a generated
// OTLP JSON lines dump (MCPTRACE_READ_BENCH_SPANS spans) in the page cache,
// so neither side waits for a disk: a read copies each page from the cache,
// a mapping faults it in. scripts/bench-ingest.sh runs it in its rounds and
// prints read's speed over each mapping's: the measurement the reader's
// choice of read(2) rests on (BENCHMARKS.md, "Ingest").
//
// Each side counts the lines it filed and their bytes, and fails on a
// count that differs from the file's, so a side that skipped or repeated
// bytes cannot look fast.
func BenchmarkReadFile(b *testing.B) {
	path, size, _ := readBenchDump(b, "otlp-jsonl")
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	want := countLines(data)
	for _, side := range []struct {
		name string
		read func(*os.File, int64) (filed, error)
	}{
		{"read", readBlocks},
		{"mmap", func(f *os.File, size int64) (filed, error) { return mapWindows(f, size, 0) }},
		{"mmap-populate", func(f *os.File, size int64) (filed, error) { return mapWindows(f, size, syscall.MAP_POPULATE) }},
	} {
		b.Run(side.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				n, err := readWith(path, side.read)
				if err != nil {
					b.Fatal(err)
				}
				if n != want {
					b.Fatalf("filed %d lines of %d bytes, want %d of %d", n.lines, n.bytes, want.lines, want.bytes)
				}
			}
			b.ReportMetric(float64(runtime.GOMAXPROCS(0)), "procs")
		})
	}
}

// filed is what a side filed: its lines and their bytes (trimmed as
// lineRec trims them), so that a side that lost or repeated bytes differs.
type filed struct{ lines, bytes int }

// add counts the records of j.
func (t *filed) add(j *job) {
	for _, r := range j.recs {
		t.lines++
		t.bytes += len(r.data)
	}
}

// last counts the input's last line, which no newline ends.
func (t *filed) last(rest []byte, line int) {
	if r, ok := lineRec(rest, line+1, 0, true); ok {
		t.lines++
		t.bytes += len(r.data)
	}
}

// countLines is what fileLines files from the whole input at once.
func countLines(data []byte) filed {
	var t filed
	j := &job{}
	line := 0
	pos := fileLines(j, data, 0, &line)
	t.add(j)
	t.last(data[pos:], line)
	return t
}

// readWith opens path and files its lines with read.
func readWith(path string, read func(*os.File, int64) (filed, error)) (filed, error) {
	f, err := os.Open(path)
	if err != nil {
		return filed{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return filed{}, err
	}
	return read(f, fi.Size())
}

// blocksInFlight is about what a 2-core pipeline holds: the jobs queued
// for the workers, the two being decoded and the one being read.
const blocksInFlight = 8

// readBlocks is the reader's way, its own code: the JSON lines producer
// (stream.lines) over the stream openStream makes of the file, each job's
// block given back once blocksInFlight later jobs were emitted (as decoded
// jobs give theirs back).
func readBlocks(f *os.File, size int64) (filed, error) {
	s, err := openStream(f.Name(), f, size, 0, 0)
	if err != nil {
		return filed{}, err
	}
	defer s.closeFn()
	startReader()
	defer endReader()
	var (
		t    filed
		ring [blocksInFlight]*[]byte
		k    int
		prob error
	)
	s.lines(context.Background(), func(j *job) bool {
		for _, r := range j.res {
			if r.prob != nil {
				prob = r.prob
			}
		}
		t.add(j)
		putBlock(ring[k%blocksInFlight])
		ring[k%blocksInFlight] = j.block
		k++
		return true
	}, math.MaxInt32)
	return t, prob
}

// mapWindow is the size of one mapping: four blocks' worth, so that a
// window holds many lines and the carried partial line is remapped rather
// than copied.
const mapWindow = 4 * (2 << 20)

// mapWindows maps the file a window at a time (flags added to MAP_SHARED)
// and files the window's complete lines; the next window starts at the
// page holding the first byte not yet filed. A window is unmapped once
// filed, as a reader would once its jobs were decoded.
func mapWindows(f *os.File, size int64, flags int) (filed, error) {
	page := int64(os.Getpagesize())
	var t filed
	line := 0
	for off := int64(0); off < size; {
		start := off &^ (page - 1)
		n := min(size-start, mapWindow)
		m, err := syscall.Mmap(int(f.Fd()), start, int(n), syscall.PROT_READ, syscall.MAP_SHARED|flags)
		if err != nil {
			return t, err
		}
		buf := m[off-start:]
		j := &job{}
		pos := fileLines(j, buf, 0, &line)
		t.add(j)
		if start+n == size {
			t.last(buf[pos:], line)
			pos = len(buf)
		} else if pos == 0 {
			_ = syscall.Munmap(m)
			return t, fmt.Errorf("a line longer than the %d MiB window at byte %d", mapWindow>>20, off)
		}
		off += int64(pos)
		if err := syscall.Munmap(m); err != nil {
			return t, err
		}
	}
	return t, nil
}
