package engine

import (
	"bufio"
	"encoding/binary"
	"io"
	"os"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// The single-threaded pdata decode-only loops BenchmarkAnalyze compares
// the analysis with: read the file and unmarshal each record with pdata,
// counting spans, nothing else.

func pdataJSONLinesSpans(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4<<20), 1<<30)
	var u ptrace.JSONUnmarshaler
	n := 0
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			return n, err
		}
		n += td.SpanCount()
	}
	return n, sc.Err()
}

func pdataProtoSpans(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var u ptrace.ProtoUnmarshaler
	var hdr [4]byte
	n := 0
	for {
		if _, err := io.ReadFull(r, hdr[:]); err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, err
		}
		buf := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, buf); err != nil {
			return n, err
		}
		td, err := u.UnmarshalTraces(buf)
		if err != nil {
			return n, err
		}
		n += td.SpanCount()
	}
}
