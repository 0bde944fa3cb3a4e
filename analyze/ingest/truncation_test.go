package ingest

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// truncationLines are the OTLP JSON lines cut at every length by
// TestFastOTLPJSONHandlesEveryTruncation: each spelling the fast path
// takes, with whitespace between tokens, escapes, each scalar value type
// and a double, so a cut lands inside each kind of token
// and between each pair of tokens.
func truncationLines(t *testing.T) []string {
	spaced := strings.ReplaceAll(strings.ReplaceAll(otlpCamelNumbers, `":`, `" : `), `,"`, ` , "`)
	lines := []string{
		otlpCamelNumbers, otlpSnakeNames, spaced,
		`{"resourceSpans":[{"scopeSpans":[{"scope":{"name":"a\"b\u00e9"},"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","traceState":"k=\\v","attributes":[{"key":"jsonrpc.request.id","value":{"stringValue":"\n"}},{"key":"ratio","value":{"doubleValue":-1.25}},{"key":"mcp.tool.name","value":{"stringValue":"t"}}]}]}]}]}`,
		`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","attributes":[{"value":{"intValue":"0042"},"key":"plugin.mcp.attempt"}],"status":{}}]}]}]}`,
	}
	// A sample of the committed dumps' lines that the fast path takes: the
	// shapes a real exporter writes (every eighth, to bound the test's time).
	for i, l := range fastSeedLines(t) {
		if i%8 == 0 && len(l) < 6<<10 && checkFastMatchesPdata(t, l) {
			lines = append(lines, string(l))
		}
	}
	return lines
}

// TestFastOTLPJSONHandlesEveryTruncation cuts each line at every length
// (and every length with a byte of padding after the cut, so a bound
// that reads one byte past the end shows either way): the fast path must
// never panic or read past its input, and what it accepts pdata must
// accept and read alike (checkFastMatchesPdata). Every cut of a JSON
// object is malformed, so the fast path must fall back on each; the whole
// line it must take.
func TestFastOTLPJSONHandlesEveryTruncation(t *testing.T) {
	for li, line := range truncationLines(t) {
		if !checkFastMatchesPdata(t, []byte(line)) {
			t.Fatalf("line %d: the fast path fell back on the whole line:\n%s", li, line)
		}
		for n := 0; n < len(line); n++ {
			cut := []byte(line[:n])
			if checkFastMatchesPdata(t, cut) {
				t.Fatalf("line %d cut at %d: the fast path took a truncated object:\n%s", li, n, cut)
			}
			// The same cut inside a larger buffer: a bound off by one
			// reads the byte past the end and may accept.
			padded := append(append(make([]byte, 0, n+1), cut...), '}')[:n]
			if checkFastMatchesPdata(t, padded) {
				t.Fatalf("line %d cut at %d in a larger buffer: the fast path took a truncated object:\n%s", li, n, padded)
			}
		}
	}
}

// TestFastOTLPProtoHandlesEveryTruncation cuts each protobuf record (the
// committed dumps' records and the edge-case shapes) at every length: the
// projection decoder must never panic, and what it accepts pdata must
// accept and read alike. A protobuf cut at a field boundary is a valid
// shorter message, so some cuts are taken: those are checked against
// pdata; every cut inside a field must fall back.
func TestFastOTLPProtoHandlesEveryTruncation(t *testing.T) {
	recs := [][]byte{
		request(baseResource, baseSpan()),
		request(baseResource, baseSpan(pb(nil).bytes(9, intAttr("plugin.mcp.attempt", -2)).bytes(9, boolAttr("plugin.mcp.cache_hit", true)))),
		request(baseResource.varint(99, 1), baseSpan(pb(nil).varint(99, 5).fixed32(98, 1).fixed64(97, 7).bytes(96, []byte("x")))),
		request(baseResource, baseSpan(pb(nil).bytes(9, pb(nil).str(1, "ratio").bytes(2, pb(nil).fixed64(4, 1))))),
	}
	// A sample of the committed dumps' records, to bound the test's time.
	for i, r := range committedProtoRecords(t) {
		if i%3 == 0 && len(r) < 4<<10 {
			recs = append(recs, r)
		}
	}
	for ri, rec := range recs {
		if !checkFastProtoMatchesPdata(t, rec) {
			t.Fatalf("record %d: the projection decoder fell back on the whole record", ri)
		}
		for n := 0; n < len(rec); n++ {
			checkFastProtoMatchesPdata(t, rec[:n:n])
			checkFastProtoMatchesPdata(t, append(append(make([]byte, 0, n+1), rec[:n]...), 0x0a)[:n])
		}
	}
}

// TestProtoFieldIteratorReadsExactlyItsBytes pins the one-byte fast path
// of the field iterator at its bounds: a length-delimited field that ends
// exactly at the end of the message is read, one that claims a byte more
// is bad; a length of 127 (the largest one-byte length) takes the fast
// path and 128 the slow one, with the same result.
func TestProtoFieldIteratorReadsExactlyItsBytes(t *testing.T) {
	field := func(n int) []byte {
		return protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), make([]byte, n))
	}
	for _, c := range []struct {
		name string
		msg  []byte
		want int // bytes of the field's value; -1: bad
	}{
		{"empty value", field(0), 0},
		{"value ends exactly at the end", field(5), 5},
		{"the largest one-byte length", field(127), 127},
		{"the smallest two-byte length", field(128), 128},
		{"a length one past the end", field(5)[:6], -1},
		{"a two-byte length one past the end", field(128)[:130], -1},
	} {
		it := fieldIter{b: c.msg}
		got := -1
		if it.next() && it.f.num == 1 && it.f.typ == protowire.BytesType {
			got = len(it.f.b)
		}
		if got != c.want || (c.want < 0) != it.bad {
			t.Errorf("%s: read %d bytes (bad %v), want %d", c.name, got, it.bad, c.want)
		}
		if c.want >= 0 && (it.next() || it.bad) {
			t.Errorf("%s: a second field read past the end (bad %v)", c.name, it.bad)
		}
	}
}
