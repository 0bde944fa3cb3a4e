package ingest

import (
	"encoding/binary"
	"math/bits"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The fast OTLP JSON lines decoder.
//
// pdata's JSON unmarshaler builds every attribute, event, link and scope of
// every span, and that is most of what `mcptrace analyze` spends on a JSON
// lines dump; the index then keeps a dozen attributes and drops the rest.
// When the sink is a BatchSink (analyze's index is), Read therefore decodes
// each JSON line with decodeFastOTLP first: a scanner for the shape the
// Collector and our exporter write that writes only what an index reads
// (ids, name, kind, times, status code, the attributes ReadOptions.Keep
// names) into a compact Batch, no pdata at all, and skips the rest without
// building it. The batch reaches the sink through fileState.consume and
// BatchSink.ConsumeBatch.
//
// The fast path is deliberately narrow. Anything outside the common shape
// (an unknown or repeated key, an escaped string it would keep, a kept
// attribute of a type other than string, bool or int, events or links, ids
// that are not hex, an enum or number it does not know, no spans at all)
// makes it give up on that line, and the line is decoded by the regular
// pdata path, which also produces the exact error of a malformed line. What
// the fast path does accept, pdata accepts too and reads the same way:
// FuzzFastOTLPJSONMatchesPdata pins that, and analyze's FuzzLoadOTLPJSON
// pins that the index and the report come out the same.

// decodeFastOTLP decodes one OTLP JSON request keeping what keys name, and
// reports false when the line is not in the shape it handles (the caller
// then decodes it with pdata). It charges nothing (decodeFastOTLPCharged).
func decodeFastOTLP(data []byte, keys *keepSet) (*Batch, bool) {
	b, _ := decodeFastOTLPCharged(data, keys, nil)
	return b, b != nil
}

// decodeFastOTLPCharged is decodeFastOTLP with the batch charged to the
// job's charge c as it grows (Batch.startCharge): nil and no error when
// the line is not in the shape it handles; nil and the cause when the
// batch could not grow within the budget (a batch larger than the share,
// errNoRoom for the consumer, the read stopped), the line then left out.
func decodeFastOTLPCharged(data []byte, keys *keepSet, c *jobCharge) (*Batch, error) {
	return decodeCharged(c, keys.room, func(out *Batch, sc *stringCache) bool {
		d := fastDec{b: data, keys: keys, out: out, strs: sc}
		return d.request()
	})
}

// fastDec is the state of one decode. Every method returns false to give
// up on the line.
type fastDec struct {
	b         []byte
	i         int
	keys      *keepSet
	out       *Batch
	strs      *stringCache
	lastTrace lastTraceID
}

func (d *fastDec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// tok consumes byte c after optional whitespace.
func (d *fastDec) tok(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c { // compact JSON: no space to skip
		d.i++
		return true
	}
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// peek returns the next non-space byte, or 0 at the end.
func (d *fastDec) peek() byte {
	d.ws()
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

// rawString reads a string without escapes and returns its bytes, which
// point into the input.
func (d *fastDec) rawString() ([]byte, bool) {
	if !d.tok('"') {
		return nil, false
	}
	start := d.i
	end := plainString(d.b[start:])
	if end < 0 {
		return nil, false
	}
	d.i = start + end + 1
	return d.b[start : start+end], true
}

// plainString returns the length of the string that starts b (after its
// opening quote), up to its closing quote, or -1 when an escape or a
// control character comes first, or no end: the strings the projection
// decoder takes as they stand in the input.
func plainString(b []byte) int {
	n := stringStop(b)
	if n < 0 || b[n] != '"' {
		return -1
	}
	return n
}

// stringStop returns the index of the first '"', '\\' or control character
// of b, or -1. It tests eight bytes at a time: strings (ids, keys, values)
// are most of the input.
func stringStop(b []byte) int {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		q := w ^ ('"' * ones)
		bs := w ^ ('\\' * ones)
		hit := ((q-ones)&^q | (bs-ones)&^bs | (w - 0x20*ones)) &^ w & highs
		if hit != 0 {
			// The lowest flagged byte is a true stop: a borrow only
			// flags bytes above a true one.
			return i + bits.TrailingZeros64(hit)/8
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return -1
}

// skipString reads a string that is not kept: standard escapes allowed.
func (d *fastDec) skipString() bool {
	if !d.tok('"') {
		return false
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return false
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if d.i+6 > len(d.b) {
					return false
				}
				for _, h := range d.b[d.i+2 : d.i+6] {
					if !isHexDigit(h) {
						return false
					}
				}
				d.i += 6
			default:
				return false
			}
			continue
		}
		d.i++
	}
	return false
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// intPart consumes the integer part of a JSON number (-?digits, no
// leading zero) and reports whether it was well formed.
func (d *fastDec) intPart() bool {
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
		d.i++
	}
	n := d.i - digits
	return n > 0 && (n == 1 || d.b[digits] != '0')
}

// intLit reads a JSON integer literal (no fraction or exponent) and
// returns its text.
func (d *fastDec) intLit() ([]byte, bool) {
	d.ws()
	start := d.i
	if !d.intPart() {
		return nil, false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return nil, false
		}
	}
	return d.b[start:d.i], true
}

// intText returns the text of an integer written as a number or as a
// decimal string, the two spellings OTLP JSON allows for 64-bit values.
func (d *fastDec) intText() ([]byte, bool) {
	if d.peek() == '"' {
		return d.rawString()
	}
	return d.intLit()
}

// uint64Val reads a uint64 as a number or a decimal string, as pdata's
// ReadUint64 does. A string of at most 19 digits (every timestamp) is
// read at once, eight digits at a time; anything else takes the general
// path.
func (d *fastDec) uint64Val() (uint64, bool) {
	if d.peek() == '"' {
		v, n := digitRun(d.b[d.i+1:])
		if end := d.i + 1 + n; n > 0 && end < len(d.b) && d.b[end] == '"' {
			d.i = end + 1
			return v, true
		}
	}
	s, ok := d.intText()
	if !ok {
		return 0, false
	}
	return parseUint64(s)
}

// parseUint64 is strconv.ParseUint(s, 10, 64) for the common case, a
// nanosecond timestamp of 19 digits or fewer, which cannot overflow: a loop
// over the digits without the general parser's bookkeeping (it took most
// of a span's timestamps' cost). Longer texts go to strconv.
func parseUint64(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 19 {
		v, err := strconv.ParseUint(string(s), 10, 64)
		return v, err == nil
	}
	var v uint64
	for _, c := range s {
		c -= '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + uint64(c)
	}
	return v, true
}

// digitRun parses the decimal digits at the start of b, at most 19 of
// them (no run that short overflows a uint64), and returns their value
// and how many there were. Eight digits are tested and converted at once
// where eight bytes remain (eightDigits, parseEight).
func digitRun(b []byte) (v uint64, n int) {
	if len(b) >= 19 {
		// A nanosecond timestamp has 19 digits (from 2001 to 2286):
		// three words, the last overlapping the second, whose last three
		// digits it adds.
		w0, w1, w2 := binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint64(b[11:])
		if eightDigits(w0) && eightDigits(w1) && eightDigits(w2) {
			return parseEight(w0)*100000000000 + parseEight(w1)*1000 + parseEight(w2)%1000, 19
		}
	}
	for n+8 <= min(len(b), 19) {
		w := binary.LittleEndian.Uint64(b[n:])
		if !eightDigits(w) {
			break
		}
		v = v*100000000 + parseEight(w)
		n += 8
	}
	for n < min(len(b), 19) {
		c := b[n] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
		n++
	}
	return v, n
}

// eightDigits reports whether the eight bytes of w (little-endian) are
// all ASCII digits: each byte's high nibble is 3, and adding 6 keeps it 3.
func eightDigits(w uint64) bool {
	const highs, sixes, threes = 0xF0F0F0F0F0F0F0F0, 0x0606060606060606, 0x3333333333333333
	return (w&highs)|((w+sixes)&highs)>>4 == threes
}

// parseEight converts eight ASCII digits (little-endian in w, the first
// digit in the low byte) to their value: pairs, then fours, then the
// eight, each step a multiply-and-add across the lanes.
func parseEight(w uint64) uint64 {
	w -= 0x3030303030303030
	w = w*10 + w>>8
	w = ((w&0x000000FF000000FF)*(100+1000000<<32) + (w>>16&0x000000FF000000FF)*(1+10000<<32)) >> 32
	return w & 0xFFFFFFFF
}

// int64Val reads an int64 as a number or a decimal string, as pdata's
// ReadInt64 does.
func (d *fastDec) int64Val() (int64, bool) {
	s, ok := d.intText()
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	return v, err == nil
}

// smallUint reads a non-negative JSON integer that fits a uint32 (dropped
// counts, flags).
func (d *fastDec) smallUint() bool {
	s, ok := d.intLit()
	if !ok || s[0] == '-' {
		return false
	}
	_, err := strconv.ParseUint(string(s), 10, 32)
	return err == nil
}

// enum reads an enum given as a number in [0, max] or one of names (whose
// index is its number).
func (d *fastDec) enum(names []string) (int, bool) {
	if d.peek() == '"' {
		s, ok := d.rawString()
		if !ok {
			return 0, false
		}
		for i, n := range names {
			if string(s) == n {
				return i, true
			}
		}
		return 0, false
	}
	s, ok := d.intLit()
	if !ok || len(s) != 1 {
		return 0, false
	}
	v := int(s[0] - '0')
	return v, v < len(names)
}

var (
	spanKindNames   = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	statusCodeNames = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// hexID reads a string of exactly len(dst)*2 hex digits into dst.
func (d *fastDec) hexID(dst []byte) bool {
	digits, ok := d.hexDigits(2 * len(dst))
	return ok && decodeHexID(dst, digits)
}

// hexDigits reads a string of exactly n bytes and returns them, for the
// caller to decode as hex digits where they stand, with no scan for the
// string's end first: a quote, a backslash or a control character among
// them is not a hex digit, so decodeHexID refuses it, and the byte after
// them must be the closing quote.
func (d *fastDec) hexDigits(n int) ([]byte, bool) {
	if !d.tok('"') {
		return nil, false
	}
	end := d.i + n
	if end >= len(d.b) || d.b[end] != '"' {
		return nil, false
	}
	digits := d.b[d.i:end]
	d.i = end + 1
	return digits, true
}

// traceID reads a span's trace id into dst. An exporter writes the spans
// of a trace together, so most spans repeat the trace id of the span
// read before them: their digits are compared with the last ones decoded
// and decoded only when they differ.
func (d *fastDec) traceID(dst *pcommon.TraceID) bool {
	digits, ok := d.hexDigits(2 * len(dst))
	if !ok {
		return false
	}
	last := &d.lastTrace
	if !last.ok || !last.same(digits) {
		if last.ok = decodeHexID(last.id[:], digits); !last.ok {
			return false
		}
		copy(last.digits[:], digits)
	}
	*dst = last.id
	return true
}

// lastTraceID is the trace id fastDec.traceID decoded last, with its
// digits.
type lastTraceID struct {
	digits [2 * len(pcommon.TraceID{})]byte
	id     pcommon.TraceID
	ok     bool // digits and id hold a decoded id
}

// same reports whether digits, a trace id's 32, are l's: compared a word
// at a time in line, where comparing them as strings calls the runtime's
// comparison for each span.
func (l *lastTraceID) same(digits []byte) bool {
	digits = digits[:len(l.digits)]
	var diff uint64
	for w := 0; w < len(l.digits); w += 8 {
		diff |= binary.LittleEndian.Uint64(digits[w:]) ^ binary.LittleEndian.Uint64(l.digits[w:])
	}
	return diff == 0
}

// object reads an object, calling field for each key; field must consume
// the value. seen guards against repeated keys: field returns a bit per
// key it knows, and a key seen twice gives up.
func (d *fastDec) object(field func(key []byte) (uint32, bool)) bool {
	if !d.tok('{') {
		return false
	}
	if d.tok('}') {
		return true
	}
	var seen uint32
	for {
		k, ok := d.rawString()
		if !ok || !d.tok(':') {
			return false
		}
		bit, ok := field(k)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.tok(',') {
			continue
		}
		return d.tok('}')
	}
}

// keyOrder is the order an exporter writes an object's keys in, each key
// compiled with the closing quote and colon that follow it, for guessKey.
type keyOrder []orderedKey

type orderedKey struct {
	key string
	pat pattern // "key":
}

// newKeyOrder compiles keys, each short enough for its pattern to be
// compared as words.
func newKeyOrder(keys []string) keyOrder {
	o := make(keyOrder, len(keys))
	for i, k := range keys {
		o[i] = orderedKey{key: k, pat: newPattern(`"` + k + `":`)}
		if len(o[i].pat.s) > maxPattern {
			panic("ingest: key " + k + " is too long to guess")
		}
	}
	return o
}

// guessKey returns the index in order of the key whose pattern (the key
// and colon, written plainly: no space before the key or its colon, no
// escape in it) starts rest, the input from the position of a key on; -1
// when none does. It does not guess in the last maxPattern bytes of the
// input, where the words of a pattern do not fit: a key there is read
// without a guess. It is small enough for span to read it in line.
func guessKey(order keyOrder, rest []byte) int {
	if len(rest) >= maxPattern {
		for g := range order {
			if order[g].pat.words(rest) {
				return g
			}
		}
	}
	return -1
}

// keyAfter returns the index in order of the key after k, len(order)
// when k is the last or not in order.
func keyAfter(order keyOrder, k []byte) int {
	for i, o := range order {
		if o.key == string(k) {
			return i + 1
		}
	}
	return len(order)
}

// array reads an array, calling elem for each element.
func (d *fastDec) array(elem func() bool) bool {
	if !d.tok('[') {
		return false
	}
	if d.tok(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if d.tok(',') {
			continue
		}
		return d.tok(']')
	}
}

// null consumes a null element of the resourceSpans, scopeSpans or spans
// array: an element that holds nothing, skipped (unmarshalOTLPJSON drops
// it too), not read as an empty resource, scope or span with zero ids.
func (d *fastDec) null() bool {
	return d.peek() == 'n' && d.lit("null")
}

// emptyArray reads [] (events and links are not indexed; a span that has
// some goes to pdata, which validates them).
func (d *fastDec) emptyArray() bool {
	return d.tok('[') && d.tok(']')
}

func (d *fastDec) request() bool {
	ok := d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "resourceSpans", "resource_spans":
			return 1, d.array(func() bool { return d.null() || d.resourceSpans() })
		}
		return 0, false
	})
	d.ws()
	return ok && d.i == len(d.b)
}

func (d *fastDec) resourceSpans() bool {
	r := int32(len(d.out.Resources))
	if !d.out.newResource(Resource{}) {
		return false
	}
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "resource":
			return 1, d.object(func(k []byte) (uint32, bool) {
				switch string(k) {
				case "attributes":
					start, n, ok := d.attributes(&d.keys.res)
					d.out.Resources[r] = Resource{Attrs: start, N: n}
					return 1, ok
				case "droppedAttributesCount", "dropped_attributes_count":
					return 2, d.smallUint()
				}
				return 0, false
			})
		case "scopeSpans", "scope_spans":
			return 2, d.array(func() bool { return d.null() || d.scopeSpans(r) })
		case "schemaUrl", "schema_url":
			return 4, d.skipString()
		}
		return 0, false
	})
}

func (d *fastDec) scopeSpans(res int32) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "scope":
			return 1, d.object(func(k []byte) (uint32, bool) {
				switch string(k) {
				case "name":
					return 1, d.skipString()
				case "version":
					return 2, d.skipString()
				case "attributes":
					_, _, ok := d.attributes(nil)
					return 4, ok
				case "droppedAttributesCount", "dropped_attributes_count":
					return 8, d.smallUint()
				}
				return 0, false
			})
		case "spans":
			return 2, d.array(func() bool { return d.null() || d.span(res) })
		case "schemaUrl", "schema_url":
			return 4, d.skipString()
		}
		return 0, false
	})
}

// The span fields span reads in its switch, by their index in
// spanKeyOrder.
const (
	spanTraceID = iota
	spanSpanID
	spanParentID
	spanFlags
	spanName
	spanKind
	spanStart
	spanEnd
	spanAttributes
	spanStatus
	spanFields // how many there are
)

// spanKeyOrder is the order the Collector's and our exporter's JSON
// write a span's fields in (span's guess).
var spanKeyOrder = newKeyOrder([]string{spanTraceID: "traceId", spanSpanID: "spanId", spanParentID: "parentSpanId",
	spanFlags: "flags", spanName: "name", spanKind: "kind", spanStart: "startTimeUnixNano",
	spanEnd: "endTimeUnixNano", spanAttributes: "attributes", spanStatus: "status"})

// spanKey returns the index in spanKeyOrder of a span field's key in
// either spelling OTLP JSON allows (lowerCamelCase or the proto's
// snake_case), -1 for a field span's switch leaves to spanRare.
func spanKey(k []byte) int {
	switch string(k) {
	case "traceId", "trace_id":
		return spanTraceID
	case "spanId", "span_id":
		return spanSpanID
	case "parentSpanId", "parent_span_id":
		return spanParentID
	case "flags":
		return spanFlags
	case "name":
		return spanName
	case "kind":
		return spanKind
	case "startTimeUnixNano", "start_time_unix_nano":
		return spanStart
	case "endTimeUnixNano", "end_time_unix_nano":
		return spanEnd
	case "attributes":
		return spanAttributes
	case "status":
		return spanStatus
	}
	return -1
}

// span reads one span into the batch. It is object's loop written out for
// the object the decoder reads most, so that a field costs no call through
// a callback, and with its keys guessed: an exporter writes a span's
// fields in one order, so each key is first taken to be one of those after
// the last key read in spanKeyOrder and compared with its pattern where it
// stands (keyAt), which spares scanning for the key's end and telling
// it. Any other key is read as object reads it and told by spanKey, and
// the guess goes on from its place in order. The fields exporters write
// for every span are read by spanField, the rest (ones they omit when
// empty) by spanRare; a key seen twice gives up.
func (d *fastDec) span(res int32) bool {
	sp := d.out.newSpan(res)
	if sp == nil {
		return false
	}
	if d.strs.spans.read(d, sp) {
		return true
	}
	rec := spanRecord{from: d.i}
	if !d.spanByKeys(sp, &rec) {
		return false
	}
	rec.to = d.i
	d.strs.spans.learn(d, &rec)
	return true
}

// spanByKeys is span's general path: it reads the span's fields key by
// key, noting in rec where each field's value stands.
func (d *fastDec) spanByKeys(sp *Span, rec *spanRecord) bool {
	if !d.tok('{') {
		return false
	}
	if d.tok('}') {
		return true
	}
	var seen uint32
	for next := 0; ; { // next: the index in spanKeyOrder of the key guessed next
		var bit uint32
		ok := true
		at := -1
		if g := guessKey(spanKeyOrder[next:], d.b[d.i:]); g >= 0 {
			at = next + g
			d.i += len(spanKeyOrder[at].pat.s)
			next = at + 1
		} else {
			var k []byte
			if k, ok = d.rawString(); !ok || !d.tok(':') {
				return false
			}
			next = keyAfter(spanKeyOrder, k)
			if at = spanKey(k); at < 0 {
				rec.rare = true
				bit, ok = d.spanRare(k)
			}
		}
		if at >= 0 {
			start := d.i
			bit, ok = 1<<at, d.spanField(sp, at)
			rec.field(at, start, d.i)
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if d.tok(',') {
			continue
		}
		return d.tok('}')
	}
}

// spanField reads the value of the span field at, an index in
// spanKeyOrder, into sp.
func (d *fastDec) spanField(sp *Span, at int) bool {
	switch at {
	case spanTraceID:
		return d.traceID(&sp.TraceID)
	case spanSpanID:
		return d.hexID(sp.SpanID[:])
	case spanParentID:
		if d.peek() == '"' && d.i+1 < len(d.b) && d.b[d.i+1] == '"' {
			d.i += 2 // "" is a root span
			return true
		}
		return d.hexID(sp.ParentSpanID[:])
	case spanFlags:
		return d.smallUint()
	case spanName:
		s, ok := d.rawString()
		sp.Name = d.strs.str(s)
		return ok
	case spanKind:
		v, ok := d.enum(spanKindNames)
		sp.Kind = uint8(v)
		return ok
	case spanStart:
		v, ok := d.uint64Val()
		sp.Start = v
		return ok
	case spanEnd:
		v, ok := d.uint64Val()
		sp.End = v
		return ok
	case spanAttributes:
		start, n, ok := d.spanAttributes(sp.Name)
		sp.Attrs, sp.N = start, n
		return ok
	case spanStatus:
		return d.status(sp)
	}
	panic("ingest: span field " + strconv.Itoa(at) + " has no reader")
}

// spanRare reads the span fields span leaves out of spanField, none of
// them kept, returning the bit span uses to catch a repeated key, above
// those of spanKeyOrder's fields; an unknown key is 0, false.
func (d *fastDec) spanRare(k []byte) (uint32, bool) {
	const first = 1 << spanRareBit
	switch string(k) {
	case "traceState", "trace_state":
		return first, d.skipString()
	case "droppedAttributesCount", "dropped_attributes_count":
		return first << 1, d.smallUint()
	case "events":
		return first << 2, d.emptyArray()
	case "droppedEventsCount", "dropped_events_count":
		return first << 3, d.smallUint()
	case "links":
		return first << 4, d.emptyArray()
	case "droppedLinksCount", "dropped_links_count":
		return first << 5, d.smallUint()
	}
	return 0, false
}

// spanRareBit is the first bit of spanRare's fields: spanKeyOrder's take
// the bits below, one per index.
const spanRareBit = spanStatus + 1

// status reads a span's status object: its code is kept, its message
// skipped.
func (d *fastDec) status(sp *Span) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "code":
			v, ok := d.enum(statusCodeNames)
			sp.Status = uint8(v)
			return 1, ok
		case "message":
			return 2, d.skipString()
		}
		return 0, false
	})
}

// attributes reads an attribute array, appending the attributes whose keys
// are in kept (the first of a repeated key, as the index does) to the
// batch, and returns their range there; a nil kept keeps nothing. It is
// array's loop written out: a span's attributes are the most elements the
// decoder reads, and a call through array's callback costs each one.
func (d *fastDec) attributes(kept *keyFilter) (start, n int32, ok bool) {
	start = int32(len(d.out.Attrs))
	if !d.tok('[') {
		return start, 0, false
	}
	if d.tok(']') {
		return start, 0, true
	}
	for d.attribute(kept, start) {
		if d.tok(',') {
			continue
		}
		if !d.tok(']') {
			break
		}
		return start, int32(len(d.out.Attrs)) - start, true
	}
	return start, 0, false
}

// attribute reads one element of an attribute array whose kept
// attributes start at start in the batch.
func (d *fastDec) attribute(kept *keyFilter, start int32) bool {
	var val fastValue
	k, keep, ok := d.compactAttr(kept, &val)
	if !ok {
		var key []byte
		if !d.generalAttr(&key, &val) || key == nil {
			return false
		}
		k, keep = kept.lookup(key)
	}
	if val.typ == pcommon.ValueTypeEmpty {
		return false
	}
	if !keep {
		return true
	}
	return d.gather(start, k, &val)
}

// generalAttr reads an attribute in any shape pdata reads: the path for
// those compactAttr does not take, out of the loop so the loop stays small.
func (d *fastDec) generalAttr(key *[]byte, val *fastValue) bool {
	return d.object(func(k []byte) (uint32, bool) {
		switch string(k) {
		case "key":
			s, ok := d.rawString()
			*key = s
			return 1, ok
		case "value":
			return 2, d.value(val)
		}
		return 0, false
	})
}

// gather appends a kept attribute to the batch (Batch.newAttr: the first
// of a repeated key wins). A double or an escaped string gives up: its
// formatting or unescaping is pdata's.
func (d *fastDec) gather(start int32, k string, val *fastValue) bool {
	if val.typ == pcommon.ValueTypeDouble || val.escaped {
		return false
	}
	a := d.out.newAttr(start, k)
	if a == nil {
		return true
	}
	a.Type, a.Bool, a.Int = val.typ, val.b, val.i
	if val.typ == pcommon.ValueTypeStr {
		a.Str = val.str
		if a.Str == "" {
			a.Str = d.strs.str(val.s)
			if val.last != nil {
				*val.last = a.Str
			}
		}
	}
	return true
}

// keyPre opens a compact attribute, and keyPreWord is its eight bytes as
// compactAttr loads them.
const keyPre = `{"key":"`

var keyPreWord = binary.LittleEndian.Uint64([]byte(keyPre))

// compactAttr reads an attribute written as the Collector and our exporter
// write it, {"key":"k","value":{"stringValue":"v"}} without spaces, with
// a string, bool or int value, and returns what kept answers for its key.
// It is the general path (object and value) unrolled for the shape nearly
// every attribute has; on anything else it puts the position back and
// reports false, and the general path reads the attribute. A key read
// lately is recognised where it stands (recentKeys).
func (d *fastDec) compactAttr(kept *keyFilter, v *fastValue) (k string, keep, ok bool) {
	start := d.i
	b := d.b
	i := d.i
	// The opening is tested as one word. Near the end of the input, where
	// a pattern's words do not fit after it, the general path reads the
	// attribute (the last one of the input).
	if at := b[i:]; len(at) < len(keyPre)+maxPattern || binary.LittleEndian.Uint64(at) != keyPreWord {
		return "", false, false
	}
	i += len(keyPre)
	var n int
	g := d.strs.keys.guess(kept, b[i:])
	if g != nil {
		n = len(g.pat.s) - 1
		k, keep = g.kept, g.kept != ""
	} else if n, k, keep = d.newKey(kept, b[i:]); n < 0 {
		return "", false, false
	}
	i += n + 1
	if len(b)-i < maxPattern {
		return "", false, false
	}
	rest := b[i:]
	switch {
	case compactStr.words(rest):
		d.i = i + len(compactStr.s)
		v.typ = pcommon.ValueTypeStr
		if keep && g != nil {
			v.last = &g.last
			if ok = d.nextIsQuoted(g.last); ok {
				v.str = g.last
				break
			}
		}
		v.s, ok = d.rawString()
	case compactBool.words(rest):
		d.i = i + len(compactBool.s)
		v.typ = pcommon.ValueTypeBool
		v.b, ok = d.boolLit()
	case compactInt.words(rest):
		d.i = i + len(compactInt.s)
		v.typ = pcommon.ValueTypeInt
		v.i, ok = d.int64Val()
	}
	if ok && hasPrefixAt(b, d.i, "}}") {
		d.i += 2
		return k, keep, true
	}
	d.i = start
	*v = fastValue{}
	return "", false, false
}

// newKey reads a key compactAttr's recentKeys did not guess, at the
// start of b (after its opening quote; b holds at least maxPattern
// bytes): it returns the index of its closing quote and what kept
// answers for it, and remembers that answer. n is -1 when the key ends
// otherwise (an escape, a control character, no end).
func (d *fastDec) newKey(kept *keyFilter, b []byte) (n int, k string, keep bool) {
	if n = plainString(b); n < 0 {
		return -1, "", false
	}
	k, keep = kept.lookup(b[:n])
	d.strs.keys.remember(kept, b, n, k)
	return n, k, keep
}

// boolLit reads the literal true or false.
func (d *fastDec) boolLit() (v, ok bool) {
	switch {
	case hasPrefixAt(d.b, d.i, "true"):
		d.i += 4
		return true, true
	case hasPrefixAt(d.b, d.i, "false"):
		d.i += 5
		return false, true
	}
	return false, false
}

// What stands between a compact attribute's key and its value, for each
// type of value compactAttr reads.
var (
	compactStr  = newPattern(`,"value":{"stringValue":`)
	compactBool = newPattern(`,"value":{"boolValue":`)
	compactInt  = newPattern(`,"value":{"intValue":`)
)

// nextIsQuoted reports whether the input at d.i is the string s, quoted,
// and when it is reads past it. s is a string rawString read before: no
// quote, backslash or control character in it, so the input holding its
// bytes between two quotes is that string, unescaped. An attribute's
// value often repeats its key's last one (a pair's cache key on the
// invocation and its acquire, a transport, a tool's name), and comparing
// it costs less than scanning for its end and then looking it up. The
// empty string is never compared.
func (d *fastDec) nextIsQuoted(s string) bool {
	i, b := d.i, d.b
	if s == "" || i >= len(b) || b[i] != '"' || !closedAt(b, i+1, s) {
		return false
	}
	d.i = i + len(s) + 2
	return true
}

// closedAt reports whether b[i:] is s, a string rawString read before,
// then its closing quote: the string s itself, unescaped (nextIsQuoted).
func closedAt(b []byte, i int, s string) bool {
	return len(b)-i > len(s) && b[i+len(s)] == '"' && string(b[i:i+len(s)]) == s
}

// hasPrefixAt reports whether b[i:] starts with p.
func hasPrefixAt(b []byte, i int, p string) bool {
	return len(b)-i >= len(p) && string(b[i:i+len(p)]) == p
}

// fastValue is one decoded scalar attribute value.
type fastValue struct {
	typ pcommon.ValueType
	s   []byte
	// str is the value when compactAttr found it equal to the last one of
	// its key (nextIsQuoted), s then nil; last is where that key remembers
	// the string it was last given, for gather to set.
	str     string
	last    *string
	escaped bool // a string with escapes, not decoded into s
	b       bool
	i       int64
}

// value reads an AnyValue object holding exactly one scalar.
func (d *fastDec) value(v *fastValue) bool {
	return d.object(func(k []byte) (uint32, bool) {
		// Every field shares one bit: a value holds one.
		switch string(k) {
		case "stringValue", "string_value":
			v.typ = pcommon.ValueTypeStr
			start := d.i
			s, ok := d.rawString()
			if !ok { // escaped: fine unless the attribute is kept
				d.i = start
				ok, v.escaped = d.skipString(), true
			}
			v.s = s
			return 1, ok
		case "boolValue", "bool_value":
			v.typ = pcommon.ValueTypeBool
			switch {
			case d.lit("true"):
				v.b = true
				return 1, true
			case d.lit("false"):
				return 1, true
			}
			return 1, false
		case "intValue", "int_value":
			v.typ = pcommon.ValueTypeInt
			n, ok := d.int64Val()
			v.i = n
			return 1, ok
		case "doubleValue", "double_value":
			v.typ = pcommon.ValueTypeDouble
			return 1, d.doubleLit()
		}
		return 0, false
	})
}

// lit consumes the literal word.
func (d *fastDec) lit(word string) bool {
	d.ws()
	if len(d.b)-d.i >= len(word) && string(d.b[d.i:d.i+len(word)]) == word {
		d.i += len(word)
		return true
	}
	return false
}

// doubleLit reads a plain decimal number (-?digits[.digits]) that parses as
// a float64.
func (d *fastDec) doubleLit() bool {
	d.ws()
	start := d.i
	if !d.intPart() {
		return false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		frac := d.i
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
		}
		if d.i == frac {
			return false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	_, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	return err == nil
}
