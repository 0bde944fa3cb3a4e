package ingest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkDecodeWithBlocksFilledElsewhere measures what it costs the
// JSON decoder that the bytes it decodes were read into their block on
// another core. In `mcptrace analyze` one goroutine reads the file into
// pooled blocks (read(2): the kernel copies the page cache into the
// block on that goroutine's core) and the workers decode the blocks'
// lines, mostly on the other core, so every byte of the input crosses
// between cores before it is decoded; BenchmarkDecodeWithBatchesReadElsewhere
// measures the other crossing, the decoder's batches read by a shard.
// Whether reading each block on the core that decodes it (every worker
// its own pread(2) of the file) would pay is this figure.
//
// The JSON lines benchmark dump is written to a file and cut into blocks
// of whole lines up to blockBytes, as the lines reader cuts its jobs
// (stream.lines: a job is the whole lines of one block). Each
// block is read from the file with pread(2) into one of a few rotating
// buffers, on the decoding goroutine ("filled-here") or on another one
// pinned to the other CPU ("filled-elsewhere"), and its lines decoded on
// the decoding goroutine, pinned to the first CPU in both; it reports the
// decoder's own time per span (decode-ns/span), the figure to compare.
// Linux with two CPUs only (pinThread), as its sibling. Run it with -cpu 2.
func BenchmarkDecodeWithBlocksFilledElsewhere(b *testing.B) {
	cpus := twoCPUs(b)
	keep := newKeepSet(benchKeep)
	data, want := benchRecords(b, "otlp-jsonl")
	path := filepath.Join(b.TempDir(), "bench.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	blocks := lineBlocks(data, blockBytes)
	for _, c := range []struct {
		name      string
		elsewhere bool
	}{{"filled-here", false}, {"filled-elsewhere", true}} {
		b.Run(c.name, func(b *testing.B) {
			defer pinDecoder(b, cpus[0])()
			var decoding time.Duration
			for b.Loop() {
				decoding += decodeBlocks(b, f, blocks, keep, want, c.elsewhere, cpus[1])
			}
			reportDecodeNs(b, decoding, want)
		})
	}
}

// lineBlock is a run of whole lines of the dump: where it starts in the
// file and each line's end within it (the newline left out).
type lineBlock struct {
	off  int64
	size int
	ends []int
}

// lineBlocks cuts data into blocks of whole lines of at most limit bytes
// each (a longer line is a block of its own).
func lineBlocks(data []byte, limit int) []lineBlock {
	var out []lineBlock
	cur := lineBlock{}
	for start := 0; start < len(data); {
		end := len(data)
		if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
			end = start + i
		}
		next := min(end+1, len(data))
		if cur.size > 0 && next-int(cur.off) > limit {
			out = append(out, cur)
			cur = lineBlock{off: int64(start)}
		}
		cur.ends = append(cur.ends, end-int(cur.off))
		cur.size = next - int(cur.off)
		start = next
	}
	if cur.size > 0 {
		out = append(out, cur)
	}
	return out
}

// decodeBlocks reads each block from f into one of a few rotating
// buffers, on this goroutine or (elsewhere) on another pinned to cpu,
// decodes its lines here, and returns the time spent in the decoder.
func decodeBlocks(b *testing.B, f *os.File, blocks []lineBlock, keep *keepSet, want int, elsewhere bool, cpu int) time.Duration {
	const buffers = 4
	size := blockBytes // a line longer than a block is a block of its own size, as in stream.lines
	for _, bl := range blocks {
		size = max(size, bl.size)
	}
	free := make(chan []byte, buffers)
	for range buffers {
		free <- make([]byte, size)
	}
	stop := make(chan struct{})
	defer close(stop) // a failed decode returns early: the filler then stops waiting
	fill := func(bl lineBlock) []byte {
		var buf []byte
		select {
		case buf = <-free:
		case <-stop:
			return nil
		}
		if _, err := f.ReadAt(buf[:bl.size], bl.off); err != nil {
			b.Errorf("read a block at %d: %v", bl.off, err)
		}
		return buf
	}
	filled := make(chan []byte, buffers-1)
	if elsewhere {
		go func() {
			// Its thread ends with it, pinned: no unpinning.
			if _, err := pinThread(cpu); err != nil {
				b.Errorf("pin the reading goroutine to CPU %d: %v", cpu, err)
			}
			for _, bl := range blocks {
				select {
				case filled <- fill(bl):
				case <-stop:
					return
				}
			}
		}()
	}
	var decoding time.Duration
	n := 0
	for _, bl := range blocks {
		var buf []byte
		if elsewhere {
			buf = <-filled
		} else {
			buf = fill(bl)
		}
		start, from := time.Now(), 0
		for _, end := range bl.ends {
			if end > from {
				bt, ok := decodeFastOTLP(buf[from:end], keep)
				if !ok {
					b.Fatal("a benchmark line did not decode on the projection path")
				}
				n += len(bt.Spans)
				putBatch(bt)
			}
			from = end + 1
		}
		decoding += time.Since(start)
		free <- buf
	}
	if n != want {
		b.Fatalf("decoded %d spans, want %d", n, want)
	}
	return decoding
}
