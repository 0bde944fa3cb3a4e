package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/internal/index"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/hostile"
)

// writeShape writes a hostile shape of size n into a temporary file and
// returns its path.
func writeShape(t testing.TB, shape string, n int64) string {
	t.Helper()
	s, err := hostile.ShapeByName(shape)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := hostile.WriteShape(&buf, s, n); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), shape+"."+s.Ext)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestDecompressionBombStopsWithAClearError(t *testing.T) {
	// One protobuf record and 24 MiB of zeros in a few kilobytes of zstd:
	// past the guard, and quick to read once the guard is lifted.
	bomb := writeShape(t, "proto-zeros", 24<<20)
	// One per-record zstd frame of 20 MiB of zeros (the Collector's
	// compression: zstd without stream compression).
	enc, _ := zstd.NewWriter(nil)
	frame := enc.EncodeAll(make([]byte, 20<<20), nil)
	var rec bytes.Buffer
	binary.Write(&rec, binary.BigEndian, uint32(len(frame)))
	rec.Write(frame)
	recordBomb := filepath.Join(t.TempDir(), "records.bin")
	if err := os.WriteFile(recordBomb, rec.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		strict     bool
	}{
		{"zstd stream", bomb, false},
		{"zstd records", recordBomb, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := load(context.Background(), ingest.Files{tc.path}, LoadOptions{Read: ReadOptions{Strict: tc.strict}})
			var re *ReadError
			if !errors.Is(err, ErrDecompressionLimit) || !errors.As(err, &re) {
				t.Fatalf("Load = %v, want a *ReadError wrapping ErrDecompressionLimit", err)
			}
			if re.Path != tc.path || !strings.Contains(err.Error(), "--max-decompression-ratio") {
				t.Errorf("error %q: want the file and the flag that raises the limit", err)
			}
		})
	}
	t.Run("a raised ratio reads it", func(t *testing.T) {
		idx, inputs, err := load(context.Background(), ingest.Files{bomb}, LoadOptions{Read: ReadOptions{MaxDecompressionRatio: -1}})
		if err != nil {
			t.Fatal(err)
		}
		if idx.Spans() != 1 || inputs[0].Spans != 1 || len(inputs[0].Warnings) > 0 {
			t.Errorf("%d spans (%d read), warnings %q: want the one span", idx.Spans(), inputs[0].Spans, inputs[0].Warnings)
		}
	})
}

func TestEmptyProtobufFramesCostNothingPerFrame(t *testing.T) {
	// One valid record, then 16 MiB of zeros: four million empty frames.
	path := filepath.Join(t.TempDir(), "zeros.pb")
	var buf bytes.Buffer
	if err := hostile.ProtoZeros(&buf, 16<<20); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var idx *index.Index
	var inputs []Input
	var err error
	alloc := allocated(func() {
		idx, inputs, err = load(context.Background(), ingest.Files{path}, LoadOptions{})
	})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Spans() != 1 || len(inputs[0].Warnings) != 0 {
		t.Errorf("%d spans, warnings %q: want the one span, no warning", idx.Spans(), inputs[0].Warnings)
	}
	// A record, a result and a batch per empty frame cost hundreds of
	// megabytes; skipping them costs the read buffers.
	if alloc > 32<<20 {
		t.Errorf("reading 4M empty frames allocated %d MB: work per frame", alloc>>20)
	}
}

func TestRepeatedLinesCostNoMemoryPerCopy(t *testing.T) {
	// 20k copies of one line of one span, uncompressed (no ratio guard).
	path := filepath.Join(t.TempDir(), "dups.otlp.jsonl")
	var buf bytes.Buffer
	if err := hostile.DuplicateLines(&buf, 20_000); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fast := range []bool{true, false} {
		idx := index.New(rulefmt.IndexOptions{})
		if fast {
			var err error
			if idx, _, err = load(context.Background(), ingest.Files{path}, LoadOptions{}); err != nil {
				t.Fatal(err)
			}
		} else {
			_, err := ingest.Read(context.Background(), []string{path}, ReadOptions{}, ingest.SinkFunc(func(_ *Input, td ptrace.Traces) error {
				idx.Add(td)
				return nil
			}))
			if err != nil {
				t.Fatal(err)
			}
		}
		if idx.Spans() != 1 || idx.Duplicates() != 19_999 {
			t.Errorf("fast path %v: %d spans, %d duplicates; want 1 and 19999", fast, idx.Spans(), idx.Duplicates())
		}
		if idx.NumSpans != 1 {
			t.Errorf("fast path %v: %d span records kept for one distinct span: copies cost memory", fast, idx.NumSpans)
		}
	}
}

func TestLastLineWithoutNewlineReportsItsRealCause(t *testing.T) {
	const good = `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"traceId":"5ca1ab1e0000000000000000000000aa","spanId":"4000000000000001","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`
	badID := strings.Replace(good, "5ca1ab1e0000000000000000000000aa", "zz", 1)
	for _, tc := range []struct {
		name, content string
		truncated     bool
	}{
		{"bad trace id, no newline", badID, false},
		{"bad trace id after a good line", good + "\n" + badID, false},
		{"cut line", good + "\n" + good[:60], true},
		{"cut inside a string", good[:len(good)/2], true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dump.jsonl")
			if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ingest.Read(context.Background(), []string{path}, ReadOptions{Strict: true}, ingest.SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
			if err == nil {
				t.Fatal("Read succeeded, want an error")
			}
			if got := errors.Is(err, ErrTruncated); got != tc.truncated {
				t.Errorf("error %q: truncated = %v, want %v", err, got, tc.truncated)
			}
			if !tc.truncated && !strings.Contains(err.Error(), "trace") {
				t.Errorf("error %q does not name the bad trace id", err)
			}
		})
	}
}

// Readers keep within the memory budget whatever the shape: a line, a
// document's unknown field or one huge Jaeger trace never makes a buffer
// grow past the record cap (a sixteenth of the budget). Unknown fields are
// skipped, whatever their size; a record past the cap is cut with a
// warning, keeping what was read before.
func TestReadersStayWithinTheMemoryBudget(t *testing.T) {
	const budget = 32 << 20 // record cap: 2 MiB
	cases := []struct {
		shape  string
		n      int64
		spans  int    // spans read; 0: the input is cut, an error
		format Format // forced: the unknown field comes before the keys detection looks for
	}{
		{"long-line", 24 << 20, 0, FormatAuto},
		{"unknown-field-otlp", 3 << 20, 1, FormatOTLPJSON},
		{"unknown-field-jaeger", 3 << 20, 1, FormatJaeger},
		{"unknown-field-tempo", 3 << 20, 1, FormatTempo},
		{"jaeger-big-trace", 50_000, 0, FormatAuto}, // about 10 MB in one trace
	}
	for _, tc := range cases {
		t.Run(tc.shape, func(t *testing.T) {
			path := writeShape(t, tc.shape, tc.n)
			var inputs []Input
			var err error
			alloc := allocated(func() {
				_, inputs, err = load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{MaxMemory: budget, Format: tc.format, MaxDecompressionRatio: -1}})
			})
			if tc.spans == 0 {
				if !errors.Is(err, ErrRecordTooLarge) || !strings.Contains(err.Error(), "--max-memory") {
					t.Fatalf("Load = %v, want ErrRecordTooLarge naming --max-memory", err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if inputs[0].Spans != tc.spans || len(inputs[0].Warnings) > 0 {
					t.Errorf("%d spans, warnings %q; want %d, none", inputs[0].Spans, inputs[0].Warnings, tc.spans)
				}
			}
			// Cut inputs are 10 to 24 MB in one value: buffering it whole
			// (and doubling) allocates several times the record cap. (A
			// skipped value allocates per token, garbage at once; that it
			// reads at all under the 2 MiB cap shows it was never held.)
			if tc.spans == 0 && alloc > budget/2 {
				t.Errorf("reading allocated %d MB with a %d MB budget", alloc>>20, budget>>20)
			}
		})
	}
}

func TestLoadStopsAtTheMemoryBudget(t *testing.T) {
	path := writeShape(t, "invoke-chain", 50_000)
	_, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{MaxMemory: 4 << 20}})
	var re *ReadError
	if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &re) || re.Path != path || !strings.Contains(err.Error(), "--max-memory") {
		t.Fatalf("Load with a 4 MiB budget = %v, want a *ReadError for the file wrapping ErrMemoryLimit naming --max-memory", err)
	}
	idx, _, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{MaxMemory: 64 << 20}})
	if err != nil || idx.Spans() != 50_000 {
		t.Fatalf("Load with a 64 MiB budget: %v, %d spans", err, idx.Spans())
	}
}

func TestParseByteSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1048576", 1 << 20, true},
		{"512MiB", 512 << 20, true},
		{"2GiB", 2 << 30, true},
		{"1.5 gb", 3 << 29, true},
		{"64m", 64 << 20, true},
		{"0.5KiB", 512, true},
		{"1b", 1, true},
		{"4611686018427387904", 1 << 62, true},
		// Not a positive whole number of bytes: refused, never read as
		// the default (0) or as whatever a float conversion makes of it.
		{"0", 0, false},
		{"0MiB", 0, false},
		{"-1", 0, false},
		{"-1GiB", 0, false},
		{"+5", 0, false},
		{"0.5", 0, false},
		{"1.0000001KiB", 0, false},
		{"nan", 0, false},
		{"NaN", 0, false},
		{"inf", 0, false},
		{"+Inf", 0, false},
		{"1e400", 0, false},
		{"1e3", 0, false},
		{"0x10", 0, false},
		{"4611686018427387905", 0, false},
		{"9999999999GiB", 0, false},
		{"", 0, false},
		{"MiB", 0, false},
		{"1.", 0, false},
		{".5GiB", 0, false},
		{"lots", 0, false},
		{"1\x1b[31mGiB", 0, false},
	} {
		got, err := ParseByteSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseByteSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b") {
			t.Errorf("ParseByteSize(%q): the error %q prints a raw control byte", tc.in, err)
		}
	}
	if d := DefaultMaxMemory(); d < 64<<20 || d > 1<<30 {
		t.Errorf("DefaultMaxMemory = %d, want between 64 MiB and 1 GiB", d)
	}
}

func TestDocumentReadersSkipUnknownValuesOfAnyShape(t *testing.T) {
	const rs = `{"resource":{},"scopeSpans":[{"spans":[{"traceId":"5ca1ab1e0000000000000000000000aa","spanId":"4000000000000001","name":"x","startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}`
	const odd = `[1, -2.5e3, true, null, "a \"}]\\", {"k": ["]", {}]}, []]`
	for _, tc := range []struct {
		name, doc string
		format    Format
		spans     int
	}{
		{"otlp, unknown first", "{\n" + `"u": ` + odd + `, "resourceSpans": [` + rs + `]}`, FormatOTLPJSON, 1},
		{"otlp, unknown last", "{\n" + `"resourceSpans": [` + rs + `], "u": ` + odd + `}`, FormatOTLPJSON, 1},
		{"otlp, unknown between", "{\n" + `"resourceSpans": [` + rs + `], "u": "s", "v": ` + odd + `, "resource_spans": [` + rs + `]}`, FormatOTLPJSON, 2},
		{"tempo, unknown inside trace", "{\n" + `"trace": {"u": ` + odd + `, "resourceSpans": [` + rs + `], "w": 1}, "y": ` + odd + `}`, FormatTempo, 1},
		{"two documents", "{\n" + `"u": 1, "resourceSpans": [` + rs + "]}\n{\n" + `"u": ` + odd + `, "resourceSpans": [` + rs + `]}`, FormatOTLPJSON, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "doc.json")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			inputs, err := ingest.Read(context.Background(), []string{path}, ReadOptions{Format: tc.format, Strict: true}, ingest.SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
			if err != nil {
				t.Fatal(err)
			}
			if inputs[0].Spans != tc.spans {
				t.Errorf("%d spans, want %d", inputs[0].Spans, tc.spans)
			}
		})
	}
	t.Run("a cut unknown value is a truncation", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "doc.json")
		if err := os.WriteFile(path, []byte("{\n"+`"resourceSpans": [`+rs+`], "u": [1, {"a": "b`), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ingest.Read(context.Background(), []string{path}, ReadOptions{Format: FormatOTLPJSON, Strict: true}, ingest.SinkFunc(func(*Input, ptrace.Traces) error { return nil }))
		if !errors.Is(err, ErrTruncated) {
			t.Errorf("Read = %v, want ErrTruncated", err)
		}
	})
}

// TestDeepValuesNeverReachAsString pins both defences against an attribute
// nested past ingest.MaxDepth. Through Load (a 28 KB dump whose kept
// attribute is nested a million deep, a stack overflow if walked
// recursively) the value is cut at the limit with one warning naming
// it, and both spans are read (the input is whole). Handed to the index as
// pdata (the Collector connector's way in),
// the value is kept as a marker, never encoded by AsString's unbounded
// recursion; a value at the limit is encoded as before.
func TestDeepValuesNeverReachAsString(t *testing.T) {
	const span = `"traceId":"5ca1ab1e0000000000000000000000aa","spanId":"40000000000000%s","name":"plugin.mcp.invoke","startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600000001000"`
	deep := strings.Repeat(`{"arrayValue":{"values":[`, 1_000_000) + `{"stringValue":"x"}` + strings.Repeat(`]}}`, 1_000_000)
	line := func(id, attrs string) string {
		return `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{` + strings.Replace(span, "%s", id, 1) + attrs + `}]}]}]}` + "\n"
	}
	var gz bytes.Buffer
	zw, _ := zstd.NewWriter(&gz)
	zw.Write([]byte(line("01", "") + line("02", `,"attributes":[{"key":"plugin.mcp.cache_key","value":`+deep+`}]`)))
	zw.Close()
	path := filepath.Join(t.TempDir(), "deep.jsonl.zst")
	if err := os.WriteFile(path, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	idx, inputs, err := load(context.Background(), ingest.Files{path}, LoadOptions{Read: ReadOptions{MaxDecompressionRatio: -1}})
	if err != nil {
		t.Fatal(err)
	}
	if idx.Spans() != 2 || inputs[0].Partial || len(inputs[0].Warnings) != 1 || !strings.Contains(inputs[0].Warnings[0], `attribute "plugin.mcp.cache_key"`) {
		t.Fatalf("%d spans, partial %v, warnings %q; want both spans, whole, the deep value named", idx.Spans(), inputs[0].Partial, inputs[0].Warnings)
	}

	for _, tc := range []struct {
		name  string
		depth int
		want  string
	}{
		{"at the limit", ingest.MaxDepth, strings.Repeat("[", ingest.MaxDepth) + `"x"` + strings.Repeat("]", ingest.MaxDepth)},
		{"past the limit", ingest.MaxDepth + 1, index.TooDeepValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			td := ptrace.NewTraces()
			s := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
			s.SetName("plugin.mcp.invoke")
			s.SetTraceID([16]byte{1})
			s.SetSpanID([8]byte{1})
			v := s.Attributes().PutEmpty("plugin.mcp.cache_key")
			for range tc.depth {
				v = v.SetEmptySlice().AppendEmpty()
			}
			v.SetStr("x")
			idx := index.New(rulefmt.IndexOptions{SpanAttrs: []string{"plugin.mcp.cache_key"}})
			idx.Add(td)
			idx.Finish()
			var got []string
			for _, a := range allAttrs(idx) {
				if idx.Keys[a.Key] == "plugin.mcp.cache_key" {
					got = append(got, idx.Vals[a.Val])
				}
			}
			if len(got) != 1 || got[0] != tc.want {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
		})
	}
}
