package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// OTLP JSON is decoded by pdata's JSONUnmarshaler, which accepts what the
// OTLP/JSON mapping allows: camelCase or snake_case keys, enums as names
// (SPAN_KIND_CLIENT) or numbers, 64-bit integers as strings or numbers, hex
// ids. What it does not accept is normalised first (see normalizeRequest):
// base64 ids (protobuf's own JSON mapping, as Tempo writes) and the
// pre-1.0 instrumentationLibrarySpans key, which pdata would silently skip.

const expectedOTLPLine = "an OTLP ExportTraceServiceRequest JSON object"

func jsonValid(b []byte) bool { return json.Valid(b) }

// produceLines splits JSON lines into records: one non-blank line, one
// record. It reads the input a block at a time into pooled buffers; the
// complete lines of a block form one job and point into it (no copy), and a
// partial last line is carried over to the start of the next block. A line
// longer than a block gets a block of its own size.
//
// A line longer than lineCap ends the input with ErrRecordTooLarge: the
// buffer never grows past the cap, whatever the line.
func (s *stream) produceLines(lineCap int64) producer {
	return func(ctx context.Context, emit emitFunc) { s.lines(ctx, emit, lineCap) }
}

func (s *stream) lines(ctx context.Context, emit emitFunc, lineCap int64) {
	var carry []byte // the partial line after the last newline, copied out of its block
	line := 0        // lines started so far
	base := s.off    // stream offset of the next block's first byte (its carried partial line, if any)
	for {
		if ctx.Err() != nil {
			return
		}
		want := s.blockWant(len(carry), lineCap)
		if len(carry) >= want {
			emit(readyJob(result{prob: s.problem(base, expectedOTLPLine, line+1, errRecordCap("a line", lineCap))}))
			return
		}
		blk := getBlock(want)
		buf := append((*blk)[:0], carry...)
		n, err := io.ReadFull(s, buf[len(buf):want]) // want, not the block's cap: never more than the line cap allows
		buf = buf[:len(carry)+n]
		*blk = buf

		j := newJob()
		j.block = blk
		pos := fileLines(j, buf, base, &line)
		carry = append(carry[:0], buf[pos:]...)
		lineStart := base + int64(pos)
		end := base + int64(len(buf))
		// The next block starts with the carried partial line: counting
		// from the end of this one would shift every later offset by the
		// carry's length.
		base = lineStart

		if err == nil {
			if int64(len(carry)) > lineCap {
				emitLines(emit, j)
				emit(readyJob(result{prob: s.problem(lineStart, expectedOTLPLine, line+1, errRecordCap("a line", lineCap))}))
				return
			}
			if !emitLines(emit, j) {
				return
			}
			continue
		}
		// The input ended (io.EOF, io.ErrUnexpectedEOF) or the stream broke.
		prob := s.lastLine(j, carry, line, lineStart, end, err)
		if emitLines(emit, j) && prob != nil {
			emit(readyJob(result{prob: prob}))
		}
		return
	}
}

// blockWant is the size of the next block to read lines into, carrying a
// partial line of carried bytes: a small input needs a small block (+1 to
// see the end); room for the carried line and as much again, but never
// more than the cap allows: a line that would not fit is too long.
func (s *stream) blockWant(carried int, lineCap int64) int {
	size := blockBytes
	if left := s.remaining(); left >= 0 && left+1 < int64(size) {
		size = int(left) + 1 + carried
	}
	want := max(size, 2*carried)
	if int64(want) > lineCap+1 {
		want = int(lineCap) + 1
	}
	return want
}

// fileLines files the complete lines of buf (at stream offset base) into
// j as records, counting them in line, and returns where the partial line
// after the last newline starts.
func fileLines(j *job, buf []byte, base int64, line *int) int {
	pos := 0
	for {
		i := bytes.IndexByte(buf[pos:], '\n')
		if i < 0 {
			return pos
		}
		*line++
		if r, ok := lineRec(buf[pos:pos+i], *line, base+int64(pos), false); ok {
			j.recs = append(j.recs, r)
		}
		pos += i + 1
	}
}

// lastLine files the input's last line, carry (at lineStart, without a
// newline), into j when it is whole, and returns the problem the end of
// the input is, if any: end is the offset where reading stopped with err.
// When the stream broke (a cut or corrupt gzip or zstd stream) a partial
// line is the stream's casualty, not a bad line of its own; a complete one
// (only the checksum failed) is kept.
func (s *stream) lastLine(j *job, carry []byte, line int, lineStart, end int64, err error) *ReadError {
	var prob *ReadError
	if len(carry) > 0 {
		if s.err == nil || jsonValid(carry) {
			if r, ok := lineRec(bytes.Clone(carry), line+1, lineStart, true); ok {
				j.recs = append(j.recs, r)
			}
		} else {
			prob = s.problem(lineStart, expectedOTLPLine, line+1, err)
		}
	}
	if s.err != nil && prob == nil {
		prob = s.problem(end, expectedOTLPLine, 0, err)
	}
	return prob
}

// lineRec makes the record of one line, or reports a blank line.
func lineRec(data []byte, line int, off int64, last bool) (rec, bool) {
	data = bytes.TrimRight(data, " \t\r")
	if len(bytes.TrimLeft(data, " \t")) == 0 {
		return rec{}, false // blank lines are skipped
	}
	return rec{data: data, line: line, off: off, last: last}, true
}

// emitLines hands a job of lines to the pipeline; a job without lines only
// gives its block back.
func emitLines(emit emitFunc, j *job) bool {
	if len(j.recs) == 0 {
		putBlock(j.block)
		return true
	}
	return emit(j)
}

// openOTLPJSON reads JSON lines (one request per line, as the Collector
// writes) or one document (its resourceSpans elements, streamed). With a
// BatchSink, lines go through the projection decoder of fastjson.go.
func openOTLPJSON(o openArgs) (producer, func(rec) result, func(), error) {
	recordCap := o.opts.budget().recordCap()
	if linesMode(o.head) {
		return o.s.produceLines(recordCap), decodeOTLPJSONLine(o.s.path, o.keep, o.share), func() {}, nil
	}
	return o.s.produceDoc(otlpDocSpec, recordCap), decodeOTLPResourceSpans(o.s.path, o.share), func() {}, nil
}

// decodeOTLPJSONLine decodes one JSON line: one ExportTraceServiceRequest,
// into a Batch when keep is set and the line has the shape the projection
// decoder takes, else with pdata, charged to share (the budget's share
// in flight) by what it builds; a batch is charged to the job's charge
// (rec.charge) as it grows.
func decodeOTLPJSONLine(path string, keep *keepSet, share *inflight) func(rec) result {
	return func(r rec) result {
		if keep != nil {
			b, err := decodeFastOTLPCharged(r.data, keep, r.charge)
			if b != nil {
				return result{batch: b}
			}
			if err != nil {
				return batchRefused(err, &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedOTLPLine}, "a JSON line", len(r.data))
			}
		}
		data, cut := r.cutDeep(path)
		c := newPdataCharge(share, r, "a JSON line", len(data))
		td, err := unmarshalOTLPJSON(data, c)
		if err != nil {
			cause := err
			if r.last && !errors.Is(err, ErrRecordTooLarge) && endsEarly(r.data) {
				// Only a line whose JSON stops before it is complete was
				// cut: a whole last line without a newline (a common
				// one-document file) that fails for another reason, a bad
				// trace id say, is reported for that reason.
				cause = fmt.Errorf("%w: the input ends inside this line (%w)", ErrTruncated, err)
			}
			return result{prob: &ReadError{Path: path, Line: r.line, Offset: r.off, Expected: expectedOTLPLine, Err: cause}}
		}
		return result{td: td, cut: cut, lone: noteLoneSurrogates(r), held: c.holding()}
	}
}

// endsEarly reports whether data is JSON cut short: every token up to its
// end is valid and the value is still open.
func endsEarly(data []byte) bool {
	d := json.NewDecoder(bytes.NewReader(data))
	for {
		_, err := d.Token()
		switch {
		case err == nil:
			continue
		case err == io.EOF:
			return false // complete values only
		}
		return errors.Is(err, io.ErrUnexpectedEOF)
	}
}

// unmarshalOTLPJSON decodes an ExportTraceServiceRequest (or TracesData)
// with pdata. When pdata fails, finds no spans in a document that may use
// the pre-1.0 instrumentationLibrarySpans key, or the document may hold a
// null array element (which pdata reads as an empty span, with zero ids),
// the document is normalised (see normalizeRequest) and decoded again.
// Each step is charged to c before it starts, by what it builds (a record
// that does not fit the share in flight fails with c's error); once the
// record is decoded c keeps what pdata holds of it, and on an error
// nothing.
func unmarshalOTLPJSON(data []byte, c *pdataCharge) (ptrace.Traces, error) {
	cost := c.json(data, pbRequest)
	if err := c.add(cost.pdataOf(cost.size)); err != nil {
		return ptrace.Traces{}, err
	}
	var u ptrace.JSONUnmarshaler
	td, err := u.UnmarshalTraces(data)
	if err == nil && (td.SpanCount() > 0 || !bytes.Contains(data, []byte("nstrumentation"))) && !hasNullElement(data) {
		return td, nil
	}
	cost = c.normalizing(cost, data)
	if cerr := c.add(cost.normalized()); cerr != nil {
		return ptrace.Traces{}, cerr
	}
	norm, nerr := normalizeRequest(data)
	if nerr == nil {
		if td2, err2 := u.UnmarshalTraces(norm); err2 == nil {
			c.keep(cost.pdataOf(cost.out))
			return td2, nil
		}
	}
	if err == nil {
		c.keep(cost.pdataOf(cost.size))
		return td, nil
	}
	c.keep(0)
	if _, ok := errors.AsType[*idError](nerr); ok {
		return ptrace.Traces{}, nerr // says which id is wrong, unlike pdata
	}
	return ptrace.Traces{}, cleanJSONError(err)
}

// decodeOTLPResourceSpans decodes one element of a document's resourceSpans
// array, charged to share as decodeOTLPJSONLine charges a line.
func decodeOTLPResourceSpans(path string, share *inflight) func(rec) result {
	return func(r rec) result {
		data, cut := r.cutDeep(path)
		data = wrapResourceSpans(data)
		c := newPdataCharge(share, r, "an OTLP ResourceSpans JSON object", len(data))
		td, err := unmarshalOTLPJSON(data, c)
		if err != nil {
			return result{prob: &ReadError{Path: path, Offset: r.off, Expected: "an OTLP ResourceSpans JSON object", Err: r.placed(err)}}
		}
		return result{td: td, cut: cut, lone: noteLoneSurrogates(r), held: c.holding()}
	}
}

// wrapResourceSpans makes a request of one ResourceSpans element.
func wrapResourceSpans(elem []byte) []byte {
	const pre, post = `{"resourceSpans":[`, `]}`
	buf := make([]byte, 0, len(pre)+len(elem)+len(post))
	buf = append(buf, pre...)
	buf = append(buf, elem...)
	return append(buf, post...)
}

// cleanJSONError words a pdata (jsoniter) error in the format's terms: the
// decoder's operation ("ReadUint64", a Go function's name) becomes what
// the value should have been, a strconv prefix is dropped, and the
// excerpt of the input the library quotes, which could carry an attribute
// value, is cut. The reason itself is kept ("unsupported value type",
// `parsing "1x": invalid syntax`).
func cleanJSONError(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ", error found in #"); i >= 0 {
		msg = msg[:i]
	}
	op, reason, ok := strings.Cut(msg, ": ")
	if !ok {
		return errors.New(msg)
	}
	want, known := jsoniterWants[op]
	if !known {
		return errors.New(msg)
	}
	if rest, found := strings.CutPrefix(reason, "strconv."); found {
		var fn string
		fn, reason, _ = strings.Cut(rest, ": ")
		if fn == "ParseFloat" { // pdata reads a double under ReadUint64's name
			want = jsoniterWants["ReadFloat64"]
		}
	}
	return fmt.Errorf("a value is not %s: %s", want, reason)
}

// jsoniterWants names, per operation of pdata's JSON decoder, what the
// value it was reading had to be.
var jsoniterWants = map[string]string{
	"ReadUint64":        wholeNumber,
	"ReadUint32":        wholeNumber,
	"ReadInt64":         wholeNumber,
	"ReadInt32":         wholeNumber,
	"ReadFloat64":       "a number",
	"ReadFloat32":       "a number",
	"ReadEnumValue":     "an enum OTLP defines (a span kind or status code, by name or number)",
	"ReadString":        "a string",
	"ReadStringAsSlice": "a string",
	"ReadBool":          "true or false",
	"ReadArray":         "an array",
	"ReadArrayCB":       "an array",
	"ReadObject":        "an object",
	"ReadObjectCB":      "an object",
}

// wholeNumber is what OTLP JSON's integers may be written as.
const wholeNumber = "a whole number (a JSON number or a string of digits)"

// hasNullElement reports whether data may hold null as an array element:
// a null after '[' or ',' (and white space). It may be inside a string,
// which costs only a normalisation that changes nothing.
func hasNullElement(data []byte) bool {
	for i := 0; ; {
		at := bytes.Index(data[i:], []byte("null"))
		if at < 0 {
			return false
		}
		at += i
		j := at - 1
		for j >= 0 && (data[j] == ' ' || data[j] == '\t' || data[j] == '\n' || data[j] == '\r') {
			j--
		}
		if j >= 0 && (data[j] == '[' || data[j] == ',') {
			return true
		}
		i = at + len("null")
	}
}
