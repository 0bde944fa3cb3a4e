package ingest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// readBytes reads one in-memory input through stdin and returns what Read
// reported and every batch in sink order.
func readBytes(t testing.TB, data []byte, opts ReadOptions) ([]Input, []ptrace.Traces, error) {
	t.Helper()
	opts.Stdin = bytes.NewReader(data)
	return readPaths(t, []string{"-"}, opts)
}

func readPaths(t testing.TB, paths []string, opts ReadOptions) ([]Input, []ptrace.Traces, error) {
	t.Helper()
	var batches []ptrace.Traces
	inputs, err := Read(context.Background(), paths, opts, SinkFunc(func(in *Input, td ptrace.Traces) error {
		if td.SpanCount() == 0 {
			t.Errorf("%s: sink got an empty batch", in.Path)
		}
		batches = append(batches, td)
		return nil
	}))
	return inputs, batches, err
}

// writeFile writes data under dir and returns its path.
func writeInputFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// canon renders every span of the batches as one sorted line each: ids,
// parent, name, kind, status, times, scope, resource and span attributes,
// and its events (name, time, attributes) and links (ids), in order. Two
// dumps read the same when their canon lines are equal, whatever the
// grouping into resources, scopes and batches.
func canonSpans(batches ...ptrace.Traces) []string {
	var out []string
	for _, td := range batches {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := canonMap(rs.Resource().Attributes())
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				sc := rs.ScopeSpans().At(j)
				for k := 0; k < sc.Spans().Len(); k++ {
					sp := sc.Spans().At(k)
					line := fmt.Sprintf("%s %s parent=%s %q kind=%s status=%s/%q %d..%d scope=%s@%s res=%s attrs=%s",
						sp.TraceID(), sp.SpanID(), sp.ParentSpanID(), sp.Name(), sp.Kind(), sp.Status().Code(), sp.Status().Message(),
						sp.StartTimestamp(), sp.EndTimestamp(), sc.Scope().Name(), sc.Scope().Version(), res, canonMap(sp.Attributes()))
					for _, ev := range sp.Events().All() {
						line += fmt.Sprintf(" event=%q@%d%s", ev.Name(), ev.Timestamp(), canonMap(ev.Attributes()))
					}
					for _, ln := range sp.Links().All() {
						line += fmt.Sprintf(" link=%s/%s", ln.TraceID(), ln.SpanID())
					}
					out = append(out, line)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func canonMap(m pcommon.Map) string {
	var kv []string
	for k, v := range m.All() {
		kv = append(kv, fmt.Sprintf("%s=%s:%s", k, v.Type(), v.AsString()))
	}
	slices.Sort(kv)
	return "{" + strings.Join(kv, ",") + "}"
}

// diffCanon reports the first lines where two canon renderings differ.
func diffCanon(t *testing.T, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	t.Errorf("read %d spans, want %d", len(got), len(want))
	shown := 0
	for i := 0; i < max(len(got), len(want)) && shown < 3; i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("span %d:\n got  %s\n want %s", i, g, w)
			shown++
		}
	}
}

// TestRoundTripEveryFormat writes every scenario in every encoding and reads
// it back: the same spans, ids, parents, attributes, kinds, statuses, times
// and resources, the format and compression named.
func TestRoundTripEveryFormat(t *testing.T) {
	for _, sc := range tracegen.Scenarios() {
		td := sc.Build()
		want := canonSpans(td)
		for _, enc := range tracegen.Encodings() {
			t.Run(sc.Name+"/"+enc.Name, func(t *testing.T) {
				var buf bytes.Buffer
				if err := enc.Write(&buf, td); err != nil {
					t.Fatal(err)
				}
				inputs, batches, err := readBytes(t, buf.Bytes(), ReadOptions{Strict: true, Workers: 2})
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				in := inputs[0]
				if string(in.Format) != enc.Format || in.Compression != enc.Compression {
					t.Errorf("read as %s/%q, want %s/%q", in.Format, in.Compression, enc.Format, enc.Compression)
				}
				if in.Spans != td.SpanCount() || in.Partial || len(in.Warnings) > 0 {
					t.Errorf("input = %+v, want %d spans and no warnings", in, td.SpanCount())
				}
				diffCanon(t, canonSpans(batches...), want)
			})
		}
	}
}

// TestCommittedDumpsRead reads the generated dumps under testdata/traces
// from disk, every one in one call as the CLI would, in strict mode. (Only
// the generator's files: golden reports may sit next to them.)
func TestCommittedDumpsRead(t *testing.T) {
	var paths []string
	for _, sc := range tracegen.Scenarios() {
		for _, enc := range tracegen.Encodings() {
			paths = append(paths, filepath.Join("..", "..", "testdata", "traces", sc.Name+"."+enc.Ext))
		}
	}
	inputs, _, err := readPaths(t, paths, ReadOptions{Strict: true})
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if len(inputs) != len(paths) {
		t.Fatalf("read %d inputs, want %d", len(inputs), len(paths))
	}
	want := map[string]int{}
	for _, sc := range tracegen.Scenarios() {
		want[sc.Name] = sc.Build().SpanCount()
	}
	for _, in := range inputs {
		name := strings.SplitN(filepath.Base(in.Path), ".", 2)[0]
		if in.Spans != want[name] {
			t.Errorf("%s: %d spans, want %d", in.Path, in.Spans, want[name])
		}
	}
}

// TestDetectionIgnoresFileNames gives every encoding a misleading name: the
// content decides.
func TestDetectionIgnoresFileNames(t *testing.T) {
	dir := t.TempDir()
	td := tracegen.Pooled()
	names := []string{"a.json", "b.pb", "c.jaeger.json", "d.gz", "e.zst", "f.txt", "g", "h.jsonl", "i.tempo.json", "j.proto"}
	for i, enc := range tracegen.Encodings() {
		var buf bytes.Buffer
		if err := enc.Write(&buf, td); err != nil {
			t.Fatal(err)
		}
		path := writeInputFile(t, dir, names[(i+3)%len(names)]+fmt.Sprint(i), buf.Bytes())
		inputs, _, err := readPaths(t, []string{path}, ReadOptions{})
		if err != nil {
			t.Errorf("%s as %s: %v", enc.Name, filepath.Base(path), err)
			continue
		}
		if string(inputs[0].Format) != enc.Format || inputs[0].Compression != enc.Compression || inputs[0].Spans != td.SpanCount() {
			t.Errorf("%s as %s: read %+v, want %s/%q", enc.Name, filepath.Base(path), inputs[0], enc.Format, enc.Compression)
		}
	}
}

func TestDetect(t *testing.T) {
	rec := func(body ...byte) []byte {
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(body)))
		return append(hdr[:], body...)
	}
	tests := []struct {
		name   string
		head   []byte
		want   Format
		framed bool
	}{
		{"otlp json", []byte(`{"resourceSpans":[]}`), FormatOTLPJSON, false},
		{"otlp json snake case", []byte(`{"resource_spans":[]}`), FormatOTLPJSON, false},
		{"pretty with BOM", []byte("\xef\xbb\xbf\n  {\n  \"resourceSpans\": ["), FormatOTLPJSON, false},
		{"jaeger", []byte(`{"data":[{"traceID":"1"}]}`), FormatJaeger, false},
		{"jaeger with keys first", []byte(`{"total":0,"limit":0,"errors":null,"data":[]}`), FormatJaeger, false},
		{"tempo batches", []byte(`{"batches":[]}`), FormatTempo, false},
		{"tempo v2", []byte(`{"trace":{"resourceSpans":[]}}`), FormatTempo, false},
		{"key after a skipped object", []byte(`{"meta":{"data":1,"x":[{"y":"}"}]},"batches":[]}`), FormatTempo, false},
		{"proto record", rec(0x0a, 0x00), FormatOTLPProto, false},
		{"proto record of one byte, the whole head", rec(0x0a), FormatOTLPProto, false},
		{"proto after empty records", append(make([]byte, 8), rec(0x0a, 0x00)...), FormatOTLPProto, false},
		{"zstd records", rec(0x28, 0xb5, 0x2f, 0xfd, 0x00), FormatOTLPProto, true},
		{"unknown json keys", []byte(`{"foo":1,"bar":[1,2]}`), FormatAuto, false},
		{"json array", []byte(`[{"resourceSpans":[]}]`), FormatAuto, false},
		{"cut before a deciding key", []byte(`{"foo":"aaaa`), FormatAuto, false},
		{"elf binary", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00"), FormatAuto, false},
		{"huge length prefix", []byte{0xff, 0xff, 0xff, 0xff, 0x0a, 0x00}, FormatAuto, false},
		{"text", []byte("hello world\n"), FormatAuto, false},
		{"only empty records", make([]byte, 8), FormatAuto, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := detect(tt.head)
			if d.format != tt.want || d.framedZstd != tt.framed {
				t.Errorf("detect = %s (framed %v, %s), want %s (framed %v)", d.format, d.framedZstd, d.looks, tt.want, tt.framed)
			}
			if d.looks == "" {
				t.Error("detection says nothing about what the content looks like")
			}
		})
	}
}

// TestDetectNamesAnHTMLPage pins the HTML page's detection at its edges:
// the doctype or the html element alone, in any case, after white space
// and a BOM, is a page; one byte short of either is not.
func TestDetectNamesAnHTMLPage(t *testing.T) {
	for _, tc := range []struct {
		head string
		page bool
	}{
		{"<html", true},
		{"<!doctype html", true},
		{"<!DOCTYPE HTML>\n<html>", true},
		{"\xef\xbb\xbf \n\t<HtMl lang=en>", true},
		{"<htm", false},
		{"<!doctype htm", false},
		{"<head>", false},
	} {
		d := detect([]byte(tc.head))
		if page := strings.Contains(d.looks, "an HTML page"); page != tc.page || d.format != FormatAuto {
			t.Errorf("detect(%q) = %s, %q; want an HTML page: %v", tc.head, d.format, d.looks, tc.page)
		}
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{
		"": FormatAuto, "auto": FormatAuto, "otlp-json": FormatOTLPJSON, " OTLP-Proto ": FormatOTLPProto,
		"jaeger": FormatJaeger, "tempo": FormatTempo,
	} {
		got, err := ParseFormat(in)
		if err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	_, err := ParseFormat("zipkin")
	if err == nil || !strings.Contains(err.Error(), "otlp-json") {
		t.Errorf("ParseFormat(zipkin) error = %v, want one listing the formats", err)
	}
	if FormatAuto.String() != "auto" || FormatJaeger.String() != "jaeger" {
		t.Error("Format.String")
	}
}

func TestForcedFormat(t *testing.T) {
	encode := func(w tracegen.WriteFunc) []byte {
		var buf bytes.Buffer
		if err := w(&buf, tracegen.Pooled()); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	tests := []struct {
		name    string
		data    []byte
		forced  Format
		wantErr error // nil: reads all 22 spans
		format  Format
	}{
		{"json lines forced as protobuf", encode(tracegen.WriteOTLPJSONLines), FormatOTLPProto, ErrFormatMismatch, ""},
		{"protobuf forced as json", encode(tracegen.WriteOTLPProto), FormatOTLPJSON, ErrFormatMismatch, ""},
		{"jaeger forced as otlp json", encode(tracegen.WriteJaeger), FormatOTLPJSON, ErrFormatMismatch, ""},
		{"otlp json forced as jaeger", encode(tracegen.WriteOTLPJSON), FormatJaeger, ErrFormatMismatch, ""},
		{"tempo forced as otlp json", encode(tracegen.WriteTempoBatches), FormatOTLPJSON, ErrFormatMismatch, ""},
		{"otlp json forced as tempo", encode(tracegen.WriteOTLPJSON), FormatTempo, nil, FormatTempo},
		{"matching force", encode(tracegen.WriteJaeger), FormatJaeger, nil, FormatJaeger},
		{"zstd json records forced as json", encode(tracegen.WriteOTLPJSONZstdRecords), FormatOTLPJSON, nil, FormatOTLPJSON},
		{"zstd proto records forced as proto", encode(tracegen.WriteOTLPProtoZstdRecords), FormatOTLPProto, nil, FormatOTLPProto},
		{"zstd json records forced as proto", encode(tracegen.WriteOTLPJSONZstdRecords), FormatOTLPProto, ErrNoInput, ""},
		{"zstd proto records forced as jaeger", encode(tracegen.WriteOTLPProtoZstdRecords), FormatJaeger, ErrFormatMismatch, ""},
		{"zstd json records forced as tempo", encode(tracegen.WriteOTLPJSONZstdRecords), FormatTempo, ErrFormatMismatch, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inputs, _, err := readBytes(t, tt.data, ReadOptions{Format: tt.forced})
			switch {
			case tt.wantErr == ErrNoInput: // any *ReadError: nothing decodes
				if _, ok := errors.AsType[*ReadError](err); !ok {
					t.Errorf("err = %v, want a *ReadError", err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "looks like") {
					t.Errorf("error %q does not say what the content looks like", err)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if inputs[0].Spans != 22 || inputs[0].Format != tt.format {
					t.Errorf("read %+v, want 22 spans as %s", inputs[0], tt.format)
				}
			}
		})
	}
}

// TestDirectoryGlobAndStdin checks path expansion: directories walked in
// lexical order (dot entries skipped), globs sorted, "-" read from stdin,
// each input in the order given.
func TestDirectoryGlobAndStdin(t *testing.T) {
	dir := t.TempDir()
	var jsonl, pb bytes.Buffer
	if err := tracegen.WriteOTLPJSONLines(&jsonl, tracegen.Pooled()); err != nil {
		t.Fatal(err)
	}
	if err := tracegen.WriteOTLPProto(&pb, tracegen.Concurrent()); err != nil {
		t.Fatal(err)
	}
	writeInputFile(t, dir, "walk/b/2.pb", pb.Bytes())
	writeInputFile(t, dir, "walk/a.jsonl", jsonl.Bytes())
	writeInputFile(t, dir, "walk/b/1.jsonl", jsonl.Bytes())
	writeInputFile(t, dir, "walk/.hidden", []byte("not a dump"))
	writeInputFile(t, dir, "walk/b/2.pb.golden.json", []byte(`{"schema":"mcptrace.analysis/v1"}`))
	writeInputFile(t, dir, "walk/.git/config", []byte("not a dump"))
	writeInputFile(t, dir, "glob/x1.pb", pb.Bytes())
	writeInputFile(t, dir, "glob/x0.pb", pb.Bytes())

	opts := ReadOptions{Stdin: bytes.NewReader(jsonl.Bytes())}
	inputs, _, err := readPaths(t, []string{filepath.Join(dir, "walk"), filepath.Join(dir, "glob", "x*.pb"), "-"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range inputs {
		rel, _ := filepath.Rel(dir, in.Path)
		if in.Path == "-" {
			rel = "-"
		}
		got = append(got, fmt.Sprintf("%s:%d", filepath.ToSlash(rel), in.Spans))
	}
	want := []string{"walk/a.jsonl:22", "walk/b/1.jsonl:22", "walk/b/2.pb:14", "walk/b/2.pb.golden.json:0", "glob/x0.pb:14", "glob/x1.pb:14", "-:22"}
	if !slices.Equal(got, want) {
		t.Errorf("inputs = %v, want %v", got, want)
	}
	if w := inputs[3].Warnings; len(w) != 1 || !strings.HasSuffix(w[0], "2.pb.golden.json: skipped: not a trace dump") {
		t.Errorf("the report in the walked directory has warnings %q, want one saying it was skipped", w)
	}

	// Strict: the non-dump in the directory is an error; named, it is an
	// error in any mode.
	_, _, err = readPaths(t, []string{filepath.Join(dir, "walk")}, ReadOptions{Strict: true})
	if !errors.Is(err, ErrNotTraceDump) {
		t.Errorf("strict walk: err = %v, want ErrNotTraceDump", err)
	}
	_, _, err = readPaths(t, []string{filepath.Join(dir, "walk", "b", "2.pb.golden.json")}, ReadOptions{})
	if !errors.Is(err, ErrNotTraceDump) {
		t.Errorf("named non-dump: err = %v, want ErrNotTraceDump", err)
	}
}

func TestPathErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		paths []string
		want  string
		is    error
	}{
		{"no paths", nil, "give a file", ErrNoInput},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, "expected a file, a directory, a glob or - for stdin", nil},
		{"glob with no match", []string{filepath.Join(dir, "*.pb")}, "expected a glob matching at least one file", ErrNoInput},
		{"bad glob", []string{filepath.Join(dir, "[")}, "expected a valid glob pattern", nil},
		{"empty directory", []string{filepath.Join(dir, "empty")}, "no files in the directory", ErrNoInput},
		{"stdin twice", []string{"-", "-"}, "stdin", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := readPaths(t, tt.paths, ReadOptions{Stdin: strings.NewReader("")})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want errors.Is %v", err, tt.is)
			}
		})
	}
}

// orderedDump builds n requests of one span each, span ids 1..n in order,
// so a sink can check the order batches arrive in.
func orderedDump(n int) []ptrace.Traces {
	out := make([]ptrace.Traces, n)
	for i := range out {
		td := ptrace.NewTraces()
		sp := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(rtTraceID(uint64(i/10 + 1)))
		sp.SetSpanID(rtSpanID(uint64(i + 1)))
		sp.SetName("s")
		out[i] = td
	}
	return out
}

// TestParallelDecodePreservesOrder decodes thousands of small records on
// several workers and checks the sink sees them in file order.
func TestParallelDecodePreservesOrder(t *testing.T) {
	const n = 3000
	reqs := orderedDump(n)
	var jsonl, pb, doc bytes.Buffer
	var jm ptrace.JSONMarshaler
	var pm ptrace.ProtoMarshaler
	all := ptrace.NewTraces()
	for _, td := range reqs {
		b, _ := jm.MarshalTraces(td)
		jsonl.Write(b)
		jsonl.WriteByte('\n')
		p, _ := pm.MarshalTraces(td)
		binary.Write(&pb, binary.BigEndian, uint32(len(p)))
		pb.Write(p)
		td.ResourceSpans().MoveAndAppendTo(all.ResourceSpans())
	}
	if err := tracegen.WriteOTLPJSON(&doc, all); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"json lines": jsonl.Bytes(), "protobuf": pb.Bytes(), "json document": doc.Bytes()} {
		t.Run(name, func(t *testing.T) {
			var got []uint64
			_, err := Read(context.Background(), []string{"-"}, ReadOptions{Workers: 4, Stdin: bytes.NewReader(data)}, SinkFunc(func(_ *Input, td ptrace.Traces) error {
				forEachTestSpan(td, func(sp ptrace.Span) {
					id := sp.SpanID()
					got = append(got, binary.BigEndian.Uint64(id[:]))
				})
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("read %d spans, want %d", len(got), n)
			}
			for i, id := range got {
				if id != uint64(i+1) {
					t.Fatalf("span %d has id %d: batches out of order", i, id)
				}
			}
		})
	}
}

func rtTraceID(n uint64) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	return id
}

func rtSpanID(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

func forEachTestSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			ss := rs.ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				fn(ss.At(k))
			}
		}
	}
}

// TestSinkErrorStopsReading: the sink's error comes back as is, the input
// read so far is reported, and no later input is opened.
func TestSinkErrorStopsReading(t *testing.T) {
	dir := t.TempDir()
	var jsonl bytes.Buffer
	for _, td := range orderedDump(5000) {
		b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		jsonl.Write(append(b, '\n'))
	}
	first := writeInputFile(t, dir, "1.jsonl", jsonl.Bytes())
	second := writeInputFile(t, dir, "2.jsonl", jsonl.Bytes())
	boom := errors.New("index full")
	calls := 0
	inputs, err := Read(context.Background(), []string{first, second}, ReadOptions{Workers: 2}, SinkFunc(func(in *Input, td ptrace.Traces) error {
		calls++
		if calls == 10 {
			return boom
		}
		return nil
	}))
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the sink's", err)
	}
	if calls != 10 {
		t.Errorf("sink called %d times after its error, want it to stop at 10", calls)
	}
	if len(inputs) != 1 || inputs[0].Path != first || inputs[0].Spans != 10 {
		t.Errorf("inputs = %+v, want the first with 10 spans", inputs)
	}
}

// TestCancellationStopsPromptly cancels from inside the sink: Read returns
// the context's error without reading the rest (goleak checks every worker
// has stopped).
func TestCancellationStopsPromptly(t *testing.T) {
	var jsonl bytes.Buffer
	for _, td := range orderedDump(20000) {
		b, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		jsonl.Write(append(b, '\n'))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	inputs, err := Read(ctx, []string{"-"}, ReadOptions{Workers: 2, Stdin: bytes.NewReader(jsonl.Bytes())}, SinkFunc(func(*Input, ptrace.Traces) error {
		calls++
		if calls == 3 {
			cancel()
		}
		return nil
	}))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "-") {
		t.Fatalf("err = %v, want context.Canceled naming the input", err)
	}
	if calls != 3 {
		t.Errorf("sink called %d times, want it to stop right after the cancel in call 3", calls)
	}
	if len(inputs) != 1 {
		t.Errorf("inputs = %+v", inputs)
	}

	_, err = Read(ctx, []string{"-"}, ReadOptions{Stdin: bytes.NewReader(jsonl.Bytes())}, SinkFunc(func(*Input, ptrace.Traces) error {
		t.Error("sink called on a canceled context")
		return nil
	}))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("pre-canceled: err = %v", err)
	}
}

// TestBatchesOutliveTheReadBuffers keeps every batch of an input several
// read blocks long and checks each span's strings afterwards: the reader
// recycles its buffers, so a batch that pointed into one would show another
// record's bytes.
func TestBatchesOutliveTheReadBuffers(t *testing.T) {
	const n = 2500
	var jsonl, pb bytes.Buffer
	var jm ptrace.JSONMarshaler
	var pm ptrace.ProtoMarshaler
	for i := range n {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", fmt.Sprintf("svc-%06d", i))
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(rtTraceID(uint64(i + 1)))
		sp.SetSpanID(rtSpanID(uint64(i + 1)))
		sp.SetName(fmt.Sprintf("span-%06d-%s", i, strings.Repeat("x", 2000)))
		sp.Attributes().PutStr("k", fmt.Sprintf("value-%06d", i))
		sp.Attributes().PutEmptyBytes("b").FromRaw([]byte(fmt.Sprintf("bytes-%06d", i)))
		b, _ := jm.MarshalTraces(td)
		jsonl.Write(append(b, '\n'))
		p, _ := pm.MarshalTraces(td)
		binary.Write(&pb, binary.BigEndian, uint32(len(p)))
		pb.Write(p)
	}
	if jsonl.Len() < 2*blockBytes || pb.Len() < 2*blockBytes {
		t.Fatalf("dumps of %d and %d bytes do not span several %d-byte blocks", jsonl.Len(), pb.Len(), blockBytes)
	}
	for name, data := range map[string][]byte{"json lines": jsonl.Bytes(), "protobuf": pb.Bytes()} {
		t.Run(name, func(t *testing.T) {
			_, batches, err := readBytes(t, data, ReadOptions{Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for _, td := range batches {
				for r := 0; r < td.ResourceSpans().Len(); r++ {
					rs := td.ResourceSpans().At(r)
					sp := rs.ScopeSpans().At(0).Spans().At(0)
					svc, _ := rs.Resource().Attributes().Get("service.name")
					k, _ := sp.Attributes().Get("k")
					b, _ := sp.Attributes().Get("b")
					want := fmt.Sprintf("%06d", i)
					if !strings.HasSuffix(svc.Str(), want) || !strings.HasPrefix(sp.Name(), "span-"+want) ||
						!strings.HasSuffix(k.Str(), want) || !strings.HasSuffix(string(b.Bytes().AsRaw()), want) {
						t.Fatalf("span %d reads %s / %.12s / %s / %s: its bytes were overwritten", i, svc.Str(), sp.Name(), k.Str(), b.Bytes().AsRaw())
					}
					i++
				}
			}
			if i != n {
				t.Errorf("checked %d spans, want %d", i, n)
			}
		})
	}
}
