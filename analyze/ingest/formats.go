package ingest

import (
	"fmt"
	"strings"
)

// Format names a trace dump format.
type Format string

// The formats Read understands. Compression (gzip, zstd) is not a format:
// it is detected and removed around any of them.
const (
	FormatAuto      Format = ""           // detect from content
	FormatOTLPJSON  Format = "otlp-json"  // one ExportTraceServiceRequest/TracesData, or JSON lines of them
	FormatOTLPProto Format = "otlp-proto" // the Collector file exporter's 4-byte big-endian length-prefixed records
	FormatJaeger    Format = "jaeger"     // Jaeger /api/traces JSON
	FormatTempo     Format = "tempo"      // Grafana Tempo trace JSON (batches or trace.resourceSpans)
)

// formatSpec is one input format: how detection recognises it and how its
// records are produced and decoded. A new format is one file with its
// decoder and one entry in formats.
type formatSpec struct {
	format Format
	// jsonKeys are the top-level keys of a JSON document that identify
	// the format (detect reads the first of them it meets).
	jsonKeys []string
	// sniff recognises a binary format from the input's first bytes
	// (after any gzip or zstd layer); nil for JSON formats.
	sniff func(head []byte) (detection, bool)
	// open returns the producer that splits the input into records and
	// the decoder of one record. keep is non-nil when the sink takes
	// compact batches (a BatchSink): a format with a projection decoder
	// then decodes into a Batch. closeFn releases what open took.
	open func(o openArgs) (produce producer, decode func(rec) result, closeFn func(), err error)
}

// openArgs is what a format's open gets.
type openArgs struct {
	s       *stream
	head    []byte // the first bytes of the stream, byte order mark removed
	in      *Input
	opts    ReadOptions
	det     detection
	workers int
	keep    *keepSet  // non-nil: decode into batches where the format can
	share   *inflight // the budget's share for records in flight, charged by readers whose records grow as they decode
}

// formats is the one table of input formats: detection keys, sniffing and
// decoding. Detection tries the sniffers in this order.
var formats = []formatSpec{
	{format: FormatOTLPJSON, jsonKeys: []string{"resourceSpans", "resource_spans"}, open: openOTLPJSON},
	{format: FormatOTLPProto, sniff: sniffLengthPrefixed, open: openOTLPProto},
	{format: FormatJaeger, jsonKeys: []string{"data"}, open: openJaeger},
	{format: FormatTempo, jsonKeys: []string{"batches", "trace"}, open: openTempo},
}

// formatSpecOf returns the table entry of f.
func formatSpecOf(f Format) (formatSpec, bool) {
	for _, spec := range formats {
		if spec.format == f {
			return spec, true
		}
	}
	return formatSpec{}, false
}

// jsonFormatKeys maps each deciding top-level JSON key to its format.
var jsonFormatKeys = func() map[string]Format {
	m := map[string]Format{}
	for _, spec := range formats {
		for _, k := range spec.jsonKeys {
			m[k] = spec.format
		}
	}
	return m
}()

// FormatNames lists the names ParseFormat accepts, "auto" first: the one
// list its error message and the CLI's shell completion of --input-format
// are made from.
func FormatNames() []string {
	names := []string{"auto"}
	for _, spec := range formats {
		names = append(names, string(spec.format))
	}
	return names
}

// formatNames spells FormatNames for ParseFormat's error message.
var formatNames = func() string {
	names := FormatNames()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}()

// String returns the format's name, "auto" for FormatAuto.
func (f Format) String() string {
	if f == FormatAuto {
		return "auto"
	}
	return string(f)
}

// ParseFormat parses a format name as given to --input-format: "auto" (or
// empty) for detection, otlp-json, otlp-proto, jaeger or tempo. Case and
// surrounding spaces do not matter.
func ParseFormat(s string) (Format, error) {
	f := Format(strings.ToLower(strings.TrimSpace(s)))
	if f == "" || f == "auto" {
		return FormatAuto, nil
	}
	if _, ok := formatSpecOf(f); ok {
		return f, nil
	}
	return FormatAuto, fmt.Errorf("unknown input format %q: expected %s", s, formatNames)
}
