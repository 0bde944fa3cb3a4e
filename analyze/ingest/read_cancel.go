package ingest

import (
	"context"
	"fmt"
	"io"
)

// A read of stdin, a FIFO or a slow network file can block in the kernel
// for as long as the writer likes, and a blocked read(2) does not return
// when the process is asked to stop. So every input is read through a
// cancelReader: the reads run on a goroutine of its own, and the reader
// returns ctx's error as soon as ctx is done. A read still blocked then is
// abandoned: its goroutine ends when the read does (the writer closes, the
// process exits). Reads are whole blocks (a MiB), so the hand-off costs
// nothing next to them.

// cancelReader reads r on a goroutine, returning early when ctx is done.
type cancelReader struct {
	ctx     context.Context
	r       io.Reader
	req     chan int // a read of up to n bytes
	res     chan readResult
	pending bool // a read was asked for and its result not yet taken
	err     error
}

type readResult struct {
	b   []byte
	err error
}

func newCancelReader(ctx context.Context, r io.Reader) *cancelReader {
	c := &cancelReader{ctx: ctx, r: r, req: make(chan int), res: make(chan readResult, 1)}
	go c.loop()
	return c
}

// loop serves reads until close (req closed). The buffer it reads into is
// its own, so a read that completes after the caller gave up writes into
// nothing the caller holds.
func (c *cancelReader) loop() {
	var buf []byte
	for n := range c.req {
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		k, err := c.r.Read(buf[:n])
		c.res <- readResult{b: buf[:k], err: err}
	}
}

func (c *cancelReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.pending {
		select {
		case c.req <- len(p):
			c.pending = true
		case <-c.ctx.Done():
			c.err = c.ctx.Err()
			return 0, c.err
		}
	}
	select {
	case r := <-c.res:
		c.pending = false
		n := copy(p, r.b) // r.b is at most len(p): asked for by this call or an earlier, larger one
		if n < len(r.b) {
			// An earlier call asked for more and gave up; keep order by
			// refusing to lose bytes: this cannot happen, since a caller
			// that gave up never reads again (c.err is sticky).
			return n, io.ErrShortBuffer
		}
		return n, r.err
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
}

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
