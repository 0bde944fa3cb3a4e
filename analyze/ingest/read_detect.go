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
}

// detect classifies an input from its first bytes: a JSON object by its
// first deciding top-level key (formatSpec.jsonKeys), a binary format by
// its sniffer (formatSpec.sniff). It never reads past head.
func detect(head []byte) detection {
	body := bytes.TrimPrefix(head, utf8BOM)
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) > 0 && body[0] == '{' {
		key, ok := firstFormatKey(body)
		if !ok {
			return detection{looks: "a JSON object with none of the keys resourceSpans, data, batches or trace near its start"}
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
	sc := jsonScan{b: b, i: 1}
	for {
		sc.ws()
		if !sc.more() || sc.b[sc.i] != '"' {
			return "", false
		}
		key, ok := sc.str()
		if !ok {
			return "", false
		}
		if _, ok := jsonFormatKeys[key]; ok {
			return key, true
		}
		sc.ws()
		if !sc.more() || sc.b[sc.i] != ':' {
			return "", false
		}
		sc.i++
		if !sc.skipValue() {
			return "", false
		}
		sc.ws()
		if !sc.more() || sc.b[sc.i] != ',' {
			return "", false
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

// str reads a string starting at the opening quote, returning its raw
// content (escapes are kept: keys that matter have none).
func (s *jsonScan) str() (string, bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch s.b[j] {
		case '\\':
			j++
		case '"':
			s.i = j + 1
			return string(s.b[start:j]), true
		}
	}
	return "", false
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
			if _, ok := s.str(); !ok {
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
