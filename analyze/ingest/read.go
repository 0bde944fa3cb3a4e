package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// Input describes one input after reading.
type Input struct {
	Path        string   // file path, or "-" for stdin
	Format      Format   // the format read (detected or forced); for the Collector's zstd records, the format inside them
	Compression string   // "", "gzip", "zstd"
	Spans       int      // spans read
	Warnings    []string // e.g. a truncated tail kept as partial, each naming file and place
	Partial     bool     // something could not be read and was skipped (non-strict mode)
	Size        int64    // the input's size in bytes when known (a regular file), else -1
	// Start and End are the earliest span start and the latest span end
	// read from the input, Unix nanoseconds; both 0 before its first span.
	// Inputs whose windows lie far apart are separate runs
	// (report.Runs).
	Start, End uint64
	// Backend describes what a backend's query read, for an input that is
	// one (package analyze/backend); nil for a file.
	Backend *BackendRead
	// LoneSurrogates counts the escaped lone UTF-16 surrogates the JSON
	// readers read as U+FFFD (rawstring.go): where a pool scope or key
	// holds U+FFFD, two keys may have been read as one, and the analysis
	// then cannot tell targets apart.
	LoneSurrogates int

	read *atomic.Int64 // bytes read from the input (compressed), for progress
}

// BytesRead is how many bytes of the input (as stored, before
// decompression) have been read so far; safe to call from a progress
// callback while the input is read.
func (in *Input) BytesRead() int64 {
	if in.read == nil {
		return 0
	}
	return in.read.Load()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// ReadOptions configures Read. The zero value detects formats, skips bad
// records with a warning, decodes on every CPU and reads stdin for "-".
type ReadOptions struct {
	Format  Format    // force a format (--input-format); FormatAuto detects from content (magic bytes, first token)
	Strict  bool      // a truncation or bad record is an error instead of a warning
	Workers int       // decode parallelism; 0 = GOMAXPROCS
	Stdin   io.Reader // what "-" reads; nil = os.Stdin
	// MaxDecompressionRatio bounds how many times its compressed size a
	// gzip or zstd input may expand to (past 16 MiB): 0 means
	// DefaultMaxDecompressionRatio, a negative value no bound. An input
	// past it stops with a *ReadError wrapping ErrDecompressionLimit.
	MaxDecompressionRatio float64
	// MaxMemory is the memory budget in bytes (--max-memory); 0 means
	// DefaultMaxMemory. A record (a JSON line, a document's array element
	// such as a whole Jaeger trace, a value a document reader skips)
	// longer than a sixteenth of it is cut: skipped with a warning, or an
	// error in strict mode. analyze's Load also stops with ErrMemoryLimit when the
	// index would outgrow half of it.
	MaxMemory int64
	// Keep names the attributes the batches of a BatchSink keep (the
	// projection decoders skip the others); the zero value keeps none.
	// A plain Sink gets pdata with every attribute and ignores Keep.
	Keep KeepAttrs
}

// Limits that keep a corrupt or hostile input from exhausting memory.
const (
	// maxRecordBytes caps one length-prefixed record (and one zstd record
	// decompressed): a larger prefix is corruption, never an allocation.
	maxRecordBytes = 256 << 20
	// maxLineBytes caps one JSON line (one compact OTLP JSON document)
	// whatever the memory budget; the budget's record cap is usually
	// lower.
	maxLineBytes = 1 << 30
)

// Read expands paths (files, directories walked recursively in lexical
// order, globs, "-" for stdin), detects each input's compression and format,
// decodes it (in parallel where the format allows) and pushes each decoded
// batch into sink: pdata through ConsumeTraces, or, when sink is also a
// BatchSink, the projection decoders' compact batches through ConsumeBatch
// (keeping the attributes opts.Keep names) where the format has one. The
// sink is called from the calling goroutine, inputs in order, batches in
// file order. A sink error stops reading and is returned.
// The returned Inputs describe every input read, even on error (what was
// read is not lost).
//
// pdata batches are handed over: the sink may retain td, Read never
// touches it again; a Batch is Read's and is recycled when ConsumeBatch
// returns. Batches with no spans are not passed to the sink. The *Input given
// to sink describes the input so far (Spans already counts td); it must not
// be retained past the call.
//
// Directory walks skip entries whose names start with a dot. A file named
// on the command line or matched by a glob must be a trace dump; a file
// found by walking a directory that is empty or not a trace dump at all (a
// README, a golden report) is skipped with a warning on its Input, or is an
// error in strict mode; an empty or NUL-only one (what a crash leaves of a
// dump) also marks its Input partial. In non-strict mode (the default) a bad line of JSON
// lines, a bad record of a length-prefixed file, or a truncated tail is
// skipped with a warning in Input.Warnings (and Input.Partial set), keeping
// everything read before; if nothing usable was read from a file, its first
// problem is returned as the error. In strict mode the first problem is the
// error. Every such error is a *ReadError naming the file and the place.
//
// Read stops promptly when ctx is done and returns ctx's error (wrapped with
// the path), even when a read is blocked on an idle stdin, a FIFO without a
// writer or a stalled file: the blocked read is abandoned (read_cancel.go).
func Read(ctx context.Context, paths []string, opts ReadOptions, sink Sink) ([]Input, error) {
	sources, err := expandPaths(paths)
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	startReader() // the read blocks stay pooled from one input to the next
	defer endReader()
	inputs := make([]Input, 0, len(sources))
	for _, src := range sources {
		if err := ctx.Err(); err != nil {
			return inputs, fmt.Errorf("read %s: %w", src.path, err)
		}
		in, err := readSource(ctx, src, opts, workers, sink)
		inputs = append(inputs, in)
		if err != nil {
			return inputs, err
		}
	}
	return inputs, nil
}

// readSource reads one input and describes it. An unreadable walked entry
// is not read, and a walked file that is no trace dump is skipped (see
// skipNotDump): neither is an error, both are said on the Input.
func readSource(ctx context.Context, src source, opts ReadOptions, workers int, sink Sink) (Input, error) {
	in := Input{Path: src.path, Size: -1, read: new(atomic.Int64)}
	if src.unreadable != "" {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: skipped: %s, though its name says it is a trace dump: the input is partial", textfmt.SafeText(src.path), src.unreadable))
		in.Partial = true
		return in, nil
	}
	err := readInput(ctx, src, opts, workers, &in, sink)
	if err != nil && src.walked && !opts.Strict && (errors.Is(err, ErrNotTraceDump) || errors.Is(err, ErrEmptyInput)) {
		skipNotDump(&in, src.path, err)
		err = nil
	}
	return in, err
}

// skipNotDump says on in why a walked file that is no trace dump (err) was
// skipped. A README or a report next to the dumps in a walked directory is
// not an input: skip it, say so. An empty or NUL-filled file is skipped
// too, but it is what a crash or a full disk leaves of a dump: the run is
// partial. So is a file whose name says it is a dump (namedLikeDump) and
// whose bytes are not one: its name is the writer's word that spans were
// there; and a .json that is not even JSON (notEvenJSON): a report or a
// baseline beside the dumps is valid JSON, so such a file can only be a
// dump damaged from its first byte.
func skipNotDump(in *Input, path string, err error) {
	switch {
	case errors.Is(err, ErrEmptyInput), errors.Is(err, ErrNULBytes):
		why := ErrEmptyInput
		if errors.Is(err, ErrNULBytes) {
			why = ErrNULBytes
		}
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: skipped: %v (a dump cut short by a crash or a full disk?): the input is partial", textfmt.SafeText(path), why))
		in.Partial = true
	case namedLikeDump(path):
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: skipped: %v, though its name says it is one (a dump damaged from its first byte?): the input is partial", textfmt.SafeText(path), ErrNotTraceDump))
		in.Partial = true
	case notEvenJSON(path):
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: skipped: %v, nor JSON at all, though named .json (a dump damaged from its first byte?): the input is partial", textfmt.SafeText(path), ErrNotTraceDump))
		in.Partial = true
	default:
		in.Warnings = append(in.Warnings, fmt.Sprintf("%s: skipped: %v", textfmt.SafeText(path), ErrNotTraceDump))
	}
}

// source is one input found by expandPaths.
type source struct {
	path   string
	stdin  bool
	walked bool // found by walking a directory or expanding a glob rather than named
	// unreadable, for a walked entry named like a dump that is no regular
	// file (a link to a device, a FIFO, a link leading nowhere), says what
	// it is; such an entry is not read, and makes the run partial.
	unreadable string
}

const stdinPath = "-"

// expandPaths turns the command line's paths into the list of inputs, in
// order: each path as given, a directory replaced by its files in lexical
// order, a glob by its matches in lexical order.
func expandPaths(paths []string) ([]source, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("%w: give a file, a directory, a glob or - for stdin", ErrNoInput)
	}
	var out []source
	sawStdin := false
	for _, p := range paths {
		if p == stdinPath {
			if sawStdin {
				return nil, &ReadError{Path: p, Offset: -1, Expected: "stdin named once", Err: errors.New("- given twice: stdin can be read only once")}
			}
			sawStdin = true
			out = append(out, source{path: p, stdin: true})
			continue
		}
		fi, err := os.Stat(p)
		switch {
		case err == nil && fi.IsDir():
			files, err := walkDir(p)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		case err == nil:
			out = append(out, source{path: p})
		case errors.Is(err, fs.ErrNotExist) && hasGlobMeta(p):
			matches, err := expandGlob(p)
			if err != nil {
				return nil, err
			}
			out = append(out, matches...)
		default:
			return nil, &ReadError{Path: p, Offset: -1, Expected: "a file, a directory, a glob or - for stdin", Err: unwrapPathError(err)}
		}
	}
	return out, nil
}

// expandGlob returns the inputs a glob names, in lexical order: its
// matching files, and the files of its matching directories. A glob
// matching nothing is an error, as a missing file is.
func expandGlob(p string) ([]source, error) {
	matches, err := filepath.Glob(p)
	if err != nil {
		return nil, &ReadError{Path: p, Offset: -1, Expected: "a valid glob pattern", Err: err}
	}
	if len(matches) == 0 {
		return nil, &ReadError{Path: p, Offset: -1, Expected: "a glob matching at least one file", Err: ErrNoInput}
	}
	slices.Sort(matches)
	var out []source
	for _, m := range matches {
		fi, err := os.Stat(m)
		if err != nil {
			return nil, &ReadError{Path: m, Offset: -1, Expected: "a readable file", Err: err}
		}
		if fi.IsDir() {
			files, err := walkDir(m)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
			continue
		}
		// Globbed like walked: a README or a golden report the
		// pattern also matched is skipped with a warning.
		out = append(out, source{path: m, walked: true})
	}
	return out, nil
}

// unwrapPathError drops the *fs.PathError wrapper, whose message repeats
// the path the ReadError already names.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func hasGlobMeta(p string) bool {
	return strings.ContainsAny(p, `*?[`)
}

// walkDir lists the regular files under root in lexical order, skipping
// entries whose names start with a dot (editor and VCS droppings).
func walkDir(root string) ([]source, error) {
	var out []source
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return &ReadError{Path: path, Offset: -1, Expected: "a readable directory", Err: unwrapPathError(err)}
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		if !d.Type().IsRegular() {
			// A symlink or other special file: follow it only to a regular
			// file. One named like a dump that leads elsewhere is what is
			// left where a dump should be: listed as unreadable, so the run
			// is partial; any other is not an input.
			fi, err := os.Stat(path)
			if err != nil || !fi.Mode().IsRegular() {
				if namedLikeDump(path) {
					out = append(out, source{path: path, walked: true, unreadable: notRegular(fi, err)})
				}
				return nil
			}
		}
		out = append(out, source{path: path, walked: true})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, &ReadError{Path: root, Offset: -1, Expected: "a directory holding trace dumps", Err: fmt.Errorf("%w: no files in the directory", ErrNoInput)}
	}
	return out, nil
}

// readInput reads one input into in, calling sink with its batches.
func readInput(ctx context.Context, src source, opts ReadOptions, workers int, in *Input, sink Sink) error {
	file, size, closeRaw, err := openCancelable(ctx, src, opts.Stdin)
	if err != nil {
		return err
	}
	defer closeRaw()
	cr := newCancelReader(ctx, file)
	defer cr.close()
	var raw io.Reader = cr
	in.Size = size
	if in.read != nil {
		raw = countingReader{r: raw, n: in.read}
	}

	s, err := openStream(src.path, raw, size, opts.MaxDecompressionRatio, opts.budget().zstdWindow())
	if err != nil {
		return err
	}
	defer s.close()
	in.Compression = s.compression

	head, err := readHead(ctx, src.path, s)
	if err != nil {
		return err
	}
	head, det := detectStream(s, head, opts.Format == FormatAuto)
	format, err := chooseFormat(src.path, opts.Format, det)
	if err != nil {
		return err
	}
	in.Format = format
	head = skipBOM(s, head, det, format)
	st, keep := newFileState(in, opts, sink)
	lookup := format
	if det.framedZstd {
		lookup = FormatOTLPProto // the Collector's zstd records hold protobuf or JSON
	}
	spec, ok := formatSpecOf(lookup)
	if !ok {
		return &ReadError{Path: src.path, Offset: 0, Expected: expectedDump, Err: fmt.Errorf("%w (%s)", ErrNotTraceDump, det.looks)}
	}
	produce, decode, closeFormat, err := spec.open(openArgs{s: s, head: head, in: in, opts: opts, det: det, workers: workers, keep: keep, share: st.share})
	if err != nil {
		return err
	}
	defer closeFormat()

	if err := runPipeline(ctx, workers, produce, checkSpans(src.path, decode), st.consume, st.share); err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return fmt.Errorf("read %s: %w", src.path, err)
		}
		return err
	}
	return readOutcome(src.path, s, st, in)
}

// newFileState returns the state of one input's read into sink under
// opts, with the budget's share in flight of its records, and the
// attributes the projection decoders keep (nil when sink takes no
// batches: then pdata decodes every record).
func newFileState(in *Input, opts ReadOptions, sink Sink) (*fileState, *keepSet) {
	st := &fileState{in: in, strict: opts.Strict, sink: sink, share: newInflight(opts.budget().inflightShare())}
	st.holding, _ = sink.(HoldingSink)
	var keep *keepSet
	if bs, ok := sink.(BatchSink); ok {
		keep, st.batches = newKeepSet(opts.Keep), bs
	}
	return st, keep
}

// readHead peeks at the start of the input: an error when it is empty
// (naming the compression it was inside) or cannot be read, or the
// context was cancelled.
func readHead(ctx context.Context, path string, s *stream) ([]byte, error) {
	head, perr := s.peekHead()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("read %s: %w", path, ctx.Err())
	}
	if len(head) > 0 {
		return head, nil
	}
	if perr != nil && perr != io.EOF {
		return nil, s.problem(0, "", 0, perr)
	}
	if s.compression != "" {
		return nil, &ReadError{Path: path, Offset: -1, Expected: "a trace dump inside the " + s.compression + " stream", Err: ErrEmptyInput}
	}
	return nil, &ReadError{Path: path, Offset: -1, Expected: "a trace dump", Err: ErrEmptyInput}
}

// skipBOM skips the byte order mark that JSON written by some Windows
// tools starts with, which JSON decoders refuse, and returns the head
// past it.
func skipBOM(s *stream, head []byte, det detection, format Format) []byte {
	if !bytes.HasPrefix(head, utf8BOM) || det.framedZstd || format == FormatOTLPProto {
		return head
	}
	s.r.Discard(len(utf8BOM))
	s.off += int64(len(utf8BOM))
	return head[len(utf8BOM):]
}

// readOutcome is what a read that ran to its end returns: the
// decompression limit's error, the first problem when nothing usable was
// read, or nil (with a warning when the dump held no spans).
func readOutcome(path string, s *stream, st *fileState, in *Input) error {
	if errors.Is(s.err, ErrDecompressionLimit) {
		// Not a damaged tail to skip: the rest of the input was never read.
		return &ReadError{Path: path, Offset: s.off, Expected: "a " + s.compression + " stream within the decompression limit", Err: s.err}
	}
	if st.first != nil && in.Spans == 0 {
		return st.first // nothing usable was read
	}
	if st.first == nil && in.Spans == 0 {
		in.Warnings = append(in.Warnings, textfmt.SafeText(path)+": no spans in the dump")
	}
	return nil
}

// openSource opens a file or stdin. size is the byte count when known
// (regular files), else -1.
func openSource(src source, stdin io.Reader) (io.Reader, int64, func(), error) {
	if src.stdin {
		if stdin == nil {
			stdin = os.Stdin
		}
		size := int64(-1)
		if f, ok := stdin.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				size = fi.Size()
			}
		}
		return stdin, size, func() {}, nil
	}
	f, err := os.Open(src.path)
	if err != nil {
		return nil, 0, nil, &ReadError{Path: src.path, Offset: -1, Expected: "a readable file", Err: unwrapPathError(err)}
	}
	size := int64(-1)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	return f, size, func() { f.Close() }, nil
}

// chooseFormat reconciles a forced format with what detection saw. A forced
// format is trusted when detection is unsure, and refused when the content
// clearly is something else (a JSON file forced as protobuf, a Jaeger
// document forced as OTLP JSON). Tempo may be forced on OTLP-shaped JSON:
// Tempo's newest shape is plain resourceSpans with base64 ids.
func chooseFormat(path string, forced Format, det detection) (Format, error) {
	if forced == FormatAuto {
		if det.format == FormatAuto {
			why := ErrNotTraceDump
			if det.nul {
				why = ErrNULBytes
			}
			return FormatAuto, &ReadError{Path: path, Offset: 0, Expected: expectedDump, Err: fmt.Errorf("%w (%s)", why, det.looks)}
		}
		return det.format, nil
	}
	ok := false
	switch {
	case det.format == FormatAuto, det.format == forced:
		ok = true
	case det.framedZstd:
		// The Collector's zstd records hold protobuf or JSON.
		ok = forced == FormatOTLPProto || forced == FormatOTLPJSON
	case forced == FormatTempo && det.format == FormatOTLPJSON:
		ok = true
	}
	if !ok {
		return forced, &ReadError{Path: path, Offset: 0, Expected: forced.String() + " content (forced by the input format)",
			Err: fmt.Errorf("%w: the content looks like %s (%s)", ErrFormatMismatch, det.format, det.looks)}
	}
	return forced, nil
}

// fileState accumulates what one input's pipeline delivered.
type fileState struct {
	in      *Input
	strict  bool
	sink    Sink
	batches BatchSink   // sink as a BatchSink, when it is one (the projection decoders are on)
	holding HoldingSink // sink as a HoldingSink, when it is one
	share   *inflight   // the budget's share in flight, which a Hold gives back to
	first   *ReadError  // first problem skipped (non-strict)
	// cut, lone and noTrace are the input's warnings that count, over
	// its records, the values cut past MaxDepth (depth.go), the escaped
	// lone surrogates read as U+FFFD (rawstring.go) and the spans left out
	// for an invalid trace id (span_ids.go).
	cut, lone, noTrace tally
}

// noteLone counts the escaped lone surrogates of a record in the input
// (Input.LoneSurrogates) and in its one warning about them: the strings
// that held them were altered, and two values (pool keys) that differ only
// there were read as one, so the analysis cannot tell such keys apart.
func (st *fileState) noteLone(l loneNote) {
	if l.n == 0 {
		return
	}
	st.in.LoneSurrogates += l.n
	at := fmt.Sprintf("%s (record at byte %d)", textfmt.SafeText(st.in.Path), l.at)
	st.lone.add(st.in, at, l.n, func(at string, n int) string {
		return fmt.Sprintf("%s: %d escaped lone UTF-16 surrogates (\\uD800-\\uDFFF without their pair) "+
			"read as U+FFFD, as every reader reads them: strings that differ only there are read as one, "+
			"so where a pool scope or key holds U+FFFD, the figures that tell keys apart are not measurable, "+
			"and where a session identity does, the figures that count sessions are bounds or not measurable "+
			"(have the exporter write valid UTF-8)", at, n)
	})
}

// noteCut counts the values cut from a record in the input's one warning
// about them, which names the first place: a dump of a million spans each
// with such a value gets one line, not a million. The span is read, so
// the input is not partial.
func (st *fileState) noteCut(c deepCut) {
	if c.at == nil {
		return
	}
	st.cut.add(st.in, c.at.Error(), max(c.n, 1), func(at string, n int) string {
		return fmt.Sprintf("%s: cut there, the rest of the record kept (values cut in this input: %d)", at, n)
	})
}

// tally is one warning of an input that counts one kind of thing over the
// input's records and names the first place: a dump of a million spans
// each with one gets one line, not a million.
type tally struct {
	n   int    // counted so far
	at  string // the first place
	idx int    // the warning's index in the input's Warnings (valid once n > 0)
}

// add counts n more at place at (kept only for the first) and writes the
// warning again as say words it.
func (t *tally) add(in *Input, at string, n int, say func(at string, n int) string) {
	if t.n == 0 {
		t.idx, t.at = len(in.Warnings), at
		in.Warnings = append(in.Warnings, "")
	}
	t.n += n
	in.Warnings[t.idx] = say(t.at, t.n)
}

// consume takes the results of one input in order: a batch goes to the
// sink, a problem becomes the error (strict) or a warning.
func (st *fileState) consume(r *result) error {
	if r.prob != nil {
		if st.strict || errors.Is(r.prob, ErrDecompressionLimit) || errors.Is(r.prob, ErrMemoryLimit) {
			// A limit is not damage to skip: reading on would only hit it again.
			return r.prob
		}
		if st.first == nil {
			st.first = r.prob
		}
		st.in.Warnings = append(st.in.Warnings, r.prob.Error())
		st.in.Partial = true
		return nil
	}
	if r.format != FormatAuto {
		st.in.Format = r.format
	}
	st.noteCut(r.cut)
	st.noteLone(r.lone)
	if err := st.noteNoTrace(r.noTrace); err != nil {
		return err
	}
	if r.batch != nil { // a projection decoder's batch: only a BatchSink asks for them
		return st.consumeBatch(r.batch)
	}
	return st.consumeTraces(r)
}

// consumeBatch counts a projection decoder's batch b into the input and
// hands it to the sink; Read's reference to it is let go after, so the
// batch is recycled unless the sink kept it.
func (st *fileState) consumeBatch(b *Batch) error {
	if len(b.Spans) == 0 {
		putBatch(b)
		return nil
	}
	st.in.Spans += len(b.Spans)
	for i := range b.Spans {
		st.in.Widen(b.Spans[i].Start, b.Spans[i].End)
	}
	b.refs.start() // Read's own; the sink may Keep more
	err := st.batches.ConsumeBatch(st.in, b)
	Release(b) // recycled now unless the sink kept it
	return err
}

// consumeTraces counts r's pdata batch into the input and hands it to
// the sink: with its charge to a HoldingSink, which then answers for it
// (r.held is handed over), else plainly.
func (st *fileState) consumeTraces(r *result) error {
	n := r.td.SpanCount()
	if n == 0 {
		return nil
	}
	st.in.Spans += n
	for _, rs := range r.td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				st.in.Widen(uint64(sp.StartTimestamp()), uint64(sp.EndTimestamp()))
			}
		}
	}
	if st.holding == nil || r.held == 0 {
		return st.sink.ConsumeTraces(st.in, r.td)
	}
	h := &Hold{share: st.share, n: r.held}
	r.held = 0     // the hold gives it back, once the sink's last reader is done
	h.refs.start() // Read's own; the sink may Keep more
	err := st.holding.ConsumeHeldTraces(st.in, r.td, h)
	h.Release()
	return err
}

// Widen takes one span's start and end into the input's window; an end
// before its start counts as the start, and a span without a start is
// left out (it would stretch the window back to 1970).
func (in *Input) Widen(start, end uint64) {
	if start == 0 {
		return
	}
	end = max(end, start)
	if in.Start == 0 && in.End == 0 {
		in.Start, in.End = start, end
		return
	}
	in.Start, in.End = min(in.Start, start), max(in.End, end)
}

// dumpSuffixes are the file name endings only trace dumps wear: JSON lines
// (the Collector's file exporter) and protobuf records, each possibly
// compressed. A plain .json is left out on purpose: analysis reports and
// baselines sit next to dumps under that name.
var dumpSuffixes = []string{".jsonl", ".ndjson", ".pb", ".binpb", ".otlp", ".proto"}

// namedLikeDump reports whether path's name ends like a trace dump's, a
// compression suffix (.gz, .zst, .zstd) aside.
func namedLikeDump(path string) bool {
	name := strings.ToLower(filepath.Base(path))
	for _, c := range []string{".gz", ".zst", ".zstd"} {
		name = strings.TrimSuffix(name, c)
	}
	for _, s := range dumpSuffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// maxJSONSniff bounds how much of a walked .json file notEvenJSON reads: a
// larger file is taken for what it says it is and skipped whole.
const maxJSONSniff = 16 << 20

// notEvenJSON reports whether path, a plain .json file, holds bytes that are
// not JSON at all. encoding/json's validity scan is iterative (its nesting
// stack is a slice with a fixed depth limit), so hostile nesting cannot
// overflow the stack here.
func notEvenJSON(path string) bool {
	if !strings.HasSuffix(strings.ToLower(filepath.Base(path)), ".json") {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJSONSniff+1))
	if err != nil || len(data) > maxJSONSniff {
		return false
	}
	return !json.Valid(data)
}

// notRegular says what a walked entry that is no regular file is, from its
// Stat (fi, or the error that Stat returned).
func notRegular(fi fs.FileInfo, err error) string {
	switch {
	case err != nil:
		return "a link that leads to no readable file (" + textfmt.SafeText(unwrapPathError(err).Error()) + ")"
	case fi.Mode()&fs.ModeDevice != 0:
		return "a device, not a file"
	case fi.Mode()&fs.ModeNamedPipe != 0:
		return "a FIFO, not a file"
	case fi.IsDir():
		return "a link to a directory, not a file"
	}
	return "not a regular file (" + fi.Mode().Type().String() + ")"
}
