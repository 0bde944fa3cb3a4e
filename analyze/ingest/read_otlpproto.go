package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The Collector's file exporter with format: proto writes each
// ExportTraceServiceRequest preceded by its length as a 4-byte big-endian
// integer. With compression: zstd (and without its native stream
// compression) it compresses each record into its own zstd frame and
// length-prefixes the frame, for JSON as well as protobuf. A zero-length
// record is an empty request (the protobuf encoding of an empty message) and
// is read as an empty batch.

const expectedProtoRecord = "an OTLP ExportTraceServiceRequest protobuf record"

// sniffLengthPrefixed recognises length-prefixed records: a plausible
// length followed by the tag of field 1 (resource_spans, 0x0a), or by
// zstd's magic (the Collector's compression: zstd).
func sniffLengthPrefixed(head []byte) (detection, bool) {
	// Skip zero-length records (empty requests) before judging the framing.
	i := 0
	for i+4 <= len(head) && binary.BigEndian.Uint32(head[i:]) == 0 {
		i += 4
	}
	if i+5 <= len(head) {
		n := binary.BigEndian.Uint32(head[i:])
		switch {
		case n > maxRecordBytes:
		case head[i+4] == 0x0a:
			return detection{format: FormatOTLPProto, looks: "length-prefixed protobuf"}, true
		case i+8 <= len(head) && bytes.Equal(head[i+4:i+8], zstdMagic):
			return detection{format: FormatOTLPProto, framedZstd: true, looks: "length-prefixed zstd frames"}, true
		}
	}
	return detection{}, false
}

// openOTLPProto reads length-prefixed records, protobuf or (zstd records)
// JSON; with a BatchSink, protobuf records go through the projection
// decoder of fastproto.go.
func openOTLPProto(o openArgs) (producer, func(rec) result, func(), error) {
	fr, err := newFramedReader(o.s, o.opts.Format, o.det.framedZstd, o.workers, o.opts.MaxDecompressionRatio, o.opts.budget().recordCap())
	if err != nil {
		return nil, nil, nil, err
	}
	fr.keep = o.keep
	if o.det.framedZstd {
		o.in.Compression = "zstd"
	}
	return fr.produce, fr.decode, fr.close, nil
}

// framedReader reads length-prefixed records, optionally zstd-compressed.
type framedReader struct {
	s      *stream
	forced Format        // FormatOTLPJSON or FormatOTLPProto when forced, else FormatAuto
	zstd   *zstd.Decoder // non-nil for per-record zstd frames
	// The per-record zstd frames' compressed and decompressed bytes so
	// far (workers decode concurrently), checked against ratio.
	zin, zout atomic.Int64
	ratio     float64  // negative: no bound
	keep      *keepSet // non-nil: decode into batches where possible (a BatchSink)
	// recordCap is the longest record, as stored or decompressed, a
	// worker may hold: the memory budget's record cap.
	recordCap int64
}

func newFramedReader(s *stream, forced Format, zstdRecords bool, workers int, ratio float64, recordCap int64) (*framedReader, error) {
	if ratio == 0 {
		ratio = DefaultMaxDecompressionRatio
	}
	recordCap = min(recordCap, maxRecordBytes)
	fr := &framedReader{s: s, forced: forced, ratio: ratio, recordCap: recordCap}
	if zstdRecords {
		// A record decompresses into at most the buffer decompress gives
		// it (WithDecodeAllCapLimit): the record cap, whatever the frame
		// claims or holds.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(workers), zstd.WithDecoderMaxMemory(maxRecordBytes), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, fmt.Errorf("zstd decoder for %s: %w", s.path, err)
		}
		fr.zstd = d
	}
	return fr, nil
}

func (fr *framedReader) close() {
	if fr.zstd != nil {
		fr.zstd.Close()
	}
}

// produce reads records until the input ends, into pooled blocks (one
// block per job; a record larger than a block gets its own buffer). A
// cut-off length or record, or a length no dump would hold, ends the input
// with a problem: the framing cannot be trusted past it.
func (fr *framedReader) produce(ctx context.Context, emit emitFunc) {
	b := &framedJobs{emit: emit, j: newBlockJob()}
	for {
		if ctx.Err() != nil {
			b.release()
			return
		}
		if !fr.next(b) {
			return
		}
	}
}

// framedJobs is the job produce fills and what its records hold beyond
// its block (held): records too long for the block, and what zstd records
// decompress to. A job is cut at blockBytes of it, so the jobs in flight
// hold a bounded share of the budget however the records expand (a job of
// a thousand 4 MiB zstd records would hold 4 GiB).
type framedJobs struct {
	emit emitFunc
	j    *job
	held int64
}

// newBlockJob returns an empty job with a block to read records into.
func newBlockJob() *job { return &job{done: make(chan struct{}), block: getBlock(blockBytes)} }

// flush emits the job, if it holds a record, and starts a new one; false
// once the pipeline takes no more.
func (b *framedJobs) flush() bool {
	if len(b.j.recs) == 0 {
		return true
	}
	ok := b.emit(b.j)
	b.j, b.held = newBlockJob(), 0
	return ok
}

// stop emits what the job holds, then r (the problem that ends the read),
// and releases the block.
func (b *framedJobs) stop(r result) {
	if b.flush() {
		b.emit(readyJob(r))
	}
	b.release()
}

// release gives the current job's block back.
func (b *framedJobs) release() { putBlock(b.j.block) }

// next reads one record into b's job: false once the input has ended or
// the read stopped (b's block then released).
func (fr *framedReader) next(b *framedJobs) bool {
	s := fr.s
	off := s.off
	size, ok := fr.recordLength(b, off)
	if !ok {
		return false
	}
	if size == 0 {
		return true
	}
	if int64(size) > fr.recordCap {
		return fr.skipRecord(b, off, size)
	}
	data, ok, err := b.read(s, size)
	if !ok {
		return false
	}
	if err != nil {
		b.stop(result{prob: s.problem(off, expectedProtoRecord, 0,
			fmt.Errorf("%w: the record is %d bytes but the input ends after %d", ErrTruncated, size, len(data)))})
		return false
	}
	b.j.recs = append(b.j.recs, rec{data: data, off: off})
	b.held += fr.heldBeyondBlock(data)
	if (len(b.j.recs) >= jobMaxRecs || b.held >= blockBytes) && !b.flush() {
		b.release()
		return false
	}
	return true
}

// recordLength reads the length prefix of the record at off: false once
// the input has ended (at a record boundary) or the prefix is bad (the
// read stopped with the problem); 0 for a run of empty requests, skipped.
func (fr *framedReader) recordLength(b *framedJobs, off int64) (int, bool) {
	s := fr.s
	var hdr [4]byte
	n, err := io.ReadFull(s, hdr[:])
	if n == 0 && err == io.EOF && s.err == nil {
		b.flush()
		b.release()
		return 0, false
	}
	if err != nil {
		b.stop(result{prob: s.problem(off, "a 4-byte big-endian record length", 0,
			fmt.Errorf("%w: the input ends %d bytes into a record length", ErrTruncated, n))})
		return 0, false
	}
	size := int(binary.BigEndian.Uint32(hdr[:]))
	if size == 0 {
		// An empty request holds no span: no record, no decode. A run
		// of them (a file padded with zeros) is skipped a buffer at a
		// time, so it costs a byte comparison per byte.
		s.skipZeroWords()
		return 0, true
	}
	if size > maxRecordBytes {
		b.stop(result{prob: &ReadError{Path: s.path, Offset: off, Expected: "a 4-byte big-endian record length of at most 256 MiB",
			Err: fmt.Errorf("%w: the length prefix says %d bytes (a corrupt prefix, or not a length-prefixed dump)", ErrRecordTooLarge, size)}})
		return 0, false
	}
	if left := s.remaining(); left >= 0 && int64(size) > left {
		b.stop(result{prob: &ReadError{Path: s.path, Offset: off, Expected: expectedProtoRecord,
			Err: fmt.Errorf("%w: the record is %d bytes but only %d are left", ErrTruncated, size, left)}})
		return 0, false
	}
	return size, true
}

// skipRecord skips a record longer than the budget lets a worker hold,
// unread (its length says where the next one starts), and emits it as a
// cut record: false once the read stopped.
func (fr *framedReader) skipRecord(b *framedJobs, off int64, size int) bool {
	s := fr.s
	if n, err := io.CopyN(io.Discard, s, int64(size)); err != nil {
		b.stop(result{prob: s.problem(off, expectedProtoRecord, 0,
			fmt.Errorf("%w: the record is %d bytes but the input ends after %d", ErrTruncated, size, n))})
		return false
	}
	if !b.flush() || !b.emit(readyJob(result{prob: &ReadError{Path: s.path, Offset: off, Expected: expectedProtoRecord,
		Err: errRecordCap("a record", fr.recordCap)}})) {
		b.release()
		return false
	}
	return true
}

// read reads a record of size bytes: into the job's block when it fits
// one (a full block is flushed first), else on its own. ok is false when
// the flush found the pipeline closed (the block then released); err is
// the read's, with data what was read.
func (b *framedJobs) read(s *stream, size int) (data []byte, ok bool, err error) {
	if size > blockBytes {
		data, err = readRecord(s, size)
		return data, true, err
	}
	blk := *b.j.block
	if len(blk)+size > cap(blk) {
		if !b.flush() {
			b.release()
			return nil, false, nil
		}
		blk = *b.j.block
	}
	start := len(blk)
	blk = blk[:start+size]
	n, err := io.ReadFull(s, blk[start:])
	*b.j.block = blk
	return blk[start : start+n : start+n], true, err
}

// heldBeyondBlock is what record data will hold once decoded beyond the
// block it may sit in: its own size when it is too long for a block, and
// for a zstd record what it decompresses to (its frame's content size, or
// the record cap when the frame does not say).
func (fr *framedReader) heldBeyondBlock(data []byte) int64 {
	n := int64(0)
	if len(data) > blockBytes {
		n = int64(len(data))
	}
	if fr.zstd != nil {
		var h zstd.Header
		if h.Decode(data) == nil && h.HasFCS {
			return n + int64(min(h.FrameContentSize, uint64(fr.recordCap)))
		}
		return n + fr.recordCap
	}
	return n
}

// readRecord reads size bytes. The buffer grows as bytes arrive instead of
// being allocated at the announced size, so a lying length on a stream of
// unknown size costs no more memory than the stream holds.
func readRecord(r io.Reader, size int) ([]byte, error) {
	if size <= 1<<20 {
		buf := make([]byte, size)
		n, err := io.ReadFull(r, buf)
		return buf[:n], err
	}
	var buf bytes.Buffer
	buf.Grow(1 << 20)
	n, err := io.CopyN(&buf, r, int64(size))
	if err == io.EOF && n < int64(size) {
		err = io.ErrUnexpectedEOF
	}
	return buf.Bytes(), err
}

// decode decodes one record: decompressed first when the records are zstd
// frames, then as JSON when it starts with '{' (or JSON is forced), else as
// protobuf.
func (fr *framedReader) decode(r rec) result {
	data := r.data
	if fr.zstd != nil {
		out, err := fr.decompress(data)
		if errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: "a zstd frame holding an OTLP record",
				Err: errRecordCap("a decompressed record", fr.recordCap)}}
		}
		if err != nil {
			return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: "a zstd frame holding an OTLP record", Err: err}}
		}
		in, total := fr.zin.Add(int64(len(data))), fr.zout.Add(int64(len(out)))
		if fr.ratio >= 0 && float64(total) > fr.ratio*float64(in)+decompressionSlack {
			return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: "zstd records within the decompression limit",
				Err: fmt.Errorf("%w: %d bytes decompressed from %d compressed bytes of records, more than %g times as many "+
					"(a decompression bomb? raise --max-decompression-ratio to read it)", ErrDecompressionLimit, total, in, fr.ratio)}}
		}
		data = out
	}
	recOff := r.off // where the record's bytes are in the stream; -1: decompressed, not the stream's
	if fr.zstd != nil {
		recOff = -1
	}
	if fr.forced == FormatOTLPJSON || fr.forced == FormatAuto && fr.zstd != nil && looksLikeJSON(data) {
		if fr.keep != nil {
			if b, ok := decodeFastOTLP(data, fr.keep); ok {
				return result{batch: b, format: FormatOTLPJSON}
			}
		}
		if p := depthProblem(fr.s.path, 0, recOff, data); p != nil {
			p.Offset = r.off
			return result{prob: p}
		}
		td, err := unmarshalOTLPJSON(data)
		if err != nil {
			return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedOTLPLine, Err: err}}
		}
		return result{td: td, format: FormatOTLPJSON}
	}
	if fr.keep != nil {
		if b, ok := decodeFastProto(data, fr.keep); ok {
			return result{batch: b, format: FormatOTLPProto}
		}
	}
	var u ptrace.ProtoUnmarshaler
	td, err := u.UnmarshalTraces(data)
	if err != nil {
		// pdata refuses a record past MaxDepth itself, before it
		// recurses (see MaxDepth); protoDepth then names the place.
		if strings.Contains(err.Error(), "exceeded max recursion depth") {
			if e := protoDepth(data); e != nil {
				return result{prob: protoDepthProblem(fr.s.path, r.off, recOff, e)}
			}
		}
		return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedProtoRecord, Err: err}}
	}
	return result{td: td, format: FormatOTLPProto}
}

// decompress decompresses one zstd record into at most the record cap. A
// frame that says its size gets a buffer of that size, no more (a frame
// that holds more than it says stops there); a frame that does not is
// streamed into a buffer that stops at the cap, its window bounded as a
// stream's is. Past the cap the error is zstd.ErrDecoderSizeExceeded.
func (fr *framedReader) decompress(data []byte) ([]byte, error) {
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		return nil, err
	}
	if h.HasFCS {
		if h.FrameContentSize > uint64(fr.recordCap) {
			return nil, zstd.ErrDecoderSizeExceeded
		}
		return fr.zstd.DecodeAll(data, make([]byte, 0, h.FrameContentSize))
	}
	window := uint64(min(max(fr.recordCap, 8<<20), maxZstdWindow)) // as budget.zstdWindow at least
	zr, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(window), zstd.WithDecoderMaxMemory(window))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(zr, fr.recordCap+1))
	switch {
	case err != nil:
		return nil, err
	case n > fr.recordCap:
		return nil, zstd.ErrDecoderSizeExceeded
	}
	return buf.Bytes(), nil
}

func looksLikeJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
