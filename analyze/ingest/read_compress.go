package ingest

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// Magic numbers of the compressed formats.
var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

const (
	// streamBufferBytes is the read buffer of every stream; detection and
	// the JSON-lines check look at most this far ahead.
	streamBufferBytes = 1 << 20
	// headBytes is how much detection looks at first; behind a JSON
	// object's long first member it looks as far as the read buffer
	// (detectStream).
	headBytes = 64 << 10
	// maxZstdWindow bounds the memory a zstd stream may ask for.
	maxZstdWindow = 256 << 20
	// DefaultMaxDecompressionRatio is how many times its compressed size
	// a compressed input may expand to by default. Real trace dumps
	// compress 5 to 50 times; a bomb (a zstd file of kilobytes holding
	// gigabytes of one repeated line) thousands of times.
	DefaultMaxDecompressionRatio = 1000
	// decompressionSlack is what any compressed input may expand to
	// whatever its ratio, so a small, very repetitive dump still reads.
	decompressionSlack = 16 << 20
)

// ratioGuard stops a decompressed stream once it has produced more than
// ratio times the compressed bytes read so far (plus decompressionSlack):
// a decompression bomb ends with ErrDecompressionLimit after a bounded
// amount of work, whatever it would expand to.
type ratioGuard struct {
	r     io.Reader
	in    *atomic.Int64 // the compressed bytes read
	out   int64
	ratio float64
	err   error
}

func (g *ratioGuard) Read(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	n, err := g.r.Read(p)
	g.out += int64(n)
	if float64(g.out) > g.ratio*float64(g.in.Load())+decompressionSlack {
		g.err = fmt.Errorf("%w: %d bytes decompressed from %d compressed bytes read, more than %g times as many "+
			"(a decompression bomb? raise --max-decompression-ratio to read it)", ErrDecompressionLimit, g.out, g.in.Load(), g.ratio)
		return n, g.err
	}
	return n, err
}

// stream is the byte stream of one input after decompression, counting the
// offsets that errors name.
type stream struct {
	path        string
	compression string // "", "gzip" or "zstd"
	r           *bufio.Reader
	// src is what r buffers: readFull reads a long record's bytes from
	// it straight into their block once r's buffer is empty, instead of
	// through the buffer and a second copy.
	src     io.Reader
	off     int64 // bytes consumed through Read
	size    int64 // total bytes when known (an uncompressed regular file), else -1
	err     error // first read error other than EOF (a corrupt compressed stream, an I/O error)
	closeFn func()
}

// openStream detects gzip or zstd by magic bytes and returns the stream of
// what is inside; other content is returned as is. A damaged compressed
// header is a *ReadError.
//
// ratio bounds how many times the bytes read a compressed stream may
// expand to (0: DefaultMaxDecompressionRatio, negative: no bound); window
// bounds the history a zstd stream may ask the decoder to keep (the
// budget's share, budget.zstdWindow).
func openStream(path string, raw io.Reader, size int64, ratio float64, window int64) (*stream, error) {
	bufSize := streamBufferBytes
	if size >= 0 && size < int64(bufSize) {
		bufSize = max(int(size), 512) // a small file needs no big buffer
	}
	compressed := new(atomic.Int64)
	counted := countingReader{r: raw, n: compressed}
	sticky := &stickyReader{r: counted}
	br := bufio.NewReaderSize(sticky, bufSize)
	if ratio == 0 {
		ratio = DefaultMaxDecompressionRatio
	}
	guard := func(r io.Reader) io.Reader {
		if ratio < 0 {
			return r
		}
		return &ratioGuard{r: r, in: compressed, ratio: ratio}
	}
	magic, _ := br.Peek(4)
	s := &stream{path: path, size: -1, closeFn: func() {}}
	switch {
	case bytes.HasPrefix(magic, gzipMagic):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, &ReadError{Path: path, Offset: 0, Expected: "a gzip stream", Err: err}
		}
		s.compression = "gzip"
		s.src = guard(zr)
		s.r = bufio.NewReaderSize(s.src, streamBufferBytes)
		s.closeFn = func() { zr.Close() }
	case isZstd(magic):
		window = min(max(window, zstd.MinWindowSize), maxZstdWindow)
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(window)), zstd.WithDecoderMaxMemory(uint64(window)))
		if err != nil {
			return nil, &ReadError{Path: path, Offset: 0, Expected: "a zstd stream", Err: err}
		}
		s.compression = "zstd"
		s.src = guard(windowError{zr, window})
		s.r = bufio.NewReaderSize(s.src, streamBufferBytes)
		s.closeFn = zr.Close
	default:
		s.r, s.src = br, sticky
		s.size = size
	}
	return s, nil
}

func (s *stream) close() { s.closeFn() }

// isZstd reports whether b starts a zstd stream: with a frame's magic, or
// with a skippable frame's (0x184D2A50 to 0x184D2A5F, little-endian: RFC
// 8878, section 3.1.2), which pzstd writes before every frame and the
// decoder skips.
func isZstd(b []byte) bool {
	return bytes.HasPrefix(b, zstdMagic) || len(b) >= 4 && b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18
}

// stickyReader keeps the first error other than EOF its input gave and
// gives it on every later read: bufio hands an error out once and then
// reads on, and an input read again after it failed may fail differently
// (a device, a closed pipe), which would hide the cause the user must see.
type stickyReader struct {
	r   io.Reader
	err error
}

func (s *stickyReader) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// windowError says, when a zstd stream wants a larger window than the
// budget allows, that it is the budget, not the stream, that stops it.
type windowError struct {
	r      io.Reader
	window int64
}

func (w windowError) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		err = fmt.Errorf("%w: the zstd stream needs a window larger than %d MiB, an eighth of the memory budget (raise --max-memory to read it)",
			ErrMemoryLimit, w.window>>20)
	}
	return n, err
}

// Read reads from the stream, counting offsets and remembering the first
// real error so problems can blame the compressed stream rather than the
// format inside it.
func (s *stream) Read(p []byte) (int, error) { return s.took(s.r.Read(p)) }

// took counts n bytes consumed and keeps err when it is the first real
// one: every read of the stream, buffered or direct, goes through it.
func (s *stream) took(n int, err error) (int, error) {
	s.off += int64(n)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

// directReadBytes is the least a read must still want for readFull to take
// it from the stream's source rather than through its buffer: below it,
// the buffer's larger reads cost less than the copy they add.
const directReadBytes = 64 << 10

// readFull is io.ReadFull(s, p), but once the buffer is drained and at
// least directReadBytes are still wanted, it reads them from the source
// straight into p: a length-prefixed record is read into its block with
// one copy, not two.
func (s *stream) readFull(p []byte) (int, error) { return io.ReadFull(directReads{s}, p) }

// directReads reads s as readFull wants: io.ReadFull asks it for what is
// still wanted, which comes from s's source when the buffer is drained
// and at least directReadBytes are wanted, else through the buffer.
type directReads struct{ s *stream }

func (d directReads) Read(p []byte) (int, error) {
	r := io.Reader(d.s.r)
	if d.s.r.Buffered() == 0 && len(p) >= directReadBytes {
		r = d.s.src
	}
	return d.s.took(r.Read(p))
}

// peekHead returns up to headBytes of what comes next without consuming it.
func (s *stream) peekHead() ([]byte, error) {
	head, err := s.r.Peek(headBytes)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		if s.err == nil {
			s.err = err
		}
		return head, err
	}
	return head, nil
}

// remaining is how many bytes are left when the size is known, else -1.
func (s *stream) remaining() int64 {
	if s.size < 0 {
		return -1
	}
	return s.size - s.off
}

// problem makes the ReadError for a failure at off. When the stream itself
// failed (a corrupt or truncated gzip or zstd stream, an I/O error), the
// error blames the stream, whatever the format reader expected.
func (s *stream) problem(off int64, expected string, line int, cause error) *ReadError {
	if s.err != nil && (cause == nil || errors.Is(cause, s.err) || errors.Is(cause, io.ErrUnexpectedEOF) || errors.Is(cause, ErrTruncated)) {
		exp := "a readable file"
		if s.compression != "" {
			exp = "a valid " + s.compression + " stream"
		}
		err := s.err
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("%w: the %s stream ends early", ErrTruncated, s.compression)
		}
		return &ReadError{Path: s.path, Line: line, Offset: off, Expected: exp, Err: err}
	}
	return &ReadError{Path: s.path, Line: line, Offset: off, Expected: expected, Err: cause}
}

// skipZeroWords consumes 4-byte groups of zero bytes (empty length-prefixed
// records) for as long as they last, straight from the read buffer.
func (s *stream) skipZeroWords() {
	for {
		if b, _ := s.r.Peek(4); len(b) < 4 || b[0]|b[1]|b[2]|b[3] != 0 {
			return
		}
		buf, _ := s.r.Peek(s.r.Buffered())
		k := 0
		for k+8 <= len(buf) && binary.LittleEndian.Uint64(buf[k:]) == 0 {
			k += 8
		}
		for k+4 <= len(buf) && buf[k]|buf[k+1]|buf[k+2]|buf[k+3] == 0 {
			k += 4
		}
		s.r.Discard(k)
		s.off += int64(k)
	}
}
