package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// The malformed corpus (testdata/malformed) is hostile input for the whole
// analyzer, not only its readers. A file's name says what the analyzer must
// make of it:
//
//   - partial-*: usable spans, then damage. Load keeps what came before the
//     damage, warns naming the file and the place, and the report is
//     marked partial (mcptrace analyze exits 0).
//   - readable-*: a well-formed dump whose spans are broken (parent cycles,
//     duplicate ids, missing parents, end before start, huge values). It
//     reads without a warning; the index and measures must cope.
//   - cut-*: a well-formed dump with a value nested past ingest.MaxDepth.
//     It reads whole, in strict mode too, with the value cut at the limit
//     and one warning naming the file and the place; the report is not
//     partial (mcptrace analyze exits 0).
//   - anything else: nothing usable. Load fails with a *ReadError naming
//     the file and the place (mcptrace analyze exits 2).
//
// Every file but the few hand-made ones is written by
// malformedGenerators; `go test ./analyze/internal/engine -run TestMalformedCorpusIsGenerated
// -regen-malformed` rewrites them.

var regenMalformed = flag.Bool("regen-malformed", false, "rewrite the generated inputs in testdata/malformed")

const malformedDir = "../../../testdata/malformed"

// malformedOutcome is what Load and Analyze must make of a corpus file.
type malformedOutcome int

const (
	unusable   malformedOutcome = iota // a *ReadError: nothing usable was read (exit 2)
	partialOut                         // spans before the damage, a warning, a partial report (exit 0)
	readable                           // read cleanly; the damage is in the spans
	cutOut                             // read whole with a value cut at the nesting limit and one warning (exit 0)
)

func (o malformedOutcome) String() string {
	return [...]string{"unusable", "partial", "readable", "cut"}[o]
}

// outcomeOf reads a corpus file's expected outcome from its name.
func outcomeOf(name string) malformedOutcome {
	switch {
	case strings.HasPrefix(name, "partial-"):
		return partialOut
	case strings.HasPrefix(name, "readable-"):
		return readable
	case strings.HasPrefix(name, "cut-"):
		return cutOut
	}
	return unusable
}

// malformedCase pins what one corpus file gives.
type malformedCase struct {
	// want is a piece of the error (unusable) or of the warning (partial):
	// the place and the cause, after the file name. Unused for readable.
	want string
	// is, when set, is the sentinel the error (unusable) or the strict-mode
	// error (partial) wraps.
	is error
	// spans is how many distinct spans the report counts (partial,
	// readable).
	spans int
	// check, when set, asserts more of the report.
	check func(t *testing.T, r *report.Report)
}

// malformedCases lists every file of the corpus; TestMalformedCorpus fails
// on a file missing from it, so a new input needs its expectation.
var malformedCases = map[string]malformedCase{
	// Hand-made by the readers' author.
	"bad-record.pb":            {want: " (byte 0): expected an OTLP ExportTraceServiceRequest protobuf record: unexpected EOF"},
	"empty.jsonl":              {want: ": expected a trace dump: empty file", is: ErrEmptyInput},
	"garbage.bin":              {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"huge-length.pb":           {want: " (byte 6): expected a 4-byte big-endian record length of at most 256 MiB: record too large: the length prefix says 4294967295 bytes", is: ErrRecordTooLarge},
	"jaeger-bad-id.json":       {want: " (byte 9): expected a Jaeger trace object: span 0: traceID: expected 1 to 32 hex digits"},
	"not-a-dump.json":          {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"tempo-bad-id.json":        {want: " (byte 12): expected a Tempo ResourceSpans JSON object: traceId is neither 32 hex digits nor base64 of 16 bytes"},
	"truncated-document.json":  {want: " (byte 27): expected an OTLP JSON object with a resourceSpans array: truncated", is: ErrTruncated},
	"truncated.pb":             {want: " (byte 6): expected an OTLP ExportTraceServiceRequest protobuf record: truncated: the record is 100 bytes but only 3 are left", is: ErrTruncated},
	"partial-bad-line.jsonl":   {want: ":2 (byte 322): expected an OTLP ExportTraceServiceRequest JSON object", spans: 2},
	"partial-cut-line.jsonl":   {want: ":2 (byte 322): expected an OTLP ExportTraceServiceRequest JSON object: truncated", is: ErrTruncated, spans: 1},
	"empty.pb":                 {want: ": expected a trace dump: empty file", is: ErrEmptyInput},
	"empty-inside.jsonl.gz":    {want: ": expected a trace dump inside the gzip stream: empty file", is: ErrEmptyInput},
	"whitespace-only.jsonl":    {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"random.bin":               {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"nul-bytes.bin":            {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"elf-binary.bin":           {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"length-4gib.pb":           {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	"length-past-end.pb":       {want: " (byte 0): expected an OTLP ExportTraceServiceRequest protobuf record: truncated: the record is 1000 bytes but only 7 are left", is: ErrTruncated},
	"zero-length-frames.pb":    {want: " (byte 8): expected an OTLP ExportTraceServiceRequest protobuf record: unexpected EOF"},
	"proto-wrong-wire-type.pb": {want: " (byte 0): expected an OTLP ExportTraceServiceRequest protobuf record: "},
	"corrupt-header.jsonl.gz":  {want: " (byte 0): expected a gzip stream"},
	"corrupt.pb.zst":           {want: " (byte 0): expected a valid zstd stream: invalid input: reserved block type encountered"},
	"truncated.pb.zst":         {want: " (byte 0): expected a valid zstd stream: truncated: the zstd stream ends early", is: ErrTruncated},
	"bad-hex-trace-id.jsonl":   {want: ":1 (byte 0): expected an OTLP ExportTraceServiceRequest JSON object: "},
	"bad-hex-span-id.jsonl":    {want: ":1 (byte 0): expected an OTLP ExportTraceServiceRequest JSON object: "},
	"bad-base64-span-id.tempo.json": {
		want: " (byte 12): expected a Tempo ResourceSpans JSON object: spanId is neither 16 hex digits nor base64 of 8 bytes"},
	"wrong-types.jaeger.json":      {want: " (byte 9): expected a Jaeger trace object: "},
	"wrong-types.otlp.json":        {want: ":1 (byte 0): expected an OTLP ExportTraceServiceRequest JSON object: a value is not a string: expects \" or n, but found {"},
	"resourcespans-not-array.json": {want: ":1 (byte 0): expected an OTLP ExportTraceServiceRequest JSON object: a value is not an array: expect [ or , or ] or n"},
	// A 200 kB first line of arrays 100 000 deep: read as JSON lines, cut
	// at ingest.MaxDepth before any decoder sees it; what is left is no
	// request (arrays where the resource spans should be).
	"deeply-nested.json.gz": {want: ":1 (byte 0): expected an OTLP ExportTraceServiceRequest JSON object: "},
	"not-objects.jsonl":     {want: " (byte 0): expected one of OTLP JSON", is: ErrNotTraceDump},
	// An attribute 20 000 arrays deep: cut at ingest.MaxDepth before a
	// recursive decoder sees it, named by its attribute; its span is read.
	"cut-deeply-nested-value.jsonl.gz": {want: `:1 (byte 1075): expected a record nested at most 100 deep: nested too deep in the value of attribute "deep", at resourceSpans[0].scopeSpans[0].spans[0].attributes[0].value.arrayValue.values[0]`, spans: 1},

	"partial-cut-record.pb":      {want: " (byte 1080): expected an OTLP ExportTraceServiceRequest protobuf record: truncated: the record is 476 bytes but only 467 are left", is: ErrTruncated, spans: 7},
	"partial-length-past-end.pb": {want: " (byte 600): expected an OTLP ExportTraceServiceRequest protobuf record: truncated: the record is 1000 bytes but only 5 are left", is: ErrTruncated, spans: 4},
	"partial-length-4gib.pb":     {want: " (byte 600): expected a 4-byte big-endian record length of at most 256 MiB: record too large: the length prefix says 4294967295 bytes", is: ErrRecordTooLarge, spans: 4},
	"partial-wrong-types.jsonl":  {want: ":2 (byte 1565): expected an OTLP ExportTraceServiceRequest JSON object: a value is not a whole number (a JSON number or a string of digits): unsupported value type", spans: 7},
	"partial-nul-line.jsonl":     {want: ":2 (byte 1565): expected an OTLP ExportTraceServiceRequest JSON object: ", spans: 7},
	"partial-truncated.jsonl.gz": {want: ":25 (byte 30108): expected a valid gzip stream: truncated: the gzip stream ends early", is: ErrTruncated, spans: 73},
	// 32 lines of len(bigLine(1)) bytes come first.
	"partial-bad-line-past-2mib.jsonl.gz": {want: ":33 (byte 3207008): expected an OTLP ExportTraceServiceRequest JSON object: ", spans: 33},
	"partial-bad-checksum.jsonl.gz":       {want: " (byte 4047): expected a valid gzip stream: gzip: invalid checksum", spans: 10},
	"partial-corrupt-zstd-record.bin": {
		want: " (byte 325): expected a zstd frame holding an OTLP record: ", spans: 7},
	"partial-truncated.jaeger.json": {want: " (byte 3251): expected a Jaeger /api/traces JSON object with a \"data\" array: truncated", is: ErrTruncated, spans: 4},
	"partial-truncated.tempo.json":  {want: ` (byte 3315): expected a Tempo trace JSON object with "batches" or "trace": {"resourceSpans"}: truncated`, is: ErrTruncated, spans: 4},

	"readable-parent-cycle.jsonl": {spans: 10, check: func(t *testing.T, r *report.Report) {
		// Trace 1 holds two cycles and a span that is its own parent;
		// trace 2 is whole.
		if r.Traces != 2 || r.IncompleteTraces != 1 {
			t.Errorf("traces %d, incomplete %d; want 2 and 1 (the cyclic trace)", r.Traces, r.IncompleteTraces)
		}
	}},
	"readable-duplicate-span-ids.jsonl": {spans: 7, check: func(t *testing.T, r *report.Report) {
		if r.DuplicateSpans != 5 {
			t.Errorf("duplicate spans %d, want 5 (the resent request, and a clashing id)", r.DuplicateSpans)
		}
		if r.Pool.Acquires != 2 {
			t.Errorf("acquires %d, want 2: a duplicate counts once", r.Pool.Acquires)
		}
	}},
	"readable-missing-parent.jsonl": {spans: 6, check: func(t *testing.T, r *report.Report) {
		if r.IncompleteTraces != 1 || r.Traces != 2 {
			t.Errorf("traces %d, incomplete %d; want 2 and 1 (the call whose invoke never landed)", r.Traces, r.IncompleteTraces)
		}
	}},
	"readable-end-before-start.jsonl": {spans: 4, check: func(t *testing.T, r *report.Report) {
		// Every span ends before it starts: no duration the spans can
		// tell, so no sample (neither negative nor 0 ms), each counted as
		// left out, and the series' percentiles not measurable.
		lat := r.Pool.Latency
		for name, p := range map[string]report.Percentiles{"acquire_miss": lat.AcquireMiss, "handshake": lat.Handshake, "call": lat.Call} {
			if p.Count != 0 || p.LeftOut != 1 || p.P50 != nil || p.P95 != nil || p.P99 != nil {
				t.Errorf("%s latency: count %d, left out %d, p50 %v; want no sample, 1 left out, no percentile", name, p.Count, p.LeftOut, p.P50)
			}
			if f := r.FigureOf(name + ".p99"); f.State != report.NotMeasurable {
				t.Errorf("%s.p99 is %s, want not measurable", name, f.State)
			}
		}
		if r.Window.Start == nil || r.Window.End == nil || r.Window.End.Before(*r.Window.Start) {
			t.Errorf("window %v..%v: want an end not before the start", r.Window.Start, r.Window.End)
		}
	}},
	"readable-huge-attribute.jsonl.gz": {spans: 4, check: func(t *testing.T, r *report.Report) {
		if r.Pool.Acquires != 1 || r.Pool.Handshakes != 1 {
			t.Errorf("acquires %d, handshakes %d; want 1 and 1", r.Pool.Acquires, r.Pool.Handshakes)
		}
	}},
	"readable-zero-length-frames.pb": {spans: 7},
}

// TestMalformedCorpus loads every corpus file with the analyzer as `mcptrace
// analyze` does and analyzes what it read, each bounded by a deadline: no
// panic, no hang, memory in proportion to the input, and the outcome its
// name and malformedCases promise, with the file and the place named.
func TestMalformedCorpus(t *testing.T) {
	names := corpusNames(t)
	if len(names) < 30 {
		t.Errorf("the corpus holds %d inputs, want at least 30", len(names))
	}
	for _, name := range names {
		if _, ok := malformedCases[name]; !ok {
			t.Errorf("%s is in %s but not in malformedCases: say what it must give", name, malformedDir)
		}
	}
	for name := range malformedCases {
		if !slices.Contains(names, name) {
			t.Errorf("malformedCases lists %s, which is not in %s (run with -regen-malformed)", name, malformedDir)
		}
	}
	cfg := hostileConfig(t)
	for _, name := range names {
		tc, ok := malformedCases[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(malformedDir, name)
			size := fileSize(t, path)
			got := loadBounded(t, path, cfg, false)
			checkAlloc(t, got.alloc, size, inflatedSize(t, path))

			switch outcome := outcomeOf(name); outcome {
			case unusable:
				if got.err == nil {
					t.Fatalf("read %d spans with warnings %q; want an error (nothing usable)", got.report.Spans, got.inputs)
				}
				checkNamesPlace(t, got.err.Error(), path, tc.want)
				if _, ok := errors.AsType[*ReadError](got.err); !ok {
					t.Errorf("error %v (%T) is not a *ReadError", got.err, got.err)
				}
				if tc.is != nil && !errors.Is(got.err, tc.is) {
					t.Errorf("error %v does not wrap %v", got.err, tc.is)
				}
			case partialOut, readable:
				if got.err != nil {
					t.Fatalf("want a %s read, got %v", outcome, got.err)
				}
				r := got.report
				if len(r.Inputs) != 1 {
					t.Fatalf("report inputs %+v, want one", r.Inputs)
				}
				in := r.Inputs[0]
				if tc.spans > 0 && r.Spans != tc.spans {
					t.Errorf("report counts %d spans, want %d", r.Spans, tc.spans)
				}
				if outcome == readable {
					if r.Partial || in.Partial || len(in.Warnings) > 0 {
						t.Errorf("partial %v, warnings %q: a well-formed dump reads cleanly", r.Partial, in.Warnings)
					}
					break
				}
				if outcome == cutOut {
					if r.Partial || in.Partial || len(in.Warnings) != 1 {
						t.Fatalf("partial %v, warnings %q: want the dump whole, with one warning of the cut", r.Partial, in.Warnings)
					}
					checkNamesPlace(t, in.Warnings[0], path, tc.want)
					break
				}
				if !r.Partial || !in.Partial {
					t.Errorf("report partial %v, input partial %v: want both marked", r.Partial, in.Partial)
				}
				if in.Spans == 0 || r.Spans == 0 {
					t.Errorf("input spans %d, report spans %d: a partial dump keeps what it read", in.Spans, r.Spans)
				}
				if len(in.Warnings) == 0 {
					t.Fatal("no warning for a damaged dump")
				}
				checkNamesPlace(t, in.Warnings[0], path, tc.want)
			}
			if tc.check != nil && got.report != nil {
				tc.check(t, got.report)
			}

			// Strict mode: a damaged file is an error at the same place; a
			// well-formed one still reads.
			strict := loadBounded(t, path, cfg, true)
			switch outcomeOf(name) {
			case readable, cutOut:
				if strict.err != nil {
					t.Errorf("strict: %v", strict.err)
				}
			default:
				if strict.err == nil {
					t.Fatal("strict read succeeded on a damaged file")
				}
				checkNamesPlace(t, strict.err.Error(), path, tc.want)
				if tc.is != nil && !errors.Is(strict.err, tc.is) {
					t.Errorf("strict error %v does not wrap %v", strict.err, tc.is)
				}
			}
		})
	}
}

// hostileConfig makes Analyze walk ancestors every way it can: an
// execution root and a reads measure with not_under and complete_when, so
// a parent cycle that survived the index would hang the test.
func hostileConfig(t *testing.T) rulefmt.Config {
	t.Helper()
	sel := func(s string) rulefmt.Selector { return parseSel(t, s) }
	root := sel(spans.SpanInvoke)
	notUnder := sel(spans.SpanHandshake)
	complete := sel(spans.SpanCallTool)
	return rulefmt.Config{
		ExecutionRoot: &root,
		Measures: []rulefmt.ReadMeasure{{
			Name: "calls_per_invoke", Root: sel(spans.SpanInvoke), Read: sel(spans.SpanCallTool),
			NotUnder: &notUnder, CompleteWhen: &complete,
		}},
	}
}

// loaded is what loadBounded saw.
type loaded struct {
	inputs []string // warnings, for messages
	report *report.Report
	err    error
	alloc  uint64 // bytes allocated while loading and analyzing
}

// loadDeadline bounds one load and analysis of a small corpus file; only a
// hang comes near it.
const loadDeadline = 60 * time.Second

// loadBounded loads path and analyzes it, failing the test if that does not
// end before loadDeadline (a hang) or panics. Tests that call it do not run
// in parallel, so TotalAlloc counts this load alone.
func loadBounded(t *testing.T, path string, cfg rulefmt.Config, strict bool) loaded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), loadDeadline)
	defer cancel()
	done := make(chan loaded, 1)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	go func() {
		var out loaded
		defer func() {
			if p := recover(); p != nil {
				out.err = fmt.Errorf("panic: %v", p)
				out.report = nil
				done <- out
			}
		}()
		idx, inputs, err := load(ctx, ingest.Files{path}, LoadOptions{Read: ReadOptions{Strict: strict, Workers: 2}, Index: cfg.IndexOptions()})
		for _, in := range inputs {
			out.inputs = append(out.inputs, in.Warnings...)
		}
		out.err = err
		if err == nil {
			out.report, out.err = Analyze(asDump(idx), cfg)
			if out.err != nil {
				out.err = fmt.Errorf("analyze: %w", out.err)
			}
		}
		done <- out
	}()
	select {
	case out := <-done:
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		out.alloc = after.TotalAlloc - before.TotalAlloc
		if out.err != nil && strings.HasPrefix(out.err.Error(), "panic: ") {
			t.Fatalf("%s: %v", path, out.err)
		}
		if out.err != nil && strings.HasPrefix(out.err.Error(), "analyze: ") {
			t.Fatalf("%s: %v", path, out.err)
		}
		return out
	case <-ctx.Done():
		t.Fatalf("%s: loading and analyzing did not end within %v: a hang", path, loadDeadline)
		return loaded{}
	}
}

// placeRE is how an error or warning names the place: path:line, or
// path (byte N), or for a file with nothing in it, the path alone.
var placeRE = regexp.MustCompile(`^(:\d+)?( \(byte \d+\))?: expected `)

// checkNamesPlace asserts msg starts with the file, then a place, then
// what was expected, and holds want.
func checkNamesPlace(t *testing.T, msg, path, want string) {
	t.Helper()
	rest, ok := strings.CutPrefix(msg, path)
	if !ok {
		t.Errorf("%q does not start with the file %s", msg, path)
		return
	}
	if !placeRE.MatchString(rest) {
		t.Errorf("%q: want path:line or path (byte N), then what was expected", msg)
	}
	if !strings.Contains(msg, path+want) {
		t.Errorf("%q\ndoes not hold %q", msg, path+want)
	}
	for _, bad := range []string{"panic", "goroutine "} {
		if strings.Contains(msg, bad) {
			t.Errorf("%q mentions %q", msg, bad)
		}
	}
}

// Memory bounds: a fixed allowance for buffers (read blocks, decoders,
// the index's tables) plus a multiple of what the input holds once
// decompressed. A reader that believed a 4 GiB length prefix, or copied a
// line for every attempt to parse it, would blow through it.
const (
	allocBase   = 48 << 20
	allocFactor = 24
)

func checkAlloc(t *testing.T, alloc uint64, size, inflated int64) {
	t.Helper()
	limit := uint64(allocBase + allocFactor*max(size, inflated))
	t.Logf("allocated %d KiB for a %d byte input (%d inflated)", alloc>>10, size, inflated)
	if alloc > limit {
		t.Errorf("allocated %d MiB for a %d byte input (%d inflated): want at most %d MiB", alloc>>20, size, inflated, limit>>20)
	}
}

// TestMalformed4GiBLengthPrefixAllocatesLittle reads a record length of
// 4 GiB after a good record, from a file and from stdin (size unknown): the
// prefix is refused before anything is allocated for it.
func TestMalformed4GiBLengthPrefixAllocatesLittle(t *testing.T) {
	path := filepath.Join(malformedDir, "partial-length-4gib.pb")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := binary.BigEndian.Uint32(data[len(data)-8:]); n != 1<<32-1 {
		t.Fatalf("%s does not end with a 4 GiB length prefix (%d)", path, n)
	}
	for _, viaStdin := range []bool{false, true} {
		t.Run(fmt.Sprintf("stdin=%v", viaStdin), func(t *testing.T) {
			opts := ReadOptions{Workers: 1}
			p := path
			if viaStdin {
				opts.Stdin, p = bytes.NewReader(data), "-"
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			idx, inputs, err := load(context.Background(), ingest.Files{p}, LoadOptions{Read: opts})
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if !inputs[0].Partial || idx.Spans() == 0 {
				t.Errorf("input %+v: want the first record kept and the input marked partial", inputs[0])
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
				t.Errorf("allocated %d MiB reading %d bytes that announce 4 GiB", alloc>>20, len(data))
			}
		})
	}
}

// TestMalformedCorpusIsGenerated checks that the generated corpus files are
// what malformedGenerators writes today (they are never edited by hand),
// or rewrites them with -regen-malformed.
func TestMalformedCorpusIsGenerated(t *testing.T) {
	for name, gen := range malformedGenerators() {
		path := filepath.Join(malformedDir, name)
		data := gen(t)
		if *regenMalformed {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		onDisk, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (run with -regen-malformed)", err)
			continue
		}
		if !bytes.Equal(onDisk, data) {
			t.Errorf("%s differs from what its generator writes (%d bytes on disk, %d generated): run with -regen-malformed", path, len(onDisk), len(data))
		}
	}
}

func corpusNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(malformedDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// inflatedSize is the size of what a gzip or zstd file holds (as far as it
// decompresses), or the file's size.
func inflatedSize(t testing.TB, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = bytes.NewReader(data)
	switch {
	case bytes.HasPrefix(data, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(r)
		if err != nil {
			return 0
		}
		r = zr
	case bytes.HasPrefix(data, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		zr, err := zstd.NewReader(r)
		if err != nil {
			return 0
		}
		defer zr.Close()
		r = zr
	}
	n, _ := io.Copy(io.Discard, r)
	return n
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

// --- the generators ---

// corpusLease describes one pooled invocation of the corpus's dumps.
func corpusLease(trace uint64, at time.Duration, hit bool) lease {
	l := lease{trace: trace, start: at, end: at + 400*time.Millisecond, key: "k-1", hit: hit, session: "s-1"}
	if !hit {
		l.handshake = true
	}
	return l
}

// corpusRequests returns n requests of one invocation each, as an SDK
// exports them: the first a cold miss (4 spans), the rest hits (3 spans).
func corpusRequests(n int) []ptrace.Traces {
	out := make([]ptrace.Traces, n)
	for i := range n {
		d := newDump()
		d.b.NextID = uint64(i)*16 + 1
		ss := d.resource(spans.ResourceServiceName, "gateway", spans.ResourceServiceInstanceID, "gateway-1")
		d.invocation(ss, corpusLease(uint64(i+1), time.Duration(i)*time.Second, i > 0))
		out[i] = d.td
	}
	return out
}

func jsonLine(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	var m ptrace.JSONMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func protoRecord(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	var m ptrace.ProtoMarshaler
	b, err := m.MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

func linesOf(t testing.TB, reqs []ptrace.Traces) []byte {
	var out []byte
	for _, td := range reqs {
		out = append(out, jsonLine(t, td)...)
	}
	return out
}

func protoRecordsOf(t testing.TB, reqs []ptrace.Traces) []byte {
	var out []byte
	for _, td := range reqs {
		out = append(out, protoRecord(t, td)...)
	}
	return out
}

func mergeRequests(reqs []ptrace.Traces) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, r := range reqs {
		r.ResourceSpans().MoveAndAppendTo(td.ResourceSpans())
	}
	return td
}

// oneSpanLine is an OTLP JSON line of one span with the given JSON members
// (ids and times included), for the wrong-type and bad-id cases.
func oneSpanLine(members string) []byte {
	return []byte(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"gateway"}}]},"scopeSpans":[{"spans":[{` + members + `}]}]}]}` + "\n")
}

// bigLine is an OTLP JSON line of about 100 kB: one span, numbered n,
// with a long name.
func bigLine(n int) []byte {
	return oneSpanLine(fmt.Sprintf(`"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"%016x","name":"%s"`, n, strings.Repeat("n", 100_000)))
}

// malformedGenerators returns the writer of every generated corpus file.
func malformedGenerators() map[string]func(testing.TB) []byte {
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	const goodIDs = `"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"plugin.mcp.invoke","startTimeUnixNano":"1","endTimeUnixNano":"2"`
	return map[string]func(testing.TB) []byte{
		// Nothing usable.
		"empty.pb":              func(testing.TB) []byte { return nil },
		"empty-inside.jsonl.gz": func(t testing.TB) []byte { return tracegen.GzipBytes(nil) },
		"whitespace-only.jsonl": func(testing.TB) []byte { return []byte("\n  \n\t\r\n\n") },
		"random.bin": func(testing.TB) []byte {
			r := rand.New(rand.NewPCG(6, 2026))
			b := make([]byte, 1024)
			for i := range b {
				b[i] = byte(r.UintN(256))
			}
			b[0] = 0xc3 // not a JSON, gzip, zstd or plausible length start, whatever the seed
			return b
		},
		"nul-bytes.bin": func(testing.TB) []byte { return make([]byte, 512) },
		"elf-binary.bin": func(testing.TB) []byte {
			return cat([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 8), []byte("\x02\x00\x3e\x00"), bytes.Repeat([]byte{0x90}, 100))
		},
		"length-4gib.pb": func(t testing.TB) []byte {
			return cat([]byte{0xff, 0xff, 0xff, 0xff}, protoRecord(t, corpusRequests(1)[0])[4:])
		},
		"length-past-end.pb": func(testing.TB) []byte { return []byte{0, 0, 0x03, 0xe8, 0x0a, 0x05, 0x0a, 0x03, 0x12, 0x01, 0x00} },
		// Zero-length frames (empty requests), then a broken record: the
		// frames alone hold nothing.
		"zero-length-frames.pb": func(testing.TB) []byte { return []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0x0a, 0xff, 0xff} },
		// Field 1 (resource_spans) written as a varint instead of a message.
		"proto-wrong-wire-type.pb": func(testing.TB) []byte { return []byte{0, 0, 0, 4, 0x0a, 0x02, 0x08, 0x01} },
		"corrupt-header.jsonl.gz": func(t testing.TB) []byte {
			g := tracegen.GzipBytes(linesOf(t, corpusRequests(2)))
			g[2] = 0x99 // compression method: not deflate
			return g
		},
		"corrupt.pb.zst": func(t testing.TB) []byte {
			z := tracegen.ZstdBytes(protoRecordsOf(t, corpusRequests(3)))
			for i := 6; i < len(z); i++ {
				z[i] ^= 0x5a
			}
			return z
		},
		"truncated.pb.zst": func(t testing.TB) []byte {
			z := tracegen.ZstdBytes(protoRecordsOf(t, corpusRequests(3)))
			return z[:len(z)/3]
		},
		"bad-hex-trace-id.jsonl": func(testing.TB) []byte {
			return oneSpanLine(`"traceId":"zz02030405060708090a0b0c0d0e0fzz","spanId":"0102030405060708","name":"a"`)
		},
		"bad-hex-span-id.jsonl": func(testing.TB) []byte {
			return oneSpanLine(`"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"abc","name":"a"`)
		},
		"bad-base64-span-id.tempo.json": func(testing.TB) []byte {
			return []byte(`{"batches":[{"scopeSpans":[{"spans":[{"traceId":"AQIDBAUGBwgJCgsMDQ4PEA==","spanId":"@@@@####","name":"a"}]}]}]}` + "\n")
		},
		"wrong-types.jaeger.json": func(testing.TB) []byte {
			return []byte(`{"data":[{"traceID":"0102030405060708090a0b0c0d0e0f10","spans":[{"traceID":"0102030405060708090a0b0c0d0e0f10","spanID":"0102030405060708","operationName":["a"],"startTime":"soon","duration":true,"processID":"p1"}],"processes":{"p1":{"serviceName":"gateway"}}}]}` + "\n")
		},
		"wrong-types.otlp.json": func(testing.TB) []byte {
			return []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":{"text":"a"},"startTimeUnixNano":[1],"kind":true}]}]}]}` + "\n")
		},
		"resourcespans-not-array.json": func(testing.TB) []byte { return []byte(`{"resourceSpans": "every span we have"}` + "\n") },
		"deeply-nested.json.gz": func(t testing.TB) []byte {
			const depth = 100_000
			return tracegen.GzipBytes(cat([]byte(`{"resourceSpans":`), bytes.Repeat([]byte("["), depth), bytes.Repeat([]byte("]"), depth), []byte("}\n")))
		},
		"not-objects.jsonl": func(testing.TB) []byte { return []byte("[1, 2, 3]\n42\n\"resourceSpans\"\nnull\n") },

		// Usable spans, then damage.
		"partial-cut-record.pb": func(t testing.TB) []byte {
			b := protoRecordsOf(t, corpusRequests(3))
			return b[:len(b)-9]
		},
		"partial-length-past-end.pb": func(t testing.TB) []byte {
			return cat(protoRecord(t, corpusRequests(1)[0]), []byte{0, 0, 0x03, 0xe8, 0x0a, 0x03, 0x12, 0x01, 0x00})
		},
		"partial-length-4gib.pb": func(t testing.TB) []byte {
			return cat(protoRecord(t, corpusRequests(1)[0]), []byte{0xff, 0xff, 0xff, 0xff, 0x0a, 0x01, 0x02, 0x03})
		},
		"partial-wrong-types.jsonl": func(t testing.TB) []byte {
			reqs := corpusRequests(2)
			return cat(jsonLine(t, reqs[0]), oneSpanLine(`"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"a","startTimeUnixNano":{"seconds":1},"kind":[2]`), jsonLine(t, reqs[1]))
		},
		"partial-nul-line.jsonl": func(t testing.TB) []byte {
			reqs := corpusRequests(2)
			return cat(jsonLine(t, reqs[0]), make([]byte, 64), []byte("\n"), jsonLine(t, reqs[1]))
		},
		"partial-truncated.jsonl.gz": func(t testing.TB) []byte {
			g := tracegen.GzipBytes(linesOf(t, corpusRequests(40)))
			return g[:len(g)*2/3]
		},
		// A bad line 3 MiB in, past the first read block: its place must
		// count the partial line carried from one block to the next.
		"partial-bad-line-past-2mib.jsonl.gz": func(t testing.TB) []byte {
			var b []byte
			for i := range 32 {
				b = append(b, bigLine(i+1)...)
			}
			b = append(b, "{\"resourceSpans\": [oops]}\n"...)
			return tracegen.GzipBytes(append(b, bigLine(33)...))
		},
		"partial-bad-checksum.jsonl.gz": func(t testing.TB) []byte {
			return tracegen.CorruptGzipTrailer(tracegen.GzipBytes(linesOf(t, corpusRequests(3))))
		},
		"partial-corrupt-zstd-record.bin": func(t testing.TB) []byte {
			data, _ := tracegen.ZstdRecordsWithBadSecond(mergeRequests(corpusRequests(3)))
			return data
		},
		"partial-truncated.jaeger.json": func(t testing.TB) []byte {
			b := tracegen.MustEncode(tracegen.WriteJaeger, mergeRequests(corpusRequests(2)))
			return b[:len(b)*3/4]
		},
		"partial-truncated.tempo.json": func(t testing.TB) []byte {
			b := tracegen.MustEncode(tracegen.WriteTempoBatches, mergeRequests(corpusRequests(2)))
			return b[:len(b)*3/4]
		},

		// An attribute value nested 20 000 arrays deep: past the limit, cut.
		"cut-deeply-nested-value.jsonl.gz": func(t testing.TB) []byte {
			const depth = 20_000
			v := cat(bytes.Repeat([]byte(`{"arrayValue":{"values":[`), depth), []byte(`{"stringValue":"x"}`), bytes.Repeat([]byte(`]}}`), depth))
			return tracegen.GzipBytes(oneSpanLine(goodIDs + `,"attributes":[{"key":"deep","value":` + string(v) + `}]`))
		},

		// Well-formed dumps of broken spans.
		"readable-parent-cycle.jsonl": func(t testing.TB) []byte {
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gateway")
			// Trace 1: 1 → 2 → 1, 3 → 4 → 5 → 3, 6 its own parent, 7
			// under the first cycle.
			d.add(ss, sp{trace: 1, id: 1, parent: 2, name: spans.SpanInvoke, end: time.Second})
			d.add(ss, sp{trace: 1, id: 2, parent: 1, name: spans.SpanInvoke, end: time.Second})
			d.add(ss, sp{trace: 1, id: 3, parent: 5, name: spans.SpanAcquire, end: time.Second, attrs: []any{spans.AttrCacheHit, true, spans.AttrCacheKey, "k-1"}})
			d.add(ss, sp{trace: 1, id: 4, parent: 3, name: spans.SpanInvoke, end: time.Second})
			d.add(ss, sp{trace: 1, id: 5, parent: 4, name: spans.SpanHandshake, end: time.Second})
			d.add(ss, sp{trace: 1, id: 6, parent: 6, name: spans.SpanCallTool, end: time.Second, attrs: []any{spans.AttrSessionID, "s-1"}})
			d.add(ss, sp{trace: 1, id: 7, parent: 1, name: spans.SpanCallTool, end: time.Second, attrs: []any{spans.AttrSessionID, "s-2"}})
			// Trace 2: one whole invocation around the cycles.
			d.b.NextID = 100
			d.invocation(ss, lease{trace: 2, end: time.Second, key: "k-1", hit: true, session: "s-1"})
			return jsonLine(t, d.td)
		},
		"readable-duplicate-span-ids.jsonl": func(t testing.TB) []byte {
			reqs := corpusRequests(2)
			// The first request resent whole (an exporter retry), and a
			// different span reusing an id of the second.
			d := newDump()
			ss := d.resource(spans.ResourceServiceName, "gateway")
			d.add(ss, sp{trace: 2, id: 17, name: "some.other.span", end: time.Second})
			return cat(jsonLine(t, reqs[0]), jsonLine(t, reqs[1]), jsonLine(t, reqs[0]), jsonLine(t, d.td))
		},
		"readable-missing-parent.jsonl": func(t testing.TB) []byte {
			reqs := corpusRequests(2)
			// Drop the second request's invoke span: its acquire and call
			// name a parent that never landed.
			reqs[1].ResourceSpans().At(0).ScopeSpans().At(0).Spans().RemoveIf(func(s ptrace.Span) bool { return s.Name() == spans.SpanInvoke })
			return linesOf(t, reqs)
		},
		"readable-end-before-start.jsonl": func(t testing.TB) []byte {
			td := corpusRequests(1)[0]
			forEachTestSpan(td, func(s ptrace.Span) {
				st, en := s.StartTimestamp(), s.EndTimestamp()
				s.SetStartTimestamp(en)
				s.SetEndTimestamp(st)
			})
			return jsonLine(t, td)
		},
		"readable-huge-attribute.jsonl.gz": func(t testing.TB) []byte {
			td := corpusRequests(1)[0]
			// Two 1.5 MiB values, one the analyzer keeps (a cache key) and
			// one it drops: a 3 MiB line, longer than a read block.
			huge := strings.Repeat("secret-looking-value-", 75_000)
			forEachTestSpan(td, func(s ptrace.Span) {
				switch s.Name() {
				case spans.SpanInvoke:
					s.Attributes().PutStr(spans.AttrCacheKey, huge)
				case spans.SpanCallTool:
					s.Attributes().PutStr("http.request.header.x-huge", huge)
				}
			})
			return tracegen.GzipBytes(jsonLine(t, td))
		},
		"readable-zero-length-frames.pb": func(t testing.TB) []byte {
			reqs := corpusRequests(2)
			zero := []byte{0, 0, 0, 0}
			return cat(zero, zero, protoRecord(t, reqs[0]), zero, protoRecord(t, reqs[1]), zero)
		},
	}
}
