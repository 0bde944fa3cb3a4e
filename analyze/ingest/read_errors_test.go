package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// jsonLines returns the scenario as JSON lines, one request per line.
func jsonLines(t testing.TB, td ptrace.Traces) [][]byte {
	t.Helper()
	data := tracegen.MustEncode(tracegen.WriteOTLPJSONLines, td)
	return bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
}

// protoRecords returns the scenario's length-prefixed records, one per
// resource, each with its prefix.
func protoRecords(t testing.TB, td ptrace.Traces) [][]byte {
	t.Helper()
	data := tracegen.MustEncode(tracegen.WriteOTLPProto, td)
	var recs [][]byte
	for len(data) > 0 {
		n := int(binary.BigEndian.Uint32(data)) + 4
		recs = append(recs, data[:n])
		data = data[n:]
	}
	return recs
}

func spansIn(td ptrace.Traces) int { return td.SpanCount() }

// TestBadInputs is the table of inputs that cannot be read, or only in part:
// each names the place (line for JSON lines, byte offset for the rest), what
// was expected, and keeps what came before in non-strict mode.
func TestBadInputs(t *testing.T) {
	pooled := tracegen.Pooled() // one resource: one line, one record
	prod := tracegen.ProdColdStarts()
	lines := jsonLines(t, prod) // 4 lines, one per scope, 19 spans each
	recs := protoRecords(t, prod)
	if len(lines) != 4 || len(recs) != 4 {
		t.Fatalf("prod-cold-starts has %d lines and %d records, the table expects 4", len(lines), len(recs))
	}
	perScope := spansIn(prod) / 4
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	l0 := len(lines[0])
	badZstd, badZstdOff := tracegen.ZstdRecordsWithBadSecond(prod)
	r01 := len(recs[0]) + len(recs[1])

	tests := []struct {
		name  string
		data  []byte
		force Format
		// Non-strict outcome: the error (nil: read with warnings), or the
		// spans kept and the warning's text.
		wantErr   error
		kept      int
		wantMsg   string // in the error (strict, or non-strict when nothing is usable) and in the warning
		wantLine  int
		wantOff   int64
		strictErr error // errors.Is target in strict mode; nil means same as wantErr
	}{
		{name: "empty file", data: nil, wantErr: ErrEmptyInput, wantMsg: "expected a trace dump: empty file", wantOff: -1},
		{name: "binary file", data: []byte("\x7fELF\x02\x01\x01\x00garbage"), wantErr: ErrNotTraceDump,
			wantMsg: "expected one of OTLP JSON", wantOff: 0},
		{name: "json of another kind", data: []byte(`{"kind":"config","values":[1,2,3]}`), wantErr: ErrNotTraceDump,
			wantMsg: "none of the keys resourceSpans, data, batches or trace", wantOff: 0},
		{name: "bad line in json lines", data: cat(lines[0], []byte("{\"resourceSpans\": [oops]}\n"), lines[1], lines[2], lines[3]),
			kept: 4 * perScope, wantMsg: ":2 (byte " + strconv.Itoa(l0) + "): expected an OTLP ExportTraceServiceRequest JSON object", wantLine: 2, wantOff: int64(l0),
			strictErr: errAny},
		{name: "blank lines are not errors", wantOff: offUnchecked, data: cat([]byte("\n\n"), lines[0], []byte("  \r\n"), lines[1]), kept: 2 * perScope},
		{name: "json lines cut mid-line", data: cat(lines[0], lines[1], lines[2][:len(lines[2])/2]),
			kept: 2 * perScope, wantMsg: ":3 (byte " + strconv.Itoa(l0+len(lines[1])) + "): expected an OTLP ExportTraceServiceRequest JSON object: truncated",
			wantLine: 3, wantOff: int64(l0 + len(lines[1])), strictErr: ErrTruncated},
		{name: "json lines: every line bad", data: []byte("{\"resourceSpans\": 1}\n{nope}\n"), wantErr: errAny, wantMsg: ":1 (byte 0)", wantLine: 1, wantOff: 0},
		{name: "proto cut mid-record", data: cat(recs[0], recs[1], recs[2][:len(recs[2])-7]),
			kept: 2 * perScope, wantMsg: "(byte " + strconv.Itoa(r01) + "): expected an OTLP ExportTraceServiceRequest protobuf record: truncated",
			wantOff: int64(r01), strictErr: ErrTruncated},
		{name: "proto cut inside a length", data: cat(recs[0], recs[1], []byte{0, 0}),
			kept: 2 * perScope, wantMsg: "(byte " + strconv.Itoa(r01) + "): expected a 4-byte big-endian record length: truncated",
			wantOff: int64(r01), strictErr: ErrTruncated},
		{name: "proto bad record", data: cat(recs[0], []byte{0, 0, 0, 3, 0x0a, 0xff, 0xff}, recs[1]),
			kept: 2 * perScope, wantMsg: "(byte " + strconv.Itoa(len(recs[0])) + "): expected an OTLP ExportTraceServiceRequest protobuf record: ",
			wantOff: int64(len(recs[0])), strictErr: errAny},
		{name: "proto 4 GB length", data: cat(recs[0], []byte{0xff, 0xff, 0xff, 0xff, 0x0a}),
			kept: perScope, wantMsg: "at most 256 MiB: record too large: the length prefix says 4294967295 bytes",
			wantOff: int64(len(recs[0])), strictErr: ErrRecordTooLarge},
		{name: "proto 4 GB length forced", data: []byte{0xff, 0xff, 0xff, 0xff, 0x0a}, force: FormatOTLPProto,
			wantErr: ErrRecordTooLarge, wantMsg: "(byte 0)", wantOff: 0},
		{name: "proto zero-length frames are empty batches", wantOff: offUnchecked, data: cat([]byte{0, 0, 0, 0}, recs[0], []byte{0, 0, 0, 0}, recs[1]), kept: 2 * perScope},
		{name: "truncated gzip", data: tracegen.GzipBytes(cat(lines...))[:len(tracegen.GzipBytes(cat(lines...)))*2/3],
			kept: -1, wantMsg: "expected a valid gzip stream: truncated", wantOff: offUnchecked, strictErr: ErrTruncated},
		{name: "corrupt gzip header", data: []byte{0x1f, 0x8b, 0x99, 0, 0, 0}, wantErr: errAny, wantMsg: "expected a gzip stream", wantOff: 0},
		{name: "corrupt gzip checksum", data: tracegen.CorruptGzipTrailer(tracegen.GzipBytes(cat(lines...))),
			kept: 4 * perScope, wantMsg: "expected a valid gzip stream: gzip: invalid checksum", wantOff: offUnchecked, strictErr: errAny},
		{name: "truncated zstd", data: tracegen.ZstdBytes(tracegen.MustEncode(tracegen.WriteOTLPProto, prod))[:200],
			wantErr: errAny, wantMsg: "expected a valid zstd stream", wantOff: offUnchecked},
		{name: "corrupt zstd record", data: badZstd, kept: 3 * perScope,
			wantMsg: "expected a zstd frame holding an OTLP record", wantOff: badZstdOff, strictErr: errAny},
		{name: "otlp document cut short", data: tracegen.MustEncode(tracegen.WriteOTLPJSON, prod)[:len(tracegen.MustEncode(tracegen.WriteOTLPJSON, prod))*3/5],
			kept: -1, wantMsg: "expected an OTLP JSON object with a resourceSpans array: truncated", wantOff: offUnchecked, strictErr: ErrTruncated},
		{name: "syntax error in a document", data: []byte("{\"resourceSpans\": [\n  {} ,, ]}"), wantErr: errAny,
			wantMsg: "(byte 26): expected valid JSON", wantOff: 26},
		{name: "jaeger document without data", data: []byte(`{"total": 0}`), force: FormatJaeger, wantErr: errAny,
			wantMsg: `expected a Jaeger /api/traces JSON object with a "data" array`, wantOff: 0},
		{name: "jaeger bad span id", data: []byte(`{"data":[{"spans":[{"traceID":"ab","spanID":"xyz","operationName":"a"}]}]}`),
			wantErr: errAny, wantMsg: "(byte 9): expected a Jaeger trace object: span 0: spanID: expected 1 to 16 hex digits", wantOff: 9},
		{name: "tempo bad id", data: []byte(`{"batches":[{"scopeSpans":[{"spans":[{"traceId":"!!","spanId":"AAAAAAAAAAE="}]}]}]}`),
			wantErr: errAny, wantMsg: "traceId is neither 32 hex digits nor base64 of 16 bytes", wantOff: 12},
		{name: "no spans is only a warning", data: []byte(`{"data":[]}`), kept: 0, wantMsg: "no spans", wantOff: offUnchecked},
		{name: "pooled still reads", wantOff: offUnchecked, data: tracegen.MustEncode(tracegen.WriteOTLPProto, pooled), kept: spansIn(pooled)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs, batches, err := readBytes(t, tt.data, ReadOptions{Format: tt.force, Workers: 2})
			if err != nil {
				t.Logf("error: %v", err)
			} else {
				t.Logf("warnings: %q", inputs[0].Warnings)
			}
			checkPlace := func(err error) {
				t.Helper()
				re, ok := errors.AsType[*ReadError](err)
				if !ok {
					t.Fatalf("err = %v (%T), want a *ReadError", err, err)
				}
				if re.Path != "-" {
					t.Errorf("error names %q, want the input -", re.Path)
				}
				if tt.wantLine != 0 && re.Line != tt.wantLine {
					t.Errorf("error line = %d, want %d", re.Line, tt.wantLine)
				}
				if tt.wantOff != offUnchecked && re.Offset != tt.wantOff {
					t.Errorf("error offset = %d, want %d", re.Offset, tt.wantOff)
				}
				if !strings.Contains(err.Error(), tt.wantMsg) {
					t.Errorf("error %q does not contain %q", err, tt.wantMsg)
				}
			}
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("read %+v with no error, want %v", inputs, tt.wantErr)
				}
				if tt.wantErr != errAny && !errors.Is(err, tt.wantErr) {
					t.Errorf("err = %v, want errors.Is %v", err, tt.wantErr)
				}
				checkPlace(err)
				return
			}
			if err != nil {
				t.Fatalf("non-strict read failed: %v", err)
			}
			in := inputs[0]
			got := 0
			for _, b := range batches {
				got += b.SpanCount()
			}
			if got != in.Spans {
				t.Errorf("input says %d spans, the sink got %d", in.Spans, got)
			}
			switch {
			case tt.kept >= 0 && got != tt.kept:
				t.Errorf("kept %d spans, want %d", got, tt.kept)
			case tt.kept == -1 && (got == 0 || got >= spansIn(prod)):
				t.Errorf("kept %d spans, want some but not all %d", got, spansIn(prod))
			}
			if tt.wantMsg == "" {
				if len(in.Warnings) > 0 || in.Partial {
					t.Errorf("warnings %q (partial %v), want none", in.Warnings, in.Partial)
				}
				return
			}
			if len(in.Warnings) == 0 || !strings.Contains(strings.Join(in.Warnings, "\n"), tt.wantMsg) {
				t.Errorf("warnings %q, want one containing %q", in.Warnings, tt.wantMsg)
			}
			if !strings.HasPrefix(in.Warnings[0], "-") {
				t.Errorf("warning %q does not name the input", in.Warnings[0])
			}
			if tt.kept != 0 && !in.Partial {
				t.Error("Partial not set")
			}
			// Strict: the first problem is the error.
			_, _, serr := readBytes(t, tt.data, ReadOptions{Format: tt.force, Strict: true, Workers: 2})
			if tt.kept == 0 { // only a "no spans" warning: fine in strict mode too
				if serr != nil {
					t.Errorf("strict: %v", serr)
				}
				return
			}
			if serr == nil {
				t.Fatal("strict read succeeded")
			}
			if tt.strictErr != nil && tt.strictErr != errAny && !errors.Is(serr, tt.strictErr) {
				t.Errorf("strict err = %v, want errors.Is %v", serr, tt.strictErr)
			}
			checkPlace(serr)
		})
	}
}

// errAny marks a case whose error has no sentinel to check.
var errAny = errors.New("any error")

// offUnchecked marks a case whose error offset is not pinned (it depends on
// how far a decompressor gets).
const offUnchecked = -2

// TestHugeLengthPrefixDoesNotAllocate announces a 200 MiB record on a
// stream that holds a few bytes: the reader must not allocate what the
// prefix claims.
func TestHugeLengthPrefixDoesNotAllocate(t *testing.T) {
	recs := protoRecords(t, tracegen.Pooled())
	data := append(bytes.Clone(recs[0]), 0x0c, 0x80, 0x00, 0x00, 0x0a, 0x01, 0x02) // 200 MiB announced
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	inputs, _, err := readBytes(t, data, ReadOptions{Workers: 1}) // stdin: size unknown
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if !inputs[0].Partial || !strings.Contains(inputs[0].Warnings[0], "truncated") {
		t.Errorf("input = %+v, want a truncation warning", inputs[0])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("allocated %d MiB reading a few bytes", alloc>>20)
	}
}

// TestSecretsStayOutOfErrors puts a secret-looking attribute value next to
// the syntax error: the error names the place, not the content.
func TestSecretsStayOutOfErrors(t *testing.T) {
	const secret = "sk-live-0123456789abcdef"
	inputs := [][]byte{
		[]byte(`{"resourceSpans":[{"resource":{"attributes":[{"key":"token","value":{"stringValue":"` + secret + `"}}]},"scopeSpans":[{"spans":[{"traceId":"` + secret + `"}]}]}]}` + "\n"),
		[]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"kind":"` + secret + `"}]}]}]}` + "\n"),
		[]byte(`{"data":[{"spans":[{"traceID":"1","spanID":"1","tags":[{"key":"k","type":"int64","value":"` + secret + `"}]}]}]}`),
		[]byte(`{"data":[{"spans":[{"traceID":"` + secret + `","spanID":"1"}]}]}`),
		[]byte(`{"batches":[{"scopeSpans":[{"spans":[{"traceId":"` + secret + `"}]}]}]}`),
	}
	for i, data := range inputs {
		_, _, err := readBytes(t, data, ReadOptions{})
		if err == nil {
			t.Errorf("input %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "sk-live") {
			t.Errorf("input %d: error quotes the input: %v", i, err)
		}
	}
}

func TestReadErrorFormat(t *testing.T) {
	tests := []struct {
		err  ReadError
		want string
	}{
		{ReadError{Path: "dump.jsonl", Line: 17, Offset: 5234, Expected: "an OTLP ExportTraceServiceRequest JSON object", Err: errors.New("bad")},
			"dump.jsonl:17 (byte 5234): expected an OTLP ExportTraceServiceRequest JSON object: bad"},
		{ReadError{Path: "dump.pb", Offset: 12, Expected: "a record", Err: ErrTruncated}, "dump.pb (byte 12): expected a record: truncated"},
		{ReadError{Path: "x", Offset: -1, Err: ErrEmptyInput}, "x: empty file"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	err := error(&ReadError{Path: "x", Offset: -1, Err: ErrTruncated})
	if !errors.Is(err, ErrTruncated) {
		t.Error("ReadError does not unwrap to its cause")
	}
}

// failingReader hands out data, then fails with first, then with second on
// every later read: a device that fails once and then differently.
type failingReader struct {
	data          []byte
	first, second error
	failed        bool
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	if !r.failed {
		r.failed = true
		return 0, r.first
	}
	return 0, r.second
}

// TestAFailingInputIsBlamedForItsFirstError pins that a read error of the
// input is the error reported, and the first one: an input that fails and
// then fails differently (bufio hands out an error once and reads on) is
// blamed as "a readable file" with the error it gave first, not reported
// as a bad record of the format with a later error.
func TestAFailingInputIsBlamedForItsFirstError(t *testing.T) {
	first, second := errors.New("the device failed"), errors.New("read on a closed device")
	data := otlpLine(1) + strings.TrimSuffix(otlpLine(2), "\n")
	_, err := Read(t.Context(), []string{"-"}, ReadOptions{Strict: true, Stdin: &failingReader{data: []byte(data), first: first, second: second}},
		SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
	var re *ReadError
	if !errors.As(err, &re) || !errors.Is(err, first) || errors.Is(err, second) || re.Expected != "a readable file" {
		t.Fatalf("err %v, want a ReadError expecting a readable file with the first error (%v) alone", err, first)
	}
}

// TestAReadErrorNamesOnlyTheKnownParts pins ReadError.Error's four tests
// (line, offset, expectation, cause) at their edges: line 0 and offset -1 are unknown and left out, offset 0 is byte 0.
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
// encoding/json's "invalid character" at each bound of the Latin-1 range
// and its closing quote, and its clip at exactly maxCauseBytes (back to a
// rune's start, down to nothing and no further).
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
