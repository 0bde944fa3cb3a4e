package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// The tests of this file pin edges of analyze/ingest that mutants passed
// every test on: the survivors of stop 31's last sample, and those of the
// samples drawn at stop 32 (TESTING.md, "Stop 32"). Each names the mutant
// it kills.

// oneSpanLine is an OTLP JSON line of one span with the given attributes.
func oneSpanLine(attrs string) []byte {
	return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"1112131415161718","attributes":[` +
		attrs + `]}]}]}]}`)
}

// TestFastOTLPJSONLeavesAttributesItCannotHoldToPdata pins the fast path's
// tests on one attribute: a key cut by a byte a key does not hold
// unescaped (compactAttr stops there and must not read on past it: the
// bytes after the backslash here look like the rest of a compact
// attribute), and a kept key whose value is empty or missing (a batch
// holds a string, a bool or an int, nothing else). pdata refuses the first
// and reads the others; either way the fast path leaves the line to it.
func TestFastOTLPJSONLeavesAttributesItCannotHoldToPdata(t *testing.T) {
	for _, tc := range []struct {
		name       string
		attrs      string
		pdataReads bool
	}{
		// fastjson.go:575 `b[i+n] != '"'` dropped: the key read as "x".
		{"a key cut by an invalid escape", `{"key":"x\,"value":{"stringValue":"v"}}`, false},
		{"a key cut by a control byte", "{\"key\":\"x\x01,\"value\":{\"stringValue\":\"v\"}}", false},
		// fastjson.go:518 `val.typ == pcommon.ValueTypeEmpty` dropped.
		{"a kept key with an empty value", `{"key":"x","value":{}}`, true},
		{"a kept key without a value", `{"key":"x"}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := oneSpanLine(tc.attrs)
			if _, err := unmarshalOTLPJSON(line); (err == nil) != tc.pdataReads {
				t.Fatalf("pdata reads the line: %v, the case wants %v: it tests nothing:\n%s", err == nil, tc.pdataReads, line)
			}
			if b, ok := decodeFastOTLP(line, newKeepSet(testKeep)); ok {
				t.Errorf("the fast path took the line (%d attributes kept), it must leave it to pdata:\n%s", len(b.Attrs), line)
			}
		})
	}
}

// TestFastOTLPJSONTakesEveryDigitOfASkippedDouble pins doubleLit's digit
// range at both ends (fastjson.go:690 `<= '9'` → `< '9'` left every double
// with a 9 in its fraction to pdata): a skipped double value holding each
// digit is in the common shape, and the fast path reads it as pdata does.
func TestFastOTLPJSONTakesEveryDigitOfASkippedDouble(t *testing.T) {
	for _, v := range []string{"0.9", "-1234567890.0123456789", "9.0", "0.0"} {
		line := oneSpanLine(`{"key":"ratio","value":{"doubleValue":` + v + `}},{"key":"x","value":{"intValue":"1"}}`)
		if !checkFastMatchesPdata(t, line) {
			t.Errorf("the fast path fell back on a skipped double %s:\n%s", v, line)
		}
	}
}

// TestFastOTLPProtoLeavesMoreMalformedFieldsToPdata extends
// TestFastOTLPProtoLeavesMalformedFieldsToPdata with the wire-level edges
// the fast paths test before they read a field: each record is one pdata
// refuses, and the projection decoder must leave it to pdata.
func TestFastOTLPProtoLeavesMoreMalformedFieldsToPdata(t *testing.T) {
	good := request(baseResource, baseSpan())
	for name, rec := range map[string][]byte{
		// fastproto.go:155 `tag>>3 != 0` negated: the one-byte path taken
		// for field 0 alone, which protowire refuses.
		"field number zero, length-delimited": append(append([]byte{}, good...), 0x02, 0x00),
		// fastproto.go:335 the kind's wire type dropped: a fixed32 1 read
		// as the kind 1.
		"a span kind as fixed32": request(baseResource, baseSpan(pb(nil).fixed32(fieldSpanKind, 1))),
		"a span kind as bytes":   request(baseResource, baseSpan(pb(nil).bytes(fieldSpanKind, nil))),
		// fastproto.go:450 `&& val == nil` dropped: compactKV kept the
		// second of two values and never read the first, malformed.
		"two values, the first malformed": request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes,
			pb(nil).bytes(2, []byte{0x0a, 0x05, 'a'}).bytes(2, pb(nil).str(1, "v"))))),
	} {
		t.Run(name, func(t *testing.T) {
			var u ptrace.ProtoUnmarshaler
			if _, err := u.UnmarshalTraces(rec); err == nil {
				t.Fatalf("pdata reads the record: the case tests nothing: % x", rec)
			}
			if b, ok := decodeFastProto(rec, newKeepSet(testKeep)); ok {
				putBatch(b)
				t.Errorf("the projection decoder took a record pdata refuses: % x", rec)
			}
		})
	}
}

// TestAGlobUnderAFileIsAPathError pins that only a path that does not
// exist is expanded as a glob (read.go:224 `errors.Is(err,
// fs.ErrNotExist) &&` dropped): a pattern under a regular file cannot be
// stat'ed for another reason, which is the error, not "no match".
func TestAGlobUnderAFileIsAPathError(t *testing.T) {
	file := writeInputFile(t, t.TempDir(), "dump.jsonl", []byte(otlpLine(1)))
	_, _, err := readPaths(t, []string{filepath.Join(file, "*.jsonl")}, ReadOptions{})
	var re *ReadError
	if !errors.As(err, &re) || re.Expected != "a file, a directory, a glob or - for stdin" || errors.Is(err, ErrNoInput) {
		t.Fatalf("err %v, want a ReadError expecting a file, a directory, a glob or - (the stat's error), not ErrNoInput", err)
	}
}

// TestADotNamedDirectoryIsReadWhenNamed pins that the walk skips dot
// entries under the directory given, never the directory itself
// (read.go:279 `path != root &&` dropped: a directory given as ".dumps",
// or ".", read as empty).
func TestADotNamedDirectoryIsReadWhenNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".dumps")
	writeInputFile(t, dir, "a.jsonl", []byte(otlpLine(1)))
	writeInputFile(t, dir, ".b.jsonl", []byte(otlpLine(2)))
	writeInputFile(t, dir, ".c/d.jsonl", []byte(otlpLine(3)))
	inputs, _, err := readPaths(t, []string{dir}, ReadOptions{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) != 1 || inputs[0].Path != filepath.Join(dir, "a.jsonl") || inputs[0].Spans != 1 {
		t.Fatalf("inputs %+v, want %s alone with its one span", inputs, filepath.Join(dir, "a.jsonl"))
	}
}

// bigDump is the prod-cold-starts scenario written by write and repeated
// past 2 MiB, past the stream's head and its 1 MiB buffer, so that a
// compressed stream failing at its end fails in a read of the format's
// reader, not in the peek at the head.
func bigDump(write tracegen.WriteFunc) (data []byte, spans int) { return dumpOf(write, 2<<20) }

// dumpOf is the prod-cold-starts scenario written by write and repeated
// past size bytes.
func dumpOf(write tracegen.WriteFunc, size int) (data []byte, spans int) {
	prod := tracegen.ProdColdStarts()
	one := tracegen.MustEncode(write, prod)
	n := size/len(one) + 1
	return bytes.Repeat(one, n), n * prod.SpanCount()
}

// TestACompressedStreamFailingPastItsHeadIsBlamed pins that a gzip stream
// failing after the head (its checksum wrong, or cut) is reported as the
// stream's failure at any length and in any format inside it: stream.Read
// records the first error (read_compress.go:174 `s.err == nil` negated:
// never recorded, the failure blamed on the line), and problem blames the
// stream for a cut record when the stream itself ended early
// (read_compress.go:204 the ErrTruncated test dropped: a cut gzip stream
// of protobuf records read as a cut record of an intact file).
func TestACompressedStreamFailingPastItsHeadIsBlamed(t *testing.T) {
	for _, format := range []struct {
		name  string
		write tracegen.WriteFunc
	}{{"json lines", tracegen.WriteOTLPJSONLines}, {"protobuf", tracegen.WriteOTLPProto}} {
		data, spans := bigDump(format.write)
		gz := tracegen.GzipBytes(data)
		for _, tc := range []struct {
			name, msg string
			data      []byte
			is        error
		}{
			{"a wrong checksum", "expected a valid gzip stream: gzip: invalid checksum", tracegen.CorruptGzipTrailer(gz), nil},
			{"cut in the middle", "expected a valid gzip stream: truncated: the gzip stream ends early", gz[:len(gz)/2], ErrTruncated},
		} {
			t.Run(format.name+", "+tc.name, func(t *testing.T) {
				_, _, err := readBytes(t, tc.data, ReadOptions{Strict: true})
				var re *ReadError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.msg) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Fatalf("err %v, want a ReadError containing %q", err, tc.msg)
				}
				if re.Offset <= headBytes {
					t.Errorf("the failure is placed at byte %d, inside the head: the case tests the head's peek, not the read", re.Offset)
				}
				inputs, batches, err := readBytes(t, tc.data, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got := 0
				for _, b := range batches {
					got += b.SpanCount()
				}
				if !inputs[0].Partial || got == 0 || got > spans || !strings.Contains(strings.Join(inputs[0].Warnings, "\n"), tc.msg) {
					t.Errorf("non-strict: %d of %d spans kept, partial %v, warnings %q; want the spans before the failure and a warning containing %q",
						got, spans, inputs[0].Partial, inputs[0].Warnings, tc.msg)
				}
			})
		}
	}
}

// zstdFrame compresses data into one frame; size false leaves the frame's
// content size out (a streaming writer's frame), with the given window.
func zstdFrame(t *testing.T, data []byte, size bool, window int) []byte {
	t.Helper()
	if size {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(data, nil)
	}
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithSingleSegment(false), zstd.WithWindowSize(window))
	if err != nil {
		t.Fatal(err)
	}
	// Flushed before Close: the header goes out before the size is
	// known, so it holds the window and no size (on Close alone the
	// writer would know the size, write it and shrink the window).
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.HasFCS || h.WindowSize != uint64(window) {
		t.Fatalf("the frame's header (%v) says size %v, window %d; want no size and the window %d", err, h.HasFCS, h.WindowSize, window)
	}
	return buf.Bytes()
}

// TestAZstdRecordDecompressesUpToTheRecordCap pins decompress's bounds: a
// frame that says its size is read when the size is exactly the record
// cap, refused one byte past it; so is a frame that does not say it,
// whatever window it asks for (its history is the buffer it is decoded
// into, so a large window costs nothing), and whether it fits the first
// buffer tried or only the cap.
func TestAZstdRecordDecompressesUpToTheRecordCap(t *testing.T) {
	const small = 64 << 10
	rec := bytes.Repeat([]byte("0123456789abcdef"), small/16)
	big := make([]byte, 4<<20) // compresses thousands of times: the first buffer tried is too small
	for i := range big {
		big[i] = byte(i / 1024)
	}
	for _, tc := range []struct {
		name   string
		cap    int64
		frame  []byte
		want   []byte
		refuse bool
	}{
		{"a sized frame of exactly the cap", small, zstdFrame(t, rec, true, 0), rec, false},
		{"a sized frame a byte past the cap", small - 1, zstdFrame(t, rec, true, 0), rec, true},
		{"an unsized frame of exactly the cap", small, zstdFrame(t, rec, false, 4<<20), rec, false},
		{"an unsized frame in a 16 MiB window, cap 64 KiB", small, zstdFrame(t, rec, false, 16<<20), rec, false},
		{"an unsized frame past the cap", small - 1, zstdFrame(t, rec, false, 1<<20), rec, true},
		{"an unsized frame that outgrows the first buffer, exactly the cap", 4 << 20, zstdFrame(t, big, false, 8<<20), big, false},
		{"an unsized frame that outgrows the first buffer, a byte past the cap", 4<<20 - 1, zstdFrame(t, big, false, 8<<20), big, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := newFramedReader(&stream{path: "-"}, FormatAuto, true, 1, 0, tc.cap)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.zstd.Close()
			got, _, err := fr.decompress(1, tc.frame)
			switch {
			case tc.refuse && err == nil:
				t.Errorf("decompressed %d bytes, want an error (the record cap is %d)", len(got), tc.cap)
			case !tc.refuse && err != nil:
				t.Errorf("err %v, want the %d bytes (the record cap is %d)", err, len(tc.want), tc.cap)
			case !tc.refuse && !bytes.Equal(got, tc.want):
				t.Errorf("decompressed %d bytes, not the record's %d", len(got), len(tc.want))
			}
		})
	}
}

// TestPathKeyQuotesAllButPlainNames pins pathKey's name test at each
// range's edges (depth.go:226: each upper bound dropped, a key holding
// ':', '[', '{' or a byte past ASCII written bare in a place): a key is
// written as is when it is 1 to 40 letters, digits and '_', quoted else.
func TestPathKeyQuotesAllButPlainNames(t *testing.T) {
	plain := []string{"a", "z", "A", "Z", "0", "9", "_", "service_name2", strings.Repeat("k", 40)}
	quoted := []string{"", "/", ":", "@", "[", "`", "{", "~", "-", ".", " ", "é", "a.b", "x:", strings.Repeat("k", 41)}
	for _, k := range plain {
		if got := pathKey(k); got != k {
			t.Errorf("pathKey(%q) = %s, want it bare", k, got)
		}
	}
	for _, k := range quoted {
		if got, want := pathKey(k), QuoteText(k); got != want {
			t.Errorf("pathKey(%q) = %s, want it quoted, %s", k, got, want)
		}
	}
}

// TestAWalkedDumpWithNothingReadableFailsTheRead pins that a walked file
// is skipped only for not being a dump or being empty (read.go:146 the
// errors.Is tests dropped: any failure of a walked file skipped as "not a
// trace dump"): a dump whose only content is bad fails the read,
// non-strict too, naming its place.
func TestAWalkedDumpWithNothingReadableFailsTheRead(t *testing.T) {
	dir := t.TempDir()
	writeInputFile(t, dir, "a.jsonl", []byte(otlpLine(1)))
	bad := writeInputFile(t, dir, "b.jsonl", []byte("{\"resourceSpans\": [oops]}\n"))
	_, _, err := readPaths(t, []string{dir}, ReadOptions{})
	var re *ReadError
	if !errors.As(err, &re) || re.Path != bad || re.Offset != 19 || errors.Is(err, ErrNotTraceDump) {
		t.Fatalf("err %v, want the bad value of %s (byte 19), not a skip", err, bad)
	}
}

// TestJaegerErrorTagYieldsToAnExplicitStatus pins the error tag's rule
// (read_jaeger.go:235 the status test dropped: error=true overriding
// otel.status_code=OK) and the parent's (read_jaeger.go:283 the trace test
// or the CHILD_OF test dropped: a reference into another trace, or a
// FOLLOWS_FROM, taken as the parent): the error tag makes a span an error
// only when no status says otherwise, and is kept as an attribute when it
// does not; the parent is the first CHILD_OF reference in the span's own
// trace, any other reference is a link.
func TestJaegerErrorTagYieldsToAnExplicitStatus(t *testing.T) {
	doc := `{"data":[{"traceID":"abc","spans":[
 {"traceID":"abc","spanID":"1","operationName":"ok","startTime":1,"duration":1,
  "tags":[{"key":"error","type":"bool","value":true},{"key":"otel.status_code","type":"string","value":"OK"}],
  "references":[{"refType":"CHILD_OF","traceID":"def","spanID":"9"},{"refType":"CHILD_OF","traceID":"abc","spanID":"2"}]},
 {"traceID":"abc","spanID":"2","operationName":"error","startTime":1,"duration":1,
  "tags":[{"key":"otel.status_code","type":"string","value":"ERROR"},{"key":"error","type":"bool","value":true}],
  "references":[{"refType":"CHILD_OF","traceID":"def","spanID":"9"}]},
 {"traceID":"abc","spanID":"3","operationName":"unset","startTime":1,"duration":1,
  "tags":[{"key":"error","type":"bool","value":true}],
  "references":[{"refType":"FOLLOWS_FROM","traceID":"abc","spanID":"1"}]}
],"processes":{}}]}`
	_, batches, err := readBytes(t, []byte(doc), ReadOptions{Strict: true, Format: FormatJaeger})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ok":    "status=Ok parent=0000000000000002 attrs={error=Bool:true} links=1",
		"error": "status=Error parent= attrs={} links=1",
		"unset": "status=Error parent= attrs={} links=1",
	}
	n := 0
	for _, td := range batches {
		forEachTestSpan(td, func(sp ptrace.Span) {
			n++
			got := fmt.Sprintf("status=%s parent=%s attrs=%s links=%d", sp.Status().Code(), sp.ParentSpanID(), canonMap(sp.Attributes()), sp.Links().Len())
			if got != want[sp.Name()] {
				t.Errorf("span %q: %s, want %s", sp.Name(), got, want[sp.Name()])
			}
		})
	}
	if n != len(want) {
		t.Errorf("read %d spans, want %d", n, len(want))
	}
}

// TestAJSONLineOfExactlyTheCapIsRead pins the line cap of JSON lines at
// its boundary, where a block ends (read_otlpjson.go:69 `>` → `>=`), and
// wherever the line starts: a block holds the cap and one byte, so with a
// first line and blank lines filling the first block, the second holds a
// newline and exactly the cap's worth of the long line, without its own
// newline. A line of exactly the cap is read, one a byte longer is cut.
// (Before stop 32 the blocks read to their buffer's 2 MiB whatever the
// cap: a line of up to 2 MiB over a 1 MiB cap was read or cut depending
// on where it started.)
func TestAJSONLineOfExactlyTheCapIsRead(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 << 20, Strict: true}
	lineCap := opts.budget().recordCap()
	if lineCap != 1<<20 {
		t.Fatalf("the record cap of a 16 MiB budget is %d, the test expects 1 MiB", lineCap)
	}
	line := func(n int64) []byte {
		short := strings.TrimSuffix(otlpLineWithValue(1, "pad", `{"stringValue":""}`), "\n")
		pad := int(n) - len(short)
		return []byte(strings.Replace(short, `{"stringValue":""}`, `{"stringValue":"`+strings.Repeat("a", pad)+`"}`, 1))
	}
	first := []byte(otlpLine(2))
	for _, tc := range []struct {
		name string
		size int64
		read bool
	}{{"exactly the cap", lineCap, true}, {"a byte past the cap", lineCap + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			l := line(tc.size)
			if int64(len(l)) != tc.size {
				t.Fatalf("the line is %d bytes, want %d", len(l), tc.size)
			}
			data := append(append([]byte{}, first...), bytes.Repeat([]byte("\n"), int(lineCap)+1-len(first))...)
			data = append(append(append(data, '\n'), l...), '\n')
			data = append(data, otlpLine(3)...)
			if !linesMode(data[:headBytes]) {
				t.Fatal("the input is not read as JSON lines: the case tests nothing")
			}
			for _, name := range []string{"-", "dump.jsonl"} {
				var inputs []Input
				var err error
				if name == "-" {
					inputs, _, err = readBytes(t, data, opts)
				} else {
					inputs, _, err = readPaths(t, []string{writeInputFile(t, t.TempDir(), name, data)}, opts)
				}
				switch {
				case tc.read && (err != nil || inputs[0].Spans != 3):
					t.Errorf("%s: err %v, inputs %+v; want the three lines read", name, err, inputs)
				case !tc.read && !errors.Is(err, ErrRecordTooLarge):
					t.Errorf("%s: err %v; want the line cut (ErrRecordTooLarge)", name, err)
				}
			}
		})
	}
}

// TestZeroPaddingAfterTheLastRecordIsSkipped pins skipZeroWords' bound at
// the end of the input (read_compress.go:227 `k+8 <= len(buf)` dropped: a
// panic on the padding's last word): zero words after the last record are
// empty records, whatever their count.
func TestZeroPaddingAfterTheLastRecordIsSkipped(t *testing.T) {
	rec := framed(request(baseResource, baseSpan()))
	for _, words := range []int{1, 2, 3, 5} {
		data := append(append([]byte{}, rec...), make([]byte, 4*words)...)
		inputs, _, err := readBytes(t, data, ReadOptions{Strict: true})
		if err != nil || inputs[0].Spans != 1 || len(inputs[0].Warnings) != 0 {
			t.Errorf("%d zero words after the record: err %v, inputs %+v; want its span read, no warning", words, err, inputs)
		}
	}
}

// TestAnUnknownMembersScalarEndsAtWhiteSpace pins skipJSON's delimiters
// (read_jsondoc.go:425 `>= 0` → `> 0`: the space, first of them, read as
// part of the scalar): a skipped number ends at white space, so a second
// number after it is the syntax error it is, where it stands, whether the
// member comes before the records or after.
func TestAnUnknownMembersScalarEndsAtWhiteSpace(t *testing.T) {
	rs := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`
	for _, doc := range []string{
		"{\"resourceSpans\": [\n" + rs + "],\n\"x\": 12 345, \"y\": 1}\n",
		"{\"x\": 12 345,\n\"resourceSpans\": [\n" + rs + "]}\n",
	} {
		_, _, err := readBytes(t, []byte(doc), ReadOptions{Strict: true})
		var re *ReadError
		if !errors.As(err, &re) || re.Offset != int64(strings.Index(doc, "345")) || !strings.Contains(err.Error(), "expected valid JSON") {
			t.Errorf("err %v, want a syntax error at byte %d, the second number:\n%s", err, strings.Index(doc, "345"), doc)
		}
	}
}

// deepKVList is an attribute whose value nests depth key-value lists, each
// holding one entry whose value holds the next.
func deepKVList(depth int) pb {
	v := pb(nil).str(fieldValueString, "leaf")
	for range depth {
		v = pb(nil).bytes(fieldValueKVList, pb(nil).bytes(fieldKVListValues, pb(nil).str(fieldKVKey, "k").bytes(fieldKVValue, v)))
	}
	return pb(nil).str(fieldKVKey, "deep").bytes(fieldKVValue, v)
}

// TestAProtobufKVListNestedPastTheLimitNamesItsPlace pins protoDepth's
// count through key-value lists (depth.go: `&& lvl != pbKVList` dropped:
// each list's entry counted as an attribute, from 0 again, so that the
// walk never passed the limit and pdata's bare "exceeded max recursion
// depth" was the error): the value is cut at the place the walk names, in
// the value of the outermost attribute, and its span read.
func TestAProtobufKVListNestedPastTheLimitNamesItsPlace(t *testing.T) {
	rec := framed(request(baseResource, baseSpan(pb(nil).bytes(fieldSpanAttributes, deepKVList(60)))))
	inputs, tds, err := readBytes(t, rec, ReadOptions{Strict: true})
	want := `nested too deep in the value of attribute "deep", at resource_spans[0].scope_spans[0].spans[0].attributes[3].value.kvlist_value.values[0].value.kvlist_value.values[0]`
	if err != nil || len(tds) != 1 || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], want) {
		t.Fatalf("%d batches, %v, warnings %q; want the span and a warning saying %q", len(tds), err, inputs[0].Warnings, want)
	}
}

// TestRecordsBeforeAnOversizeRecordAreReadFirst pins the order around a
// protobuf record skipped for its size (read_otlpproto.go:239 the flush
// dropped: the skip's problem handed on before the records read ahead of
// it): in strict mode the records before it reach the sink before its
// error stops the read, as a bad record's would; non-strict, every other
// record is read, with one warning.
func TestRecordsBeforeAnOversizeRecordAreReadFirst(t *testing.T) {
	small := framed(request(baseResource, baseSpan()))
	data := append(append(append([]byte{}, small...), framed(bigAttrRecord(3<<20))...), small...)
	for _, strict := range []bool{true, false} {
		inputs, _, err := readBytes(t, data, ReadOptions{Strict: strict, MaxMemory: 16 << 20})
		wantSpans, wantErr := 2, false
		if strict {
			wantSpans, wantErr = 1, true
		}
		if inputs[0].Spans != wantSpans || (err != nil) != wantErr || (!strict && len(inputs[0].Warnings) != 1) ||
			(err != nil && !errors.Is(err, ErrRecordTooLarge)) {
			t.Errorf("strict %v: %d spans, err %v, warnings %q; want %d spans and the record too large (an error only when strict)",
				strict, inputs[0].Spans, err, inputs[0].Warnings, wantSpans)
		}
	}
}

// TestZstdRecordsExpandUpToExactlyTheRatioAndTheSlack pins the
// decompression bound on zstd records (read_otlpproto.go:323 `>` → `>=`):
// records that decompress to exactly ratio times their compressed bytes
// plus the slack are read; at a ratio whose bound is a byte less, the last
// record is over it and stops the read with ErrDecompressionLimit. The
// ratio is the quotient, nudged by an ulp or two until the bound is the
// total exactly, as decode computes it.
func TestZstdRecordsExpandUpToExactlyTheRatioAndTheSlack(t *testing.T) {
	rec := zstdFramed(t, bigAttrRecord(2<<20))
	var data []byte
	var in int64
	for range 9 {
		data = append(data, rec...)
		in += int64(len(rec) - 4) // the frame, without its length prefix
	}
	var u ptrace.ProtoUnmarshaler
	one, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := one.DecodeAll(rec[4:], nil)
	one.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.UnmarshalTraces(out); err != nil {
		t.Fatal(err)
	}
	total := 9 * int64(len(out))
	if total <= decompressionSlack {
		t.Fatalf("the records decompress to %d bytes, not past the slack", total)
	}
	exact := float64(total-decompressionSlack) / float64(in)
	for _, step := range []float64{0, math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)} {
		if float64(total) == exact*float64(in)+decompressionSlack {
			break
		}
		exact = math.Nextafter(exact, step)
	}
	if float64(total) != exact*float64(in)+decompressionSlack {
		t.Fatalf("no ratio makes the bound exactly %d bytes", total)
	}
	for _, tc := range []struct {
		name  string
		ratio float64
		limit bool
	}{{"exactly the bound", exact, false}, {"a byte under", float64(total-1-decompressionSlack) / float64(in), true}} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, _, err := readBytes(t, data, ReadOptions{Strict: true, Workers: 1, MaxMemory: 256 << 20, MaxDecompressionRatio: tc.ratio})
			if got := errors.Is(err, ErrDecompressionLimit); got != tc.limit || (!tc.limit && inputs[0].Spans != 9) {
				t.Errorf("ratio %v: err %v, %d spans; want the limit %v", tc.ratio, err, inputs[0].Spans, tc.limit)
			}
		})
	}
}

// TestALineWithSpansIsPdatasWhateverItSays pins when a line is normalised
// and decoded again (read_otlpjson.go:227 `td.SpanCount() > 0 ||` dropped:
// every line holding the word "instrumentation" re-encoded): only a line
// in which pdata found no spans may use the pre-1.0 keys; one with spans
// is pdata's read, byte for byte, even when a name or value says
// "instrumentation" (re-encoding would have replaced the invalid UTF-8
// pdata keeps).
func TestALineWithSpansIsPdatasWhateverItSays(t *testing.T) {
	line := "{\"resourceSpans\":[{\"scopeSpans\":[{\"scope\":{\"name\":\"opentelemetry-instrumentation\"},\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f10\",\"spanId\":\"1112131415161718\",\"name\":\"a\xffb\"}]}]}]}"
	td, err := unmarshalOTLPJSON([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if got := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Name(); got != "a\xffb" {
		t.Errorf("the span's name is %q, want pdata's %q", got, "a\xffb")
	}
}

// TestAReadErrorNamesOnlyTheKnownParts pins ReadError.Error's four tests
// at their edges (readerr.go:78 `e.Line > 0`, :82 `e.Offset >= 0`, :87,
// :91): line 0 and offset -1 are unknown and left out, offset 0 is byte 0.
func TestAReadErrorNamesOnlyTheKnownParts(t *testing.T) {
	cause := errors.New("boom")
	for _, tc := range []struct {
		e    ReadError
		want string
	}{
		{ReadError{Path: "d.jsonl", Line: 1, Offset: 0, Expected: "x", Err: cause}, "d.jsonl:1 (byte 0): expected x: boom"},
		{ReadError{Path: "d.jsonl", Line: 0, Offset: -1, Expected: "x", Err: cause}, "d.jsonl: expected x: boom"},
		{ReadError{Path: "d.jsonl", Line: 0, Offset: 7}, "d.jsonl (byte 7)"},
		{ReadError{Path: "-", Offset: -1, Err: cause}, "-: boom"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.e, got, tc.want)
		}
	}
}

// TestACausesLatin1LetterIsTheByteItNames pins causeText's rewriting of
// encoding/json's "invalid character" at the range's edges (readerr.go:108
// each bound and the closing quote's test dropped) and its clip at
// maxCauseBytes (readerr.go:113 `>` → `>=`, :115 the rune-start walk,
// down to nothing and no further).
func TestACausesLatin1LetterIsTheByteItNames(t *testing.T) {
	// A syntax error's message as encoding/json words it, around a
	// *json.SyntaxError as causeText finds it.
	syntax := func(msg string) error { return fmt.Errorf("%s%w", msg, &json.SyntaxError{}) }
	for _, tc := range []struct{ msg, want string }{
		{"invalid character '\u0080' looking", `invalid character '\x80' looking`},
		{"invalid character 'ÿ' looking", `invalid character '\xff' looking`},
		{"invalid character '\u007f' looking", `invalid character '\x7f' looking`}, // not rewritten: SafeText escapes DEL
		{"invalid character 'Ā' looking", "invalid character 'Ā' looking"},
		{"invalid character 'ÿ", `invalid character 'ÿ`},
		{"invalid character 'x' looking", "invalid character 'x' looking"},
	} {
		if got := causeText(syntax(tc.msg)); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%q: %q, want %q", tc.msg, got, tc.want)
		}
	}
	var v any
	if got := causeText(json.Unmarshal([]byte{'[', 0xe9}, &v)); !strings.Contains(got, `invalid character '\xe9'`) {
		t.Errorf("encoding/json's own error for the byte 0xe9: %q, want it to name \xe9", got)
	}
	for _, tc := range []struct {
		msg  string
		want string
	}{
		{strings.Repeat("a", maxCauseBytes), strings.Repeat("a", maxCauseBytes)},
		{strings.Repeat("a", maxCauseBytes+1), strings.Repeat("a", maxCauseBytes) + fmt.Sprintf("… (%d bytes)", maxCauseBytes+1)},
		// Nothing but continuation bytes: nothing before the cut is kept.
		{strings.Repeat("\x80", maxCauseBytes+1), fmt.Sprintf("… (%d bytes)", maxCauseBytes+1)},
		// A two-byte rune across the cut is left out whole.
		{strings.Repeat("a", maxCauseBytes-1) + "é", strings.Repeat("a", maxCauseBytes-1) + fmt.Sprintf("… (%d bytes)", maxCauseBytes+1)},
	} {
		if got := causeText(errors.New(tc.msg)); got != tc.want {
			t.Errorf("a cause of %d bytes: %q…, want %q…", len(tc.msg), got[max(0, len(got)-30):], tc.want[max(0, len(tc.want)-30):])
		}
	}
}

// TestKeyFilterKeepsExactlyItsKeys pins keyFilter at maxFilterLen
// (sink.go:73 and :95 `<` → `<=`: a key of exactly maxFilterLen bytes
// indexed past the table) and its empty key (sink.go:72 `k == "" ||`
// dropped: "" kept).
func TestKeyFilterKeepsExactlyItsKeys(t *testing.T) {
	keys := []string{"a", strings.Repeat("b", maxFilterLen-1), strings.Repeat("c", maxFilterLen), strings.Repeat("d", maxFilterLen+1), "a", ""}
	f := newKeyFilter(keys)
	for _, k := range keys[:4] {
		if got, ok := f.lookup([]byte(k)); !ok || got != k {
			t.Errorf("lookup of a kept key of %d bytes: %q, %v", len(k), got, ok)
		}
	}
	for _, k := range []string{"", "b", strings.Repeat("c", maxFilterLen-1), strings.Repeat("x", maxFilterLen), strings.Repeat("c", maxFilterLen+1)} {
		if got, ok := f.lookup([]byte(k)); ok {
			t.Errorf("lookup of %d bytes not kept: found %q", len(k), got)
		}
	}
	var none *keyFilter
	if _, ok := none.lookup([]byte("a")); ok {
		t.Error("a nil filter kept a key")
	}
}

// TestJSONLinesWithAFirstLineLongerThanTheHeadAreLines pins linesMode's
// bound (read_detect.go:63 `>=` → `>`): a first line that fills the
// whole head, no newline in sight, is a line of JSON lines (no
// pretty-printer writes one so long), so a bad line after it is named by
// its line number, and the lines after it are read.
func TestJSONLinesWithAFirstLineLongerThanTheHeadAreLines(t *testing.T) {
	long := strings.Replace(otlpLine(1), `"resource":{}`, `"resource":{"attributes":[{"key":"pad","value":{"stringValue":"`+strings.Repeat("a", headBytes)+`"}}]}`, 1)
	data := []byte(long + "{\"resourceSpans\": [oops]}\n" + otlpLine(2))
	if !linesMode(data[:headBytes]) {
		t.Fatal("linesMode reads a head filled by one line as a document")
	}
	inputs, _, err := readBytes(t, data, ReadOptions{})
	if err != nil || inputs[0].Spans != 2 || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], "-:2 (byte ") {
		t.Fatalf("err %v, inputs %+v; want both good lines read and line 2 named bad", err, inputs)
	}
}

// TestALimitStopsTheReadEvenAfterSpans pins that a limit is never a
// warning (read.go:495 the ErrMemoryLimit or the ErrDecompressionLimit
// test dropped: reading on past it, the input merely partial): a zstd
// stream whose second frame wants a window over the budget's share stops
// the read with ErrMemoryLimit in non-strict mode too, after the first
// frame's spans; a gzip stream that expands past the ratio and the slack
// stops it with ErrDecompressionLimit. The limit is the error, not also a
// warning.
func TestALimitStopsTheReadEvenAfterSpans(t *testing.T) {
	big, _ := dumpOf(tracegen.WriteOTLPProto, decompressionSlack+4<<20)
	inputs, _, err := readBytes(t, tracegen.GzipBytes(big), ReadOptions{MaxDecompressionRatio: 2})
	if !errors.Is(err, ErrDecompressionLimit) || inputs[0].Spans == 0 || len(inputs[0].Warnings) != 0 {
		t.Errorf("gzip: err %v, %d spans, warnings %q; want the spans before the limit, then ErrDecompressionLimit alone", err, inputs[0].Spans, inputs[0].Warnings)
	}

	dump := tracegen.MustEncode(tracegen.WriteOTLPProto, tracegen.ProdColdStarts())
	data := append(zstdFrame(t, dump, true, 0), zstdFrame(t, dump, false, 16<<20)...)
	opts := ReadOptions{MaxMemory: 64 << 20} // a window of at most 8 MiB
	if w := opts.budget().zstdWindow(); w != 8<<20 {
		t.Fatalf("the zstd window of a 64 MiB budget is %d, the test expects 8 MiB", w)
	}
	inputs, _, err = readBytes(t, data, opts)
	if !errors.Is(err, ErrMemoryLimit) || inputs[0].Spans == 0 || len(inputs[0].Warnings) != 0 {
		t.Fatalf("zstd: err %v, %d spans, warnings %q; want the first frame's spans, then ErrMemoryLimit alone", err, inputs[0].Spans, inputs[0].Warnings)
	}
}

// recordOfSize is a protobuf record in the common shape of exactly n
// bytes, padded by a string attribute.
func recordOfSize(t *testing.T, n int) []byte {
	t.Helper()
	for pad := n - len(bigAttrRecord(0)); pad > 0; pad-- {
		if rec := bigAttrRecord(pad); len(rec) == n {
			return rec
		} else if len(rec) < n {
			break
		}
	}
	t.Fatalf("no record of exactly %d bytes", n)
	return nil
}

// TestAProtobufRecordOfExactlyTheCapIsRead pins the record cap and the
// length prefix's bound at their edges: a stored record of exactly the
// record cap is read, one a byte longer skipped (read_otlpproto.go:170
// `>` → `>=`); a length prefix of exactly maxRecordBytes is a length
// (read_otlpproto.go:39 and :216 `>` → `>=`: a dump refused as none, or
// its record as too large), and the input ending inside its record is a
// cut record.
func TestAProtobufRecordOfExactlyTheCapIsRead(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 << 20, Strict: true}
	recCap := int(opts.budget().recordCap())
	for _, tc := range []struct {
		name string
		size int
		read bool
	}{{"exactly the cap", recCap, true}, {"a byte past the cap", recCap + 1, false}} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(framed(recordOfSize(t, tc.size)), framed(request(baseResource, baseSpan()))...)
			inputs, _, err := readBytes(t, data, opts)
			switch {
			case tc.read && (err != nil || inputs[0].Spans != 2):
				t.Errorf("err %v, inputs %+v; want both records read", err, inputs)
			case !tc.read && !errors.Is(err, ErrRecordTooLarge):
				t.Errorf("err %v; want the record cut (ErrRecordTooLarge)", err)
			}
		})
	}
	t.Run("a length of exactly maxRecordBytes", func(t *testing.T) {
		data := append(binary.BigEndian.AppendUint32(nil, maxRecordBytes), request(baseResource, baseSpan())...)
		_, _, err := readBytes(t, data, ReadOptions{Strict: true})
		if !errors.Is(err, ErrTruncated) || errors.Is(err, ErrRecordTooLarge) {
			t.Errorf("err %v; want the record cut short (ErrTruncated), not too large", err)
		}
	})
}

// TestAnUnknownMembersValueIsSkippedWhole pins skipJSON's string scan
// (read_jsondoc.go:373-376: a quote at the scan's start taken for string
// bytes, or the end of the input for more to come) and its scalar loop: an
// empty string, one with escapes, one ending exactly at a buffer's edge,
// a number of several digits (skipped to its end, not after its first
// digit) are skipped whole and the records after them read; a document
// cut inside a skipped string or a nested number is cut (ErrTruncated),
// and promptly.
func TestAnUnknownMembersValueIsSkippedWhole(t *testing.T) {
	rs := `{"scopeSpans":[{"spans":[{` + hostileSpanJSON(1) + `}]}]}`
	for _, tc := range []struct {
		name, doc string
		cut       bool
	}{
		{"an empty string", "{\"x\": \"\",\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"escapes", "{\"x\": \"a\\\"b\\\\\",\"y\":[\"\",\"\\\"\"],\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"a long string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": \"" + strings.Repeat("a", 70<<10) + "\"}\n", false},
		{"cut inside a skipped string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [\"abc", true},
		{"cut inside a long skipped string", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [\"" + strings.Repeat("a", 70<<10), true},
		{"a number", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": 12345, \"y\": -1.5e3}\n", false},
		{"a number before the records", "{\"x\": 12345,\n\"resourceSpans\": [\n" + rs + "]}\n", false},
		{"cut inside a nested number", "{\"resourceSpans\": [\n" + rs + "],\n\"x\": [1, 2345", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				inputs  []Input
				batches int
				err     error
			}
			done := make(chan outcome, 1)
			go func() {
				inputs, batches, err := readBytes(t, []byte(tc.doc), ReadOptions{Strict: true})
				done <- outcome{inputs, len(batches), err}
			}()
			var o outcome
			select {
			case o = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the read did not end in 20 s")
			}
			switch {
			case tc.cut && !errors.Is(o.err, ErrTruncated):
				t.Errorf("err %v, want ErrTruncated", o.err)
			case !tc.cut && (o.err != nil || o.batches != 1 || o.inputs[0].Partial || o.inputs[0].Spans != 1):
				t.Errorf("err %v, %d batches, inputs %+v; want the one record and its span read", o.err, o.batches, o.inputs)
			}
		})
	}
}

// TestTheDefaultBudgetIsAQuarterOfTheMachineWithinItsBounds pins
// defaultBudget at its edges (read_budget.go: `total <= 0`, each clamp):
// a quarter of the machine, at least 64 MiB, at most 1 GiB, 1 GiB when
// the machine's memory is unknown; and machineMemory reads MemTotal (or
// a lower cgroup limit) as this machine has it.
func TestTheDefaultBudgetIsAQuarterOfTheMachineWithinItsBounds(t *testing.T) {
	for _, tc := range []struct{ total, want int64 }{
		{-1, 1 << 30}, {0, 1 << 30}, {1, 64 << 20}, {256 << 20, 64 << 20}, {256<<20 + 4, 64<<20 + 1},
		{1 << 32, 1 << 30}, {1<<32 + 4, 1 << 30}, {1<<32 - 4, 1<<30 - 1}, {64 << 30, 1 << 30},
	} {
		if got := defaultBudget(tc.total); got != tc.want {
			t.Errorf("defaultBudget(%d) = %d, want %d", tc.total, got, tc.want)
		}
	}
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skipf("no /proc/meminfo: %v", err)
	}
	var kb int64
	for _, line := range strings.Split(string(meminfo), "\n") {
		if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
			break
		}
	}
	want := kb << 10
	if b, err := os.ReadFile("/sys/fs/cgroup/memory.max"); err == nil {
		var lim int64
		if _, err := fmt.Sscanf(string(b), "%d", &lim); err == nil && lim > 0 && lim < want {
			want = lim
		}
	}
	if got := machineMemory(); kb == 0 || got != want {
		t.Errorf("machineMemory() = %d, want %d (MemTotal %d kB, or a lower cgroup limit)", got, want, kb)
	}
	if got := DefaultMaxMemory(); got != defaultBudget(want) {
		t.Errorf("DefaultMaxMemory() = %d, want %d for this machine", got, defaultBudget(want))
	}
}

// TestAZstdFramePrefixFillingTheInputIsAZstdRecord pins the sniff's bound
// on zstd's magic (read_otlpproto.go:42 `i+8 <= len(head)` → `<`): an
// input of exactly a length prefix and the magic is length-prefixed zstd
// frames, cut (ErrTruncated), not "not a trace dump"; with the magic cut,
// it is nothing known.
func TestAZstdFramePrefixFillingTheInputIsAZstdRecord(t *testing.T) {
	data := append(binary.BigEndian.AppendUint32(nil, 100), zstdMagic...)
	if _, _, err := readBytes(t, data, ReadOptions{Strict: true}); !errors.Is(err, ErrTruncated) || errors.Is(err, ErrNotTraceDump) {
		t.Errorf("a prefix and the magic: err %v, want a cut record (ErrTruncated)", err)
	}
	if _, _, err := readBytes(t, data[:7], ReadOptions{Strict: true}); !errors.Is(err, ErrNotTraceDump) {
		t.Errorf("a prefix and 3 bytes of the magic: err %v, want ErrNotTraceDump", err)
	}
}
