package tracegen

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// WriteFunc writes a ptrace.Traces to w in one dump format.
type WriteFunc func(w io.Writer, td ptrace.Traces) error

// Encoding is one dump format the analyzer reads, with the file extension
// the generator gives it and what the analyzer should report about it.
type Encoding struct {
	// Name identifies the encoding in tests and in the generator's flags.
	Name string
	// Ext is the file extension, without the leading dot.
	Ext string
	// Format is the analyzer's name of the (innermost) format: otlp-json,
	// otlp-proto, jaeger or tempo.
	Format string
	// Compression is "", "gzip" or "zstd".
	Compression string
	// Write encodes a dump.
	Write WriteFunc
}

// Encodings returns every encoding, in the order the generator writes them.
func Encodings() []Encoding {
	return []Encoding{
		{"otlp-jsonl", "otlp.jsonl", "otlp-json", "", WriteOTLPJSONLines},
		{"otlp-json", "otlp.json", "otlp-json", "", WriteOTLPJSON},
		{"otlp-proto", "otlp.pb", "otlp-proto", "", WriteOTLPProto},
		{"otlp-jsonl-gzip", "otlp.jsonl.gz", "otlp-json", "gzip", Gzip(WriteOTLPJSONLines)},
		{"otlp-proto-zstd", "otlp.pb.zst", "otlp-proto", "zstd", Zstd(WriteOTLPProto)},
		{"otlp-proto-zstd-records", "otlp-proto-zstd-records.bin", "otlp-proto", "zstd", WriteOTLPProtoZstdRecords},
		{"otlp-json-zstd-records", "otlp-json-zstd-records.bin", "otlp-json", "zstd", WriteOTLPJSONZstdRecords},
		{"jaeger", "jaeger.json", "jaeger", "", WriteJaeger},
		{"tempo", "tempo.json", "tempo", "", WriteTempoBatches},
		{"tempo-v2", "tempo-v2.json", "tempo", "", WriteTempoTrace},
	}
}

// EncodingByName returns the encoding called name.
func EncodingByName(name string) (Encoding, error) {
	var names []string
	for _, e := range Encodings() {
		if e.Name == name {
			return e, nil
		}
		names = append(names, e.Name)
	}
	return Encoding{}, fmt.Errorf("unknown encoding %q: expected one of %q", name, names)
}

// Records splits td into one request per resource, the way an SDK exports
// one batch per resource: each becomes one line or one record of a dump.
func Records(td ptrace.Traces) []ptrace.Traces {
	out := make([]ptrace.Traces, 0, td.ResourceSpans().Len())
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		nt := ptrace.NewTraces()
		td.ResourceSpans().At(i).CopyTo(nt.ResourceSpans().AppendEmpty())
		out = append(out, nt)
	}
	return out
}

// WriteOTLPJSONLines writes td as the Collector's file exporter does in its
// default JSON mode: one ExportTraceServiceRequest per line (one per
// resource here), marshaled by pdata.
func WriteOTLPJSONLines(w io.Writer, td ptrace.Traces) error {
	var m ptrace.JSONMarshaler
	bw := bufio.NewWriter(w)
	for _, rec := range Records(td) {
		buf, err := m.MarshalTraces(rec)
		if err != nil {
			return fmt.Errorf("marshal OTLP JSON: %w", err)
		}
		// bufio.Writer errors are sticky: Flush reports the first one.
		bw.Write(buf)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// WriteOTLPJSON writes td as one pretty-printed OTLP JSON document, the
// shape a person saves from an API or a jq pipeline.
func WriteOTLPJSON(w io.Writer, td ptrace.Traces) error {
	var m ptrace.JSONMarshaler
	buf, err := m.MarshalTraces(td)
	if err != nil {
		return fmt.Errorf("marshal OTLP JSON: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf, "", "  "); err != nil {
		return fmt.Errorf("indent OTLP JSON: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// WriteOTLPProto writes td as the Collector's file exporter does with
// format: proto: each request (one per resource) preceded by its length as
// a 4-byte big-endian integer.
func WriteOTLPProto(w io.Writer, td ptrace.Traces) error {
	var m ptrace.ProtoMarshaler
	return writeFramed(w, td, func(rec ptrace.Traces) ([]byte, error) { return m.MarshalTraces(rec) })
}

// WriteOTLPProtoZstdRecords writes td as the Collector's file exporter does
// with format: proto and compression: zstd: each record is compressed into
// its own zstd frame, and the frame is length-prefixed.
func WriteOTLPProtoZstdRecords(w io.Writer, td ptrace.Traces) error {
	var m ptrace.ProtoMarshaler
	return writeZstdRecords(w, td, m.MarshalTraces)
}

// WriteOTLPJSONZstdRecords writes td as the Collector's file exporter does
// with format: json and compression: zstd: the JSON of each request in its
// own zstd frame, length-prefixed (not newline-separated).
func WriteOTLPJSONZstdRecords(w io.Writer, td ptrace.Traces) error {
	var m ptrace.JSONMarshaler
	return writeZstdRecords(w, td, m.MarshalTraces)
}

func writeZstdRecords(w io.Writer, td ptrace.Traces, marshal func(ptrace.Traces) ([]byte, error)) error {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return fmt.Errorf("zstd encoder: %w", err)
	}
	defer enc.Close()
	return writeFramed(w, td, func(rec ptrace.Traces) ([]byte, error) {
		buf, err := marshal(rec)
		if err != nil {
			return nil, err
		}
		return enc.EncodeAll(buf, nil), nil
	})
}

func writeFramed(w io.Writer, td ptrace.Traces, record func(ptrace.Traces) ([]byte, error)) error {
	bw := bufio.NewWriter(w)
	for _, rec := range Records(td) {
		buf, err := record(rec)
		if err != nil {
			return fmt.Errorf("marshal record: %w", err)
		}
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(len(buf)))
		bw.Write(hdr[:])
		bw.Write(buf)
	}
	return bw.Flush()
}

// Gzip wraps an encoding in a gzip stream (no name, no modification time,
// so the output is deterministic).
func Gzip(write WriteFunc) WriteFunc {
	return func(w io.Writer, td ptrace.Traces) error {
		zw := gzip.NewWriter(w)
		if err := write(zw, td); err != nil {
			zw.Close()
			return err
		}
		return zw.Close()
	}
}

// Zstd wraps an encoding in one standard zstd stream, as `zstd file` or the
// Collector's native stream compression writes it.
func Zstd(write WriteFunc) WriteFunc {
	return func(w io.Writer, td ptrace.Traces) error {
		zw, err := zstd.NewWriter(w, zstd.WithEncoderConcurrency(1))
		if err != nil {
			return fmt.Errorf("zstd encoder: %w", err)
		}
		if err := write(zw, td); err != nil {
			zw.Close()
			return err
		}
		return zw.Close()
	}
}
