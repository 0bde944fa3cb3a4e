package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
	// ErrSourceIncomplete: the input itself says data is missing (a
	// Jaeger answer's errors, a Tempo trace marked PARTIAL, an OTLP
	// partial success with rejected spans): what it holds is read, and
	// the input is partial.
	ErrSourceIncomplete = errors.New("the source says data is missing")
	// ErrInvalidTraceID: a span's trace id is all zeros or empty, which
	// W3C Trace Context and OTLP define as invalid. Such spans are left
	// out with a warning; it is an error only in strict mode, or when an
	// input held nothing else.
	ErrInvalidTraceID = errors.New("invalid trace id")
	// ErrNULBytes: the content is NUL bytes only, as a file a crash or a
	// full disk left behind: not a dump, and a sign that one is missing.
	ErrNULBytes = fmt.Errorf("%w: NUL bytes only", ErrNotTraceDump)
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

// maxCauseBytes bounds the cause an error prints: the readers' own causes
// are short, and a library's that quotes a key or a token of the input must
// not make an error of megabytes.
const maxCauseBytes = 512

// Error formats the error as "path:line (byte offset): expected X: cause",
// leaving out the parts that are unknown. Whatever in it may come from the
// input or the file system (the path, the cause) is escaped
// (textfmt.SafeText): no control byte, invalid UTF-8 or bidi control
// reaches the terminal or the log; the cause is clipped to maxCauseBytes.
func (e *ReadError) Error() string {
	var b strings.Builder
	b.WriteString(textfmt.SafeText(e.Path))
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
		b.WriteString(causeText(e.Err))
	}
	return b.String()
}

// causeText is an error's message made safe to print: encoding/json's
// "invalid character" names a byte of 0x80 to 0xff as the Latin-1 letter
// it is not (0xff as 'ÿ'): it is written as the byte, \xff. The rest is
// escaped and clipped.
func causeText(err error) string {
	msg := err.Error()
	if _, ok := errors.AsType[*json.SyntaxError](err); ok {
		const pre = "invalid character '"
		if j := strings.Index(msg, pre); j >= 0 {
			rest := msg[j+len(pre):]
			if r, n := utf8.DecodeRuneInString(rest); r >= 0x80 && r <= 0xff && strings.HasPrefix(rest[n:], "'") {
				msg = msg[:j+len(pre)] + fmt.Sprintf(`\x%02x`, r) + rest[n:]
			}
		}
	}
	if len(msg) > maxCauseBytes {
		cut := maxCauseBytes
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + fmt.Sprintf("… (%d bytes)", len(msg))
	}
	return textfmt.SafeText(msg)
}

// Unwrap returns the cause, so errors.Is(err, ErrTruncated) and the like
// work on a ReadError.
func (e *ReadError) Unwrap() error { return e.Err }

// QuoteText quotes a piece of the input for an error message, clipped and
// escaped (textfmt.QuoteInput): the one helper every reader's error uses,
// so no raw control byte, invalid UTF-8 or bidi control from a dump reaches
// a terminal or a log through an error, and a huge token stays short.
func QuoteText(s string) string { return textfmt.QuoteInput(s) }
