package ingest

import (
	"bytes"
	"fmt"
	"strings"
)

// expectedDump is what an unrecognised input should have been.
const expectedDump = "one of OTLP JSON, OTLP protobuf (4-byte length-prefixed records), Jaeger /api/traces JSON or Tempo trace JSON, optionally gzip or zstd compressed"

// utf8BOM is the byte order mark some tools put before JSON.
var utf8BOM = []byte("\xef\xbb\xbf")

// detection is what the first bytes of a (decompressed) input say.
type detection struct {
	format     Format // FormatAuto when unsure
	framedZstd bool   // length-prefixed zstd frames: the Collector file exporter's compression: zstd
	looks      string // what the content looks like, for error messages
	nul        bool   // the content is NUL bytes only, as far as detection looked
	// cut: a JSON object whose members run past the end of what detection
	// looked at before any key that decides the format.
	cut bool
}

// detectStream classifies the input s, whose first bytes are head. When
// head ends inside a JSON object before any key that decides its format
// (a first member with a long value), more of the input follows, and the
// format is not forced, it looks again as far as the stream's read buffer
// holds (streamBufferBytes): the buffer is there already, so looking costs
// no memory, and nothing is consumed, so the format reader still starts
// at the first byte (stdin cannot be read twice). An object whose
// deciding key lies past the buffer is refused with a message naming
// --input-format, which reads it. It returns the head it looked at and
// what it says.
func detectStream(s *stream, head []byte, auto bool) ([]byte, detection) {
	det := detect(head)
	if !det.cut || !auto || !s.beyond(head, headBytes) {
		return head, det
	}
	if more, _ := s.r.Peek(s.r.Size()); len(more) > len(head) {
		head, det = more, detect(more)
	}
	if det.cut && s.beyond(head, s.r.Size()) {
		det.looks = fmt.Sprintf("a JSON object with none of the keys resourceSpans, data, batches or trace in its first %d KiB "+
			"(members with long values first? name the format with --input-format to read it)", len(head)>>10)
	}
	return head, det
}

// beyond reports whether the input may go on past head, what a peek of
// asked bytes at what comes next in s returned: the input is longer, or,
// its size unknown, the peek got all it asked for.
func (s *stream) beyond(head []byte, asked int) bool {
	if left := s.remaining(); left >= 0 {
		return int64(len(head)) < left
	}
	return len(head) >= asked
}

// detect classifies an input from its first bytes: a JSON object by its
// first deciding top-level key (formatSpec.jsonKeys), a binary format by
// its sniffer (formatSpec.sniff). It never reads past head.
func detect(head []byte) detection {
	body := bytes.TrimPrefix(head, utf8BOM)
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '{' {
		key, ok, cut := scanFormatKey(body)
		if !ok {
			return detection{cut: cut, looks: "a JSON object with none of the keys resourceSpans, data, batches or trace near its start"}
		}
		return detection{format: jsonFormatKeys[key], looks: fmt.Sprintf("a JSON object with key %q", key)}
	}
	if len(body) > 0 && body[0] == '[' {
		return detection{looks: "a JSON array"}
	}
	for _, spec := range formats {
		if spec.sniff != nil {
			if det, ok := spec.sniff(head); ok {
				return det
			}
		}
	}
	if isHTML(body) {
		return detection{looks: "an HTML page: give the dump it was drawn from, or the JSON of analyze --format json"}
	}
	if len(bytes.Trim(head, "\x00")) == 0 {
		return detection{nul: true, looks: fmt.Sprintf("the first %d bytes are NUL (a file a crash or a full disk left?)", len(head))}
	}
	if len(head) > 8 {
		head = head[:8]
	}
	return detection{looks: fmt.Sprintf("content starting with bytes % x", head)}
}

// isHTML reports whether body starts as an HTML document does: a doctype
// or an html element, in any case.
func isHTML(body []byte) bool {
	for _, p := range []string{"<!doctype html", "<html"} {
		if len(body) >= len(p) && strings.EqualFold(string(body[:len(p)]), p) {
			return true
		}
	}
	return false
}

// linesMode reports whether OTLP JSON content is JSON lines (every line a
// complete document, as the Collector writes) rather than one document
// spread over lines: its first non-blank line is a complete JSON value, or
// longer than the read buffer (no pretty-printer writes such a first line).
func linesMode(head []byte) bool {
	body := bytes.TrimPrefix(head, utf8BOM)
	body = bytes.TrimLeft(body, " \t\r\n")
	nl := bytes.IndexByte(body, '\n')
	if nl < 0 {
		if len(body) >= headBytes {
			return true
		}
		return jsonValid(body)
	}
	return jsonValid(bytes.TrimRight(body[:nl], " \t\r"))
}

// firstFormatKey scans the top-level keys of the JSON object at the start of
// b (as far as b goes) for one that decides the format.
func firstFormatKey(b []byte) (string, bool) {
	key, ok, _ := scanFormatKey(b)
	return key, ok
}

// scanFormatKey is firstFormatKey, and says when it found no key because
// b ended before the object did (cut): more of the input could hold one.
func scanFormatKey(b []byte) (key string, ok, cut bool) {
	sc := jsonScan{b: b, i: 1}
	for {
		sc.ws()
		if !sc.more() || sc.b[sc.i] != '"' {
			return "", false, !sc.more()
		}
		start := sc.i + 1
		if !sc.skipStr() {
			return "", false, true // skipStr fails only at the end of b
		}
		if _, ok := jsonFormatKeys[string(sc.b[start:sc.i-1])]; ok { // no copy made for the lookup
			return string(sc.b[start : sc.i-1]), true, false
		}
		sc.ws()
		if !sc.more() || sc.b[sc.i] != ':' {
			return "", false, !sc.more()
		}
		sc.i++
		if !sc.skipValue() {
			return "", false, !sc.more()
		}
		sc.ws()
		if !sc.more() || sc.b[sc.i] != ',' {
			return "", false, !sc.more()
		}
		sc.i++
	}
}

// jsonScan is a minimal JSON tokenizer over a possibly cut-off buffer, for
// detection only: it never allocates more than a key and stops at the end
// of the buffer.
type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) more() bool { return s.i < len(s.b) }

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// skipStr skips a string starting at the opening quote (escapes are not
// decoded: keys that matter have none), copying nothing: a value's string
// may be as long as the buffer. It fails only when the buffer ends inside
// the string, and then leaves the scan at the end of the buffer.
func (s *jsonScan) skipStr() bool {
	for j := s.i + 1; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return true
		}
	}
	s.i = len(s.b)
	return false
}

// skipValue skips one value of any kind, counting nesting outside strings.
func (s *jsonScan) skipValue() bool {
	s.ws()
	if !s.more() {
		return false
	}
	depth := 0
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch c {
		case '"':
			if !s.skipStr() {
				return false
			}
			if depth == 0 {
				return true
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return false
			}
			if depth == 0 {
				s.i++
				return true
			}
		case ',':
			if depth == 0 {
				return true
			}
		}
		s.i++
	}
	return false
}
