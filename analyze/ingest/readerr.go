package ingest

import (
	"errors"
	"strconv"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/internal/textfmt"
)

// Sentinel causes of a [ReadError], for callers that branch on why an input
// could not be read (errors.Is sees through the ReadError).
var (
	// ErrNoInput: a path named nothing to read (no glob match, an empty
	// directory, no paths at all).
	ErrNoInput = errors.New("no input")
	// ErrEmptyInput: the file (or its decompressed content) has no bytes.
	ErrEmptyInput = errors.New("empty file")
	// ErrNotTraceDump: the content is none of the formats the reader knows.
	ErrNotTraceDump = errors.New("not a trace dump")
	// ErrFormatMismatch: a format forced with ReadOptions.Format does not
	// fit the content.
	ErrFormatMismatch = errors.New("content does not match the forced format")
	// ErrTruncated: the input ends in the middle of a record, line or
	// document.
	ErrTruncated = errors.New("truncated")
	// ErrRecordTooLarge: a length prefix or a line is longer than the reader
	// accepts (a corrupt prefix, or not a dump at all).
	ErrRecordTooLarge = errors.New("record too large")
	// ErrDecompressionLimit: a compressed input expands more than
	// ReadOptions.MaxDecompressionRatio allows (a decompression bomb, or a
	// dump more repetitive than any real one: raise the ratio to read it).
	ErrDecompressionLimit = errors.New("decompression limit exceeded")
	// ErrMemoryLimit: what the input holds would take more memory than
	// the budget (ReadOptions.MaxMemory) allows.
	ErrMemoryLimit = errors.New("memory budget exceeded")
)

// ReadError is a bad input: the file, the place and what was expected. Read
// returns one for every input it cannot read, and formats one into
// Input.Warnings for every problem it skips in non-strict mode, so a person
// can find the place: "dump.jsonl:17 (byte 5234): expected an OTLP
// ExportTraceServiceRequest JSON object: <cause>". The cause never quotes
// attribute values from the input, so a secret in a dump does not leak into
// an error or a log.
type ReadError struct {
	Path     string // the file path, or "-" for stdin
	Line     int    // 1-based line for line-oriented formats, 0 if not applicable
	Offset   int64  // byte offset in the (decompressed) stream, -1 if unknown
	Expected string // what the reader expected there
	Err      error  // the cause; may wrap one of the sentinel errors above
}

// Error formats the error as "path:line (byte offset): expected X: cause",
// leaving out the parts that are unknown.
func (e *ReadError) Error() string {
	var b strings.Builder
	b.WriteString(e.Path)
	if e.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(e.Line))
	}
	if e.Offset >= 0 {
		b.WriteString(" (byte ")
		b.WriteString(strconv.FormatInt(e.Offset, 10))
		b.WriteByte(')')
	}
	if e.Expected != "" {
		b.WriteString(": expected ")
		b.WriteString(e.Expected)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause, so errors.Is(err, ErrTruncated) and the like
// work on a ReadError.
func (e *ReadError) Unwrap() error { return e.Err }

// QuoteText quotes a piece of the input for an error message, clipped and
// escaped (textfmt.QuoteInput): the one helper every reader's error uses,
// so no raw control byte, invalid UTF-8 or bidi control from a dump reaches
// a terminal or a log through an error, and a huge token stays short.
func QuoteText(s string) string { return textfmt.QuoteInput(s) }
