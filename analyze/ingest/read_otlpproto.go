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
	fr.share = o.share // a record pdata decodes is charged what it grows to
	if o.det.framedZstd {
		fr.share = o.share.chargedByDecoders() // a record grows as it decompresses
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
	// share is the budget's share for records in flight: a zstd record
	// is charged what its decompression may hold before it starts, then
	// what it decompressed to until the sink has taken it. nil: none.
	share *inflight
	// limit is the decompression limit's error once the totals passed
	// it: the records still queued are then refused undecompressed.
	limit atomic.Pointer[error]
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
// with a problem: the framing cannot be trusted past it. Once a record
// has passed the decompression limit it stops: the read ends at that
// record's problem, which is already on its way to the sink.
func (fr *framedReader) produce(ctx context.Context, emit emitFunc) {
	b := &framedJobs{emit: emit, j: newBlockJob()}
	for {
		if ctx.Err() != nil || fr.limit.Load() != nil {
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
	n, err := s.readFull(blk[start:])
	*b.j.block = blk
	return blk[start : start+n : start+n], true, err
}

// heldBeyondBlock is what record data will hold once decoded beyond the
// block it may sit in, for cutting jobs to a block's worth: its own size
// when it is too long for a block, and for a zstd record what it
// decompresses to (its frame's content size, or when the frame does not
// say, the buffer decompress tries first). It is an estimate for the size
// of a job; what decompression holds is charged to the share in flight as
// it is taken.
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
		return n + firstTry(len(data), fr.recordCap)
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
// frames (what it decompressed to stays charged to the share in flight
// until the sink has taken it), then as JSON when it starts with '{' (or
// JSON is forced), else as protobuf. Once the decompression limit has
// stopped one record, every record after it is refused undecompressed:
// the read ends there, and decompressing what is queued would be work
// for nothing.
func (fr *framedReader) decode(r rec) result {
	if fr.zstd == nil {
		return fr.decodeRecord(r, r.data, r.off)
	}
	if lim := fr.limit.Load(); lim != nil {
		return result{prob: fr.zstdProblem(r.off, *lim)}
	}
	out, held, err := fr.decompress(r.seq, r.data)
	if err != nil {
		return result{prob: fr.zstdProblem(r.off, err)}
	}
	res := fr.decodeRecord(r, out, -1) // -1: the bytes are decompressed, not the stream's
	if res.parks() {
		fr.share.give(held) // decompressed again with the record
		return res
	}
	res.held += held
	return res
}

// zstdProblem is the problem of a zstd record at off that could not be
// decompressed, naming what stopped it: the decompression limit, the
// record cap, or the frame itself.
func (fr *framedReader) zstdProblem(off int64, err error) *ReadError {
	expected := "a zstd frame holding an OTLP record"
	switch {
	case errors.Is(err, ErrDecompressionLimit):
		expected = "zstd records within the decompression limit"
	case errors.Is(err, zstd.ErrDecoderSizeExceeded):
		err = errRecordCap("a decompressed record", fr.recordCap)
	}
	return &ReadError{Path: fr.s.path, Offset: off, Expected: expected, Err: err}
}

// charge adds what a record of in compressed bytes is now known to
// decompress to (out, at least) to the records' totals, less what c says
// was charged for it already, and checks the totals against the ratio:
// the error, wrapping ErrDecompressionLimit, once they are past it (and
// then for every record after, see decode). A record that fails is
// charged what it decompressed before it failed, so records that each
// expand just past the record cap trip the limit as any bomb does.
func (fr *framedReader) charge(c *charged, in, out int64) error {
	totalIn, total := fr.zin.Add(in-c.in), fr.zout.Add(out-c.out)
	c.in, c.out = in, out
	if fr.ratio < 0 || float64(total) <= fr.ratio*float64(totalIn)+decompressionSlack {
		return nil
	}
	err := fmt.Errorf("%w: %d bytes decompressed from %d compressed bytes of records, more than %g times as many "+
		"(a decompression bomb? raise --max-decompression-ratio to read it)", ErrDecompressionLimit, total, totalIn, fr.ratio)
	fr.limit.CompareAndSwap(nil, &err)
	return err
}

// charged is what one record has charged to the records' totals.
type charged struct{ in, out int64 }

// decodeRecord decodes one record's data (decompressed, or the stream's
// own bytes from recOff on), as JSON when it starts with '{' in zstd
// records (or JSON is forced), else as protobuf.
func (fr *framedReader) decodeRecord(r rec, data []byte, recOff int64) result {
	if fr.forced == FormatOTLPJSON || fr.forced == FormatAuto && fr.zstd != nil && looksLikeJSON(data) {
		return fr.decodeJSONRecord(r, data, recOff)
	}
	if fr.keep != nil {
		b, err := decodeFastProtoCharged(data, fr.keep, r.charge)
		if b != nil {
			return result{batch: b, format: FormatOTLPProto}
		}
		if err != nil {
			return batchRefused(err, &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedProtoRecord}, "a protobuf record", len(data))
		}
	}
	// What pdata holds as it decodes the record is charged to the share
	// in flight, or the record refused when that is more than the share.
	c := newPdataCharge(fr.share, r, "a protobuf record", len(data))
	need := c.proto(data)
	if err := c.add(need); err != nil {
		return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedProtoRecord, Err: err}}
	}
	res := fr.unmarshalProto(r, data, recOff, c)
	res.held = c.keep(need)
	return res
}

// decodeJSONRecord decodes one JSON record's data (as decodeRecord's),
// with the projection decoder when it takes the record, else with pdata,
// charged to the share in flight.
func (fr *framedReader) decodeJSONRecord(r rec, data []byte, recOff int64) result {
	if fr.keep != nil {
		b, err := decodeFastOTLPCharged(data, fr.keep, r.charge)
		if b != nil {
			return result{batch: b, format: FormatOTLPJSON}
		}
		if err != nil {
			return batchRefused(err, &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedOTLPLine}, "a JSON record", len(data))
		}
	}
	data, at, n := cutJSONRecord(fr.s.path, 0, recOff, data)
	if at != nil {
		at.Offset = r.off
	}
	c := newPdataCharge(fr.share, r, "a JSON record", len(data))
	td, err := unmarshalOTLPJSON(data, c)
	if err != nil {
		return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedOTLPLine, Err: err}}
	}
	return result{td: td, format: FormatOTLPJSON, cut: deepCut{at: at, n: n}, held: c.holding()}
}

// unmarshalProto decodes a protobuf record with pdata, cutting the values
// past MaxDepth.
func (fr *framedReader) unmarshalProto(r rec, data []byte, recOff int64, c *pdataCharge) result {
	var u ptrace.ProtoUnmarshaler
	td, err := unmarshalOTLPProto(data, c)
	var cut deepCut
	if err != nil && strings.Contains(err.Error(), "exceeded max recursion depth") {
		// pdata refuses a record past MaxDepth itself, before it
		// recurses (see MaxDepth): the values past it are cut, and the
		// rest of the record read, from a copy charged as the record.
		var cutData []byte
		cutData, cut.at, cut.n = cutProtoRecord(fr.s.path, r.off, recOff, data)
		if cut.at != nil {
			if err = c.add(int64(len(cutData)) + c.proto(cutData)); err == nil {
				td, err = u.UnmarshalTraces(cutData)
			}
		}
	}
	if err != nil {
		return result{prob: &ReadError{Path: fr.s.path, Offset: r.off, Expected: expectedProtoRecord, Err: err}}
	}
	return result{td: td, format: FormatOTLPProto, cut: cut}
}

// decompress decompresses one zstd record of job seq into at most the
// record cap, and returns what it charged to the share in flight and
// kept charged: the bytes it decompressed to (on an error, nothing). Past
// the cap the error is zstd.ErrDecoderSizeExceeded; a frame that holds
// more than it says is errFrameOverrun; past the decompression ratio it
// is the limit's (charge).
//
// A frame that says its size gets a buffer of that size, no more (a frame
// that holds more than it says stops there), charged before it is made.
// A frame that does not is decoded into a buffer of a guess, and again
// into one twice as large while it does not fit, up to one of the record
// cap: the decoder's history is the buffer itself, so the window the
// frame asks for costs nothing, and a buffer is never materialised past
// the cap. Each try is charged, before it starts, what it may hold
// (unsizedCharge: the decoder grows a buffer it overflows once before it
// stops); only one try's buffer is alive at a time. A try that overflows
// its buffer shows the record decompresses to more than the buffer: that
// much is charged against the ratio before the next try, so a bomb stops
// at the first try past the limit.
func (fr *framedReader) decompress(seq uint64, data []byte) ([]byte, int64, error) {
	var h zstd.Header
	if err := h.Decode(data); err != nil {
		return nil, 0, err
	}
	if h.HasFCS && h.FrameContentSize > uint64(fr.recordCap) {
		return nil, 0, zstd.ErrDecoderSizeExceeded
	}
	size := firstTry(len(data), fr.recordCap)
	if h.HasFCS {
		size = int64(h.FrameContentSize)
	}
	var c charged
	in := int64(len(data))
	for {
		out, held, err := fr.try(seq, data, size, h.HasFCS)
		if err == nil {
			if err := fr.charge(&c, in, int64(len(out))); err != nil {
				fr.share.give(held)
				return nil, 0, err
			}
			return out, held, nil
		}
		if !errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			return nil, 0, err
		}
		if err := fr.charge(&c, in, size); err != nil {
			return nil, 0, err
		}
		if h.HasFCS {
			return nil, 0, fmt.Errorf("%w: the frame holds more than the %d bytes its header says (a damaged frame)", errFrameOverrun, size)
		}
		if size >= fr.recordCap {
			return nil, 0, err
		}
		size = min(2*size, fr.recordCap)
	}
}

// errFrameOverrun is the cause of a zstd record whose frame holds more
// than the content size its header declares: the frame is damaged (or
// lies), and no budget would read it.
var errFrameOverrun = errors.New("zstd frame longer than its content size")

// try decodes data into a buffer of size bytes, charged to the share in
// flight (by what it may hold when the frame does not say its size), and
// returns what it decoded and kept charged; a buffer too small is
// zstd.ErrDecoderSizeExceeded.
func (fr *framedReader) try(seq uint64, data []byte, size int64, sized bool) ([]byte, int64, error) {
	charge := size
	if !sized {
		charge = unsizedCharge(size)
	}
	took, err := fr.share.take(seq, charge)
	if err != nil {
		return nil, 0, err
	}
	out, err := fr.zstd.DecodeAll(data, make([]byte, 0, size))
	if err == nil {
		held := min(took, int64(len(out)))
		fr.share.give(took - held)
		return out, held, nil
	}
	fr.share.give(took)
	if overflowed(err) || errors.Is(err, zstd.ErrFrameSizeExceeded) {
		err = zstd.ErrDecoderSizeExceeded
	}
	return nil, 0, err
}

// overflowed reports whether err is the zstd decoder's way of saying the
// buffer it was limited to is too small: zstd.ErrDecoderSizeExceeded
// between blocks, or, inside a block its assembly decoder cannot fit,
// the error it gives a block that would outgrow the largest block (the
// one error the decoder has for no room left; a corrupt block that gives
// it is then taken as one too large).
func overflowed(err error) bool {
	return errors.Is(err, zstd.ErrDecoderSizeExceeded) || strings.HasPrefix(err.Error(), "output bigger than max block size")
}

// firstTry is the buffer a frame of n bytes that does not say its size is
// first decoded into: what a record that compressed 16 times takes (real
// records compress 5 to 20 times), at least 64 KiB, at most the cap.
func firstTry(n int, limit int64) int64 {
	return min(max(16*int64(n), 64<<10), limit)
}

// unsizedCharge is what decoding a frame that does not say its size into
// a buffer of size bytes may hold: the buffer, and the one the decoder
// grows it into when the frame overflows it by a block (measured at about
// 1.25 to 1.5 times the buffer); three times the buffer bounds both.
func unsizedCharge(size int64) int64 { return 3 * size }

func looksLikeJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}
