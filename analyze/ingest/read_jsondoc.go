package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// docSpec says where the records are in a JSON document: the elements of
// the arrays under some top-level keys, possibly one object down (Tempo's
// trace.resourceSpans). Everything else in the document is skipped.
type docSpec struct {
	arrays   map[string]bool // keys whose array elements are records
	nested   map[string]bool // keys whose object value is searched the same way
	expected string          // the document the format expects, for errors
	// signals are top-level keys in which the source says whether data is
	// missing: each reads the key's value and returns why the answer is
	// incomplete, or "" when it is not (see signals.go).
	signals map[string]func(json.RawMessage) string
}

var (
	otlpDocSpec = docSpec{
		arrays:   map[string]bool{"resourceSpans": true, "resource_spans": true},
		expected: "an OTLP JSON object with a resourceSpans array",
		signals:  map[string]func(json.RawMessage) string{"partialSuccess": otlpPartialSuccess, "partial_success": otlpPartialSuccess},
	}
	tempoDocSpec = docSpec{
		arrays:   map[string]bool{"batches": true, "resourceSpans": true, "resource_spans": true},
		nested:   map[string]bool{"trace": true},
		expected: `a Tempo trace JSON object with "batches" or "trace": {"resourceSpans"}`,
		signals:  map[string]func(json.RawMessage) string{"status": tempoStatus, "error": errorsField, "errors": errorsField},
	}
	jaegerDocSpec = docSpec{
		arrays:   map[string]bool{"data": true},
		expected: `a Jaeger /api/traces JSON object with a "data" array`,
		signals:  map[string]func(json.RawMessage) string{"errors": jaegerErrors},
	}
)

// produceDoc returns a producer that streams the records out of one or more
// concatenated JSON documents (pretty-printed or not) without holding a
// whole document: only one record at a time is buffered, and values outside
// the record arrays are skipped token by token. Records are decoded in
// parallel like lines. No single value (a record, a skipped string) may be
// longer than valueCap: the decoder is never fed further, and the input is
// cut there with ErrRecordTooLarge.
func (s *stream) produceDoc(spec docSpec, valueCap int64) producer {
	return func(ctx context.Context, emit emitFunc) {
		cr := &capReader{r: s, limit: -1}
		src := &pendReader{r: cr}
		w := &docWalker{s: s, spec: spec, cr: cr, src: src, cap: valueCap, dec: json.NewDecoder(src), base: s.off, emit: emit, ctx: ctx, job: newJob()}
		for {
			if ctx.Err() != nil {
				return
			}
			start := w.offset()
			tok, err := w.token()
			if err == io.EOF {
				w.flush()
				return
			}
			if err != nil {
				w.fail(err)
				return
			}
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				w.flush()
				emit(readyJob(result{prob: &ReadError{Path: s.path, Offset: start, Expected: spec.expected, Err: fmt.Errorf("found %s", describeToken(tok))}}))
				return
			}
			found, ok := w.object(0)
			if !ok {
				return
			}
			if !found {
				if !w.flush() {
					return
				}
				if !emit(readyJob(result{prob: &ReadError{Path: s.path, Offset: start, Expected: spec.expected,
					Err: errors.New("the object has none of the expected keys")}})) {
					return
				}
			}
		}
	}
}

// docWalker walks one input's JSON documents with encoding/json's token
// API, emitting array elements as records.
type docWalker struct {
	ctx      context.Context
	s        *stream
	spec     docSpec
	dec      *json.Decoder
	base     int64 // stream offset where the decoder started
	emit     emitFunc
	job      *job
	jobBytes int
	stopped  bool
	cr       *capReader  // what the decoder reads through
	src      *pendReader // the decoder's input: bytes a skip read ahead, then cr
	cap      int64       // the longest value the decoder may buffer
	crBase   int64       // cr.read at the decoder's position 0 (the decoder is replaced after a fast skip)
	// inArray and elem are the record array being walked and the index
	// of its element being read, for the place a problem names.
	inArray string
	elem    int
}

func (w *docWalker) offset() int64 { return w.base + w.dec.InputOffset() }

// arm lets the decoder read at most cap bytes past its position.
func (w *docWalker) arm() { w.cr.limit = w.crBase + w.dec.InputOffset() + w.cap }

func (w *docWalker) token() (json.Token, error) {
	w.arm()
	return w.dec.Token()
}

func (w *docWalker) more() bool {
	w.arm()
	return w.dec.More()
}

func (w *docWalker) decode(v any) error {
	w.arm()
	return w.dec.Decode(v)
}

// object walks the members of an object whose '{' was just read. found
// reports whether a record array was seen; ok is false when the walk must
// stop (a problem was emitted, or the pipeline is stopping).
func (w *docWalker) object(depth int) (found, ok bool) {
	for w.more() {
		tok, err := w.token()
		if err != nil {
			w.fail(err)
			return found, false
		}
		key, _ := tok.(string)
		f, ok := w.member(key, depth)
		if !ok {
			return found, false
		}
		found = found || f
	}
	if _, err := w.token(); err != nil { // the closing '}'
		w.fail(err)
		return found, false
	}
	return found, true
}

// member walks the value of the member key of an object depth objects
// down: a record array, a signal or an object searched the same way (those
// two at the top level only), or a value skipped. found and ok are as
// object's.
func (w *docWalker) member(key string, depth int) (found, ok bool) {
	switch {
	case w.spec.arrays[key]:
		return w.array(key, depth)
	case w.spec.signals[key] != nil && depth == 0:
		return false, w.signal(key)
	case w.spec.nested[key] && depth == 0:
		return w.nested(depth)
	}
	return false, w.skipValue(depth)
}

// nested walks the value of a key whose object is searched like the
// document (Tempo's "trace"); any other value is skipped.
func (w *docWalker) nested(depth int) (found, ok bool) {
	tok, err := w.token()
	if err != nil {
		w.fail(err)
		return false, false
	}
	if d, isDelim := tok.(json.Delim); isDelim && d == '{' {
		return w.object(depth + 1)
	}
	return false, w.skipRest(tok)
}

// array emits the elements of the array under key as records.
func (w *docWalker) array(key string, depth int) (found, ok bool) {
	start := w.offset()
	tok, err := w.token()
	if err != nil {
		w.fail(err)
		return false, false
	}
	if tok == nil { // "key": null, as an empty result is sometimes written
		return true, true
	}
	if d, isDelim := tok.(json.Delim); !isDelim || d != '[' {
		w.flush()
		w.emit(readyJob(result{prob: &ReadError{Path: w.s.path, Offset: start, Expected: w.spec.expected,
			Err: fmt.Errorf("%q is %s, not an array", key, describeToken(tok))}}))
		return false, false
	}
	w.inArray, w.elem = key, 0
	defer func() { w.inArray = "" }()
	for ; w.more(); w.elem++ {
		if w.ctx.Err() != nil {
			return true, false
		}
		var raw json.RawMessage
		if err := w.decode(&raw); err != nil {
			if isJSONDepthError(err) {
				if !w.readDeepElement(depth) {
					return true, false
				}
				continue
			}
			w.fail(err)
			return true, false
		}
		// raw is exactly the element's bytes, so it started len(raw) back.
		w.job.recs = append(w.job.recs, rec{data: raw, off: w.offset() - int64(len(raw)), array: key, elem: w.elem})
		w.jobBytes += len(raw)
		if w.jobBytes >= jobMaxBytes || len(w.job.recs) >= jobMaxRecs {
			if !w.flush() {
				return true, false
			}
		}
	}
	if _, err := w.token(); err != nil { // the closing ']'
		w.fail(err)
		return true, false
	}
	return true, true
}

// signal reads the value of a top-level key in which the source says
// whether data is missing, and emits a problem (the input is partial) when
// it says so.
func (w *docWalker) signal(key string) bool {
	start := w.offset()
	var raw json.RawMessage
	if err := w.decode(&raw); err != nil {
		w.fail(err)
		return false
	}
	why := "a value nested too deep to read"
	if jsonDepth(raw) == nil {
		why = w.spec.signals[key](raw)
	}
	if why == "" {
		return true
	}
	if !w.flush() {
		return false
	}
	if !w.emit(readyJob(result{prob: &ReadError{Path: w.s.path, Offset: start, Expected: "every trace the source was asked for",
		Err: fmt.Errorf("%w: %q says %s", ErrSourceIncomplete, key, why)}})) {
		w.stopped = true
		return false
	}
	return true
}

// skipValue skips an unknown value of any size in constant memory, at the
// speed of a byte scan: the decoder's unread buffer and the stream after it
// are scanned to the value's end by skipJSON, then a new decoder takes over
// from there. The decoder's token API would take a call per number of a
// gigabyte array.
//
// The new decoder must be where the old one was: inside depth+1 nested
// objects, expecting a key. It is primed with that many synthetic opening
// braces (`{"":{` per level), read before the rest, and the comma after
// the skipped value is consumed by the scan.
func (w *docWalker) skipValue(depth int) bool {
	_, ok := w.skip(depth, false, w.offset(), w.dec.Buffered(), nil)
	return ok
}

// readDeepElement reads an array element nested deeper than the
// decoder's own limit (encoding/json stops at 10000 levels, with an error
// that names no place) by a scan instead, which does not nest, and emits
// it as a record like any other: its decoder cuts the values past
// MaxDepth (depth.go), so its spans are read. An element longer than the
// value cap is skipped, reported as a record too deep. The failed Decode
// consumed nothing: its buffer still starts at the element.
func (w *docWalker) readDeepElement(depth int) bool {
	start := w.offset()
	buffered, _ := io.ReadAll(w.dec.Buffered()) // at most the value cap
	kept := &keepUpTo{limit: int(w.cap) + 64<<10}
	n, ok := w.skip(depth, true, start, bytes.NewReader(buffered), kept)
	if !ok {
		return false
	}
	if !kept.over && n <= int64(len(kept.b)) {
		elem := bytes.TrimLeft(kept.b[:n], " \t\r\n")
		off := start + n - int64(len(elem))
		elem = bytes.TrimRight(bytes.TrimRight(elem, " \t\r\n,"), " \t\r\n")
		if int64(len(elem)) <= w.cap {
			w.job.recs = append(w.job.recs, rec{data: elem, off: off, array: w.inArray, elem: w.elem})
			w.jobBytes += len(elem)
			return true
		}
	}
	e := jsonDepth(buffered)
	if e == nil { // cannot be: the decoder saw more than 10000 levels
		e = &depthError{}
	}
	if !w.flush() {
		return false
	}
	if !w.emit(readyJob(result{prob: &ReadError{Path: w.s.path, Offset: start + e.at, Expected: expectedDepth,
		Err: rec{array: w.inArray, elem: w.elem}.placed(e)}})) {
		w.stopped = true
		return false
	}
	return true
}

// keepUpTo keeps what is written to it up to limit bytes; past it, it
// keeps nothing and says so (over).
type keepUpTo struct {
	b     []byte
	limit int
	over  bool
}

func (k *keepUpTo) Write(p []byte) (int, error) {
	switch {
	case k.over:
	case len(k.b)+len(p) > k.limit:
		k.over, k.b = true, nil
	default:
		k.b = append(k.b, p...)
	}
	return len(p), nil
}

// isJSONDepthError reports whether err is encoding/json's nesting limit.
func isJSONDepthError(err error) bool {
	var syn *json.SyntaxError
	return errors.As(err, &syn) && strings.HasSuffix(syn.Error(), "exceeded max depth")
}

// skip skips the value that starts the input after the decoder's
// position, at stream offset start (an object member's value, or with
// inArray an array element), and replaces the decoder by one positioned
// after it (see skipValue). head is the decoder's unread buffer (or a copy
// of it); the input goes on with w.src. tee, when not nil, is given every
// byte the scan reads. It returns how many bytes of the input it took:
// white space, the value, white space and the comma after it.
//
// Whatever the scan read past that end, and whatever of head and of the
// bytes w.src still held ahead of cr it did not reach, becomes w.src's
// pending bytes, in input order, so that skips in a row lose nothing; all
// of it was read from cr past the skipped value, at most the scan's buffer
// and the decoder's, so it stays bounded.
func (w *docWalker) skip(depth int, inArray bool, start int64, head io.Reader, tee io.Writer) (int64, bool) {
	w.cr.limit = -1 // the scan holds no value, whatever its length
	src := io.MultiReader(head, w.src)
	if tee != nil {
		src = io.TeeReader(src, tee)
	}
	br := bufio.NewReaderSize(src, 64<<10)
	n, err := skipJSON(br)
	if err == nil {
		n += skipComma(br)
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		w.fail(err)
		return n, false
	}
	prime := "{" + strings.Repeat(`"":{`, depth)
	tokens := 1 + 2*depth
	if inArray {
		prime += `"":[`
		tokens += 2
	}
	rest, _ := br.Peek(br.Buffered())
	headLeft, _ := io.ReadAll(head)
	pend := make([]byte, 0, len(prime)+len(rest)+len(headLeft)+len(w.src.pend))
	pend = append(append(append(append(pend, prime...), rest...), headLeft...), w.src.pend...)
	w.src.pend = pend
	w.dec = json.NewDecoder(w.src)
	w.crBase = w.cr.read - int64(len(pend))
	w.base = start + n - int64(len(prime))
	for range tokens {
		if _, err := w.dec.Token(); err != nil {
			w.fail(err)
			return n, false
		}
	}
	return n, true
}

// skipComma takes the white space after a skipped value and the comma
// after it, if there is one, and returns how many bytes it took. What is
// not white space or a comma is left for the decoder, which reports it
// (the end of the input included).
func skipComma(br *bufio.Reader) int64 {
	var n int64
	for {
		c, err := br.ReadByte()
		if err != nil {
			return n
		}
		switch c {
		case ',':
			return n + 1
		case ' ', '\t', '\r', '\n':
			n++
		default:
			br.UnreadByte()
			return n
		}
	}
}

// pendReader is the decoder's input: the bytes a skip read ahead of the
// decoder's new position (pend), then r.
type pendReader struct {
	pend []byte
	r    io.Reader
}

func (p *pendReader) Read(b []byte) (int, error) {
	if len(p.pend) > 0 {
		n := copy(b, p.pend)
		p.pend = p.pend[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// skipJSON consumes one JSON value (and the white space before it) from br
// and returns how many bytes it took. It checks the nesting and the
// strings, not the scalars: what it skips is never decoded.
func skipJSON(br *bufio.Reader) (int64, error) {
	s := jsonSkipper{br: br}
	depth := 0
	for {
		c, err := s.next()
		if err != nil {
			return s.n, err
		}
		switch c {
		case ' ', '\t', '\r', '\n', ',', ':':
			continue
		case '"':
			if err := s.str(); err != nil {
				return s.n, err
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return s.n, &json.SyntaxError{Offset: s.n}
			}
			depth--
		default:
			if err := s.scalar(depth); err != nil {
				return s.n, err
			}
		}
		if depth == 0 {
			return s.n, nil
		}
	}
}

// jsonSkipper is the state of skipJSON's scan: the reader and the bytes
// taken from it so far. Its steps are small enough to be inlined into the
// scan's loop.
type jsonSkipper struct {
	br *bufio.Reader
	n  int64
}

// next takes one byte.
func (s *jsonSkipper) next() (byte, error) {
	c, err := s.br.ReadByte()
	if err == nil {
		s.n++
	}
	return c, err
}

// str takes the rest of a string whose opening quote was taken, jumping
// to the next quote or backslash a buffer at a time; a quote or backslash
// found in the buffer is taken with what comes before it.
func (s *jsonSkipper) str() error {
	for {
		buf, _ := s.br.Peek(max(s.br.Buffered(), 1))
		k := bytes.IndexAny(buf, `"\`)
		if k < 0 && len(buf) > 0 {
			s.br.Discard(len(buf))
			s.n += int64(len(buf))
			continue
		}
		var c byte
		if k >= 0 {
			c = buf[k]
			s.br.Discard(k + 1)
			s.n += int64(k + 1)
		} else { // nothing buffered: the next read says why
			var err error
			if c, err = s.next(); err != nil {
				return err
			}
		}
		switch c {
		case '"':
			return nil
		case '\\':
			if _, err := s.next(); err != nil {
				return err
			}
		}
	}
}

// scalar takes the rest of a scalar whose first byte was taken, up to the
// next delimiter. The end of the input ends a scalar at depth 0 (the whole
// value); inside an array or object it is an error.
func (s *jsonSkipper) scalar(depth int) error {
	for {
		b, err := s.br.Peek(1)
		if err == io.EOF && depth == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		if bytes.IndexByte([]byte(" \t\r\n,:]}"), b[0]) >= 0 {
			return nil
		}
		s.next()
	}
}

// skipRest skips the rest of a value whose first token was already read.
func (w *docWalker) skipRest(tok json.Token) bool {
	d, ok := tok.(json.Delim)
	if !ok || d == '}' || d == ']' {
		return true
	}
	for depth := 1; depth > 0; {
		tok, err := w.token()
		if err != nil {
			w.fail(err)
			return false
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return true
}

// flush hands the records gathered so far to the pipeline.
func (w *docWalker) flush() bool {
	if w.stopped {
		return false
	}
	if len(w.job.recs) > 0 {
		if !w.emit(w.job) {
			w.stopped = true
			return false
		}
		w.job, w.jobBytes = newJob(), 0
	}
	return true
}

// fail emits what was gathered and then the problem that stopped the walk:
// a syntax error, a truncation or a broken stream.
func (w *docWalker) fail(err error) {
	if !w.flush() {
		return
	}
	var prob *ReadError
	var syn *json.SyntaxError
	switch {
	case w.cr.hit:
		// Cut, not damaged: what was read before is kept, with a warning.
		prob = &ReadError{Path: w.s.path, Offset: w.offset(), Expected: w.spec.expected, Err: errRecordCap("a JSON value", w.cap)}
	case w.s.err != nil:
		prob = w.s.problem(w.offset(), w.spec.expected, 0, err)
	case errors.As(err, &syn):
		// SyntaxError.Offset is relative to what the decoder was looking
		// at; its input offset is where the bad value starts.
		prob = &ReadError{Path: w.s.path, Offset: w.offset(), Expected: "valid JSON (" + w.spec.expected + ")", Err: err}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		prob = &ReadError{Path: w.s.path, Offset: w.offset(), Expected: w.spec.expected,
			Err: fmt.Errorf("%w: the input ends inside the JSON document", ErrTruncated)}
	default:
		prob = &ReadError{Path: w.s.path, Offset: w.offset(), Expected: w.spec.expected, Err: err}
	}
	if w.inArray != "" {
		// The byte alone is hard to find in a document of one line.
		prob.Err = fmt.Errorf("%w (in element %d of %s)", prob.Err, w.elem, QuoteText(w.inArray))
	}
	w.emit(readyJob(result{prob: prob}))
}

// describeToken names a JSON token for an error message without quoting a
// string's content.
func describeToken(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			return "a JSON array"
		case '{':
			return "a JSON object"
		}
		return fmt.Sprintf("%q", string(t))
	case string:
		return "a JSON string"
	case float64, json.Number:
		return "a JSON number"
	case bool:
		return "a JSON boolean"
	case nil:
		return "null"
	}
	return "an unexpected JSON token"
}
