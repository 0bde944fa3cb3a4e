// Package ingest reads trace dumps and pushes what it decodes into a sink.
//
// It is the reading half of mcptrace's analyzer, kept apart so that nothing
// past it knows which format a span came from: [Read] expands paths (files,
// directories, globs, "-" for stdin), removes gzip or zstd, detects the
// format (OTLP JSON lines or document, OTLP protobuf length-prefixed
// records, Jaeger, Tempo), splits the input into records, decodes them on
// every CPU and hands the results to a [Sink] in input order, from the
// calling goroutine.
//
// # Formats
//
// Each format is one file (read_otlpjson.go, read_otlpproto.go,
// read_jaeger.go, read_tempo.go) and one entry of the table in formats.go:
// the top-level JSON keys or the sniffer that detect it, and how its
// records are produced and decoded. Adding a format touches those two
// places.
//
// # Sinks
//
// A [Sink] gets pdata ([ptrace.Traces]) with every attribute. A sink that
// also implements [BatchSink] (found by type assertion, as pgx finds its
// optional tracers) gets compact [Batch] values from the projection decoders of
// OTLP JSON lines (fastjson.go) and OTLP protobuf (fastproto.go): ids,
// names, kinds, times, status codes and only the attributes
// [ReadOptions.Keep] names, the rest skipped without being built. Records
// outside the shape a projection decoder takes still come through
// ConsumeTraces, decoded by pdata, which also produces the exact error of a
// malformed record. analyze's index is such a sink. A writer writes its
// spans alike, so the JSON lines decoder reads a span, and a span's
// attribute array, by the shape of an earlier one where it fits: the text
// between the values compared where it stands, only the values read
// (span_shape.go, attr_shape.go); what does not fit is read key by key.
//
// # Bad input
//
// Every input that cannot be read is a [*ReadError] naming the file, the
// place (line or byte offset) and what was expected; in non-strict mode a
// bad record is skipped with a warning and what was read is kept. A memory
// budget ([ReadOptions.MaxMemory]) caps records (JSON lines, document
// elements, length-prefixed records as stored and once decompressed) and a
// zstd stream's window, and a decompression ratio caps gzip and zstd
// expansion, so hostile input ends with a clear error rather than
// exhausting memory; what the records in flight between the read and the
// sink hold (decompressed zstd records, read blocks) is charged to a
// share of the budget before it is taken. One nesting limit, [MaxDepth],
// is checked on every record before a decoder that recurses sees it
// (depth.go): a value nested deeper is cut at the limit and its span read,
// with one warning per input naming the byte, the key path and the
// attribute of the first cut and how many were cut.
// Error text is escaped and clipped ([QuoteText], textfmt.SafeText): no raw
// control byte, invalid UTF-8 or bidi control from a dump reaches a
// terminal through an error.
//
// # Missing data
//
// A source's own word that data is missing makes the input partial
// (Input.Partial, a warning naming the file and the reason; an error in
// strict mode), like damage does: a Jaeger answer's errors, a Tempo
// trace's status PARTIAL or its error field, an OTLP document's
// partialSuccess with rejected spans ([ErrSourceIncomplete], signals.go),
// and, in a walked directory, an empty or NUL-only file beside the dumps,
// what a crash or a full disk leaves of one ([ErrNULBytes]).
package ingest
