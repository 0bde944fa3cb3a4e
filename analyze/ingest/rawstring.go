package ingest

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Strings that are not valid UTF-8. The OTLP JSON readers (the projection
// decoder and pdata's) keep a string's bytes as they are, so two pool keys
// that differ only in an invalid byte stay two keys. encoding/json, which
// the Jaeger and Tempo readers decode with, would put U+FFFD in place of
// each invalid byte and merge them; these helpers let those readers keep
// the bytes too. An escaped lone UTF-16 surrogate (\uD800 without its
// pair) has no bytes to keep: every reader reads it as U+FFFD, and
// loneSurrogates counts them so the input can say so (fileState.noteLone)
// and the analysis can tell that a pool scope or key holding U+FFFD may be
// two read as one (Input.LoneSurrogates).

// rawByteRune is the first of the 128 private-use runes that stand for
// the bytes 0x80-0xFF while encoding/json decodes a record (protectBytes).
const rawByteRune = 0x10FF80

// rawByteLead is how rawByteRune and the 127 runes after it start in
// UTF-8: F4 8F BE or F4 8F BF.
var rawByteLead = [][]byte{{0xF4, 0x8F, 0xBE}, {0xF4, 0x8F, 0xBF}}

// protectBytes returns data with each byte that is not part of valid UTF-8
// replaced by the private-use rune that stands for it, which encoding/json
// keeps, and true; restoreBytes turns them back. Valid UTF-8, or data that
// holds one of those runes already (so could not be told apart), is
// returned as it is, with false.
func protectBytes(data []byte) ([]byte, bool) {
	if utf8.Valid(data) {
		return data, false
	}
	for _, lead := range rawByteLead {
		if bytes.Contains(data, lead) {
			return data, false
		}
	}
	out := make([]byte, 0, len(data)+len(data)/8)
	for len(data) > 0 {
		r, n := utf8.DecodeRune(data)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, rawByteRune+rune(data[0]-0x80))
		} else {
			out = append(out, data[:n]...)
		}
		data = data[n:]
	}
	return out, true
}

// restoreBytes turns the runes protectBytes wrote back into the bytes
// they stand for. It returns b itself when it holds none.
func restoreBytes(b []byte) []byte {
	if !bytes.Contains(b, rawByteLead[0]) && !bytes.Contains(b, rawByteLead[1]) {
		return b
	}
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r >= rawByteRune && r <= utf8.MaxRune && n == 4 {
			out = append(out, byte(0x80+r-rawByteRune))
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}

// jsonStringBytes decodes the JSON string literal raw (as encoding/json
// validated it) keeping the bytes that are not valid UTF-8 as they are. It
// reports false when raw is not a string literal.
func jsonStringBytes(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	p, protected := protectBytes(raw)
	var s string
	if json.Unmarshal(p, &s) != nil {
		return "", false
	}
	if protected {
		s = string(restoreBytes([]byte(s)))
	}
	return s, true
}

// loneNote is what a decoder saw of escaped lone surrogates in a record:
// how many, and the record's offset (fileState.noteLone).
type loneNote struct {
	n  int
	at int64
}

// noteLoneSurrogates returns the loneNote of record r.
func noteLoneSurrogates(r rec) loneNote {
	return loneNote{n: loneSurrogates(r.data), at: r.off}
}

// loneSurrogates counts the escapes of a lone UTF-16 surrogate in data (a
// JSON text): \uD800-\uDBFF not followed by an escape of \uDC00-\uDFFF,
// or \uDC00-\uDFFF not after one. An escaped backslash before a u is not
// an escape.
func loneSurrogates(data []byte) int {
	n := 0
	for i := 0; ; {
		k := bytes.Index(data[i:], []byte(`\u`))
		if k < 0 {
			return n
		}
		i += k
		if escapedBackslash(data, i) {
			i += 2
			continue
		}
		hi, ok := hex4(data, i+2)
		switch {
		case !ok || hi < 0xD800 || hi > 0xDFFF:
			i += 2
		case hi <= 0xDBFF && bytes.HasPrefix(data[i+6:], []byte(`\u`)) && isLowSurrogate(data, i+8):
			i += 12
		default:
			n++
			i += 6
		}
	}
}

// escapedBackslash reports whether the backslash at data[i] is the second
// of an escape (an odd run of backslashes ends before it).
func escapedBackslash(data []byte, i int) bool {
	run := 0
	for j := i - 1; j >= 0 && data[j] == '\\'; j-- {
		run++
	}
	return run%2 == 1
}

// isLowSurrogate reports whether data[i:] starts with 4 hex digits of
// DC00-DFFF.
func isLowSurrogate(data []byte, i int) bool {
	lo, ok := hex4(data, i)
	return ok && lo >= 0xDC00 && lo <= 0xDFFF
}

// hex4 reads 4 hex digits at data[i:].
func hex4(data []byte, i int) (rune, bool) {
	if i+4 > len(data) {
		return 0, false
	}
	var v rune
	for _, c := range data[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}
