package ingest

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/mcptrace/mcptrace/analyze/internal/phase"
)

// A read of stdin, a FIFO or a slow network file can block in the kernel
// for as long as the writer likes, and a blocked read(2) does not return
// when the process is asked to stop. So every input is read through a
// cancelReader: the reads run on a goroutine of its own, and the reader
// returns ctx's error as soon as ctx is done. A read still blocked then is
// abandoned: its goroutine ends when the read does (the writer closes, the
// process exits). Reads are whole blocks (a MiB or two), so the hand-off
// costs nothing next to them.
//
// The read goroutine reads straight into the caller's buffer: a copy
// through a buffer of its own cost a tenth of `mcptrace analyze`'s reading
// thread. An abandoned read may still write into that buffer later, so
// abandoning one stops the recycling of pooled read blocks for the rest of
// the process (abandonRead): the buffer is never handed to anyone else.

// cancelReader reads r on a goroutine, returning early when ctx is done.
type cancelReader struct {
	ctx context.Context
	r   io.Reader
	req chan []byte // a read into this buffer
	res chan readResult
	err error
}

type readResult struct {
	n   int
	err error
}

func newCancelReader(ctx context.Context, r io.Reader) *cancelReader {
	c := &cancelReader{ctx: ctx, r: r, req: make(chan []byte), res: make(chan readResult, 1)}
	phase.Go(ctx, phase.Read, func(context.Context) { c.loop() }) // its read syscalls are the read phase's CPU
	return c
}

// loop serves reads until close (req closed).
func (c *cancelReader) loop() {
	for p := range c.req {
		n, err := c.r.Read(p)
		c.res <- readResult{n: n, err: err}
	}
}

func (c *cancelReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	select {
	case c.req <- p:
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
	select {
	case r := <-c.res:
		return r.n, r.err
	case <-c.ctx.Done():
		// The read goroutine may still write into p: nobody may reuse
		// it. c.err is sticky, so this caller never reads again.
		abandonRead()
		c.err = c.ctx.Err()
		return 0, c.err
	}
}

// readsAbandoned is set once a read was abandoned while its goroutine may
// still write into the caller's buffer: from then on putBlock recycles
// nothing, since that buffer may be a pooled block.
var readsAbandoned atomic.Bool

// abandonRead stops the recycling of read blocks for good.
func abandonRead() { readsAbandoned.Store(true) }

// close ends the read goroutine once its current read, if any, returns.
func (c *cancelReader) close() {
	close(c.req)
}

// openCancelable opens src like openSource but gives up when ctx is done:
// opening a FIFO blocks until a writer opens it. A file opened after ctx
// ended is closed by the abandoned goroutine.
func openCancelable(ctx context.Context, src source, stdin io.Reader) (io.Reader, int64, func(), error) {
	type opened struct {
		r     io.Reader
		size  int64
		close func()
		err   error
	}
	done := make(chan opened, 1)
	go func() {
		if testHookOpening != nil {
			testHookOpening(src.path)
		}
		r, size, closeFn, err := openSource(src, stdin)
		done <- opened{r, size, closeFn, err}
	}()
	select {
	case o := <-done:
		return o.r, o.size, o.close, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.err == nil {
				o.close()
			}
		}()
		return nil, 0, nil, fmt.Errorf("open %s: %w", src.path, ctx.Err())
	}
}

// testHookOpening, when set by a test, is called just before an input is
// opened: the test then knows the open (of a FIFO, say) is under way.
var testHookOpening func(path string)
