package engine

import "github.com/mcptrace/mcptrace/analyze/ingest"

// The readers live in package ingest (analyze/ingest). These aliases keep
// analyze's reading API for its callers (the CLI, the Collector connector,
// internal tools): an analyze.ReadError is an ingest.ReadError, and the
// sentinels are the same values, so errors.Is and errors.As see through
// either name.

// Format names a trace dump format: see [ingest.Format].
type Format = ingest.Format

// The formats Read understands: see [ingest.FormatAuto] and the others.
const (
	FormatAuto      = ingest.FormatAuto
	FormatOTLPJSON  = ingest.FormatOTLPJSON
	FormatOTLPProto = ingest.FormatOTLPProto
	FormatJaeger    = ingest.FormatJaeger
	FormatTempo     = ingest.FormatTempo
)

// Input describes one input after reading: see [ingest.Input].
type Input = ingest.Input

// ReadOptions configures the readers: see [ingest.ReadOptions]. Load sets
// its Keep field from the index options.
type ReadOptions = ingest.ReadOptions

// ReadError is a bad input, naming the file and the place: see
// [ingest.ReadError].
type ReadError = ingest.ReadError

// Sentinel causes of a ReadError: see package ingest.
var (
	ErrNoInput            = ingest.ErrNoInput
	ErrEmptyInput         = ingest.ErrEmptyInput
	ErrNotTraceDump       = ingest.ErrNotTraceDump
	ErrFormatMismatch     = ingest.ErrFormatMismatch
	ErrTruncated          = ingest.ErrTruncated
	ErrRecordTooLarge     = ingest.ErrRecordTooLarge
	ErrDecompressionLimit = ingest.ErrDecompressionLimit
	ErrMemoryLimit        = ingest.ErrMemoryLimit
	ErrTooDeep            = ingest.ErrTooDeep
)

// DefaultMaxDecompressionRatio is the decompression bound when none is
// given: see [ingest.DefaultMaxDecompressionRatio].
const DefaultMaxDecompressionRatio = ingest.DefaultMaxDecompressionRatio

// ParseFormat parses a format name as given to --input-format: see
// [ingest.ParseFormat].
func ParseFormat(s string) (Format, error) { return ingest.ParseFormat(s) }

// ParseByteSize parses a memory size as given to --max-memory: see
// [ingest.ParseByteSize].
func ParseByteSize(s string) (int64, error) { return ingest.ParseByteSize(s) }

// DefaultMaxMemory is the memory budget when none is given: see
// [ingest.DefaultMaxMemory].
func DefaultMaxMemory() int64 { return ingest.DefaultMaxMemory() }
