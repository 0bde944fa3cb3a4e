package tracegen

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Helpers for the readers' tests (analyze's and analyze/ingest's), which
// build the same kinds of broken input: one copy here rather than one per
// test package. They panic on an encoder error, which only a bug in this
// package can cause: every writer here encodes valid pdata into memory.

// MustEncode returns td written by w.
func MustEncode(w WriteFunc, td ptrace.Traces) []byte {
	var buf bytes.Buffer
	if err := w(&buf, td); err != nil {
		panic(fmt.Sprintf("tracegen: encode: %v", err))
	}
	return buf.Bytes()
}

// GzipBytes returns data in one gzip stream.
func GzipBytes(data []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data) // a bytes.Buffer never fails
	zw.Close()
	return buf.Bytes()
}

// ZstdBytes returns data in one zstd frame.
func ZstdBytes(data []byte) []byte {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		panic(fmt.Sprintf("tracegen: zstd encoder: %v", err))
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// CorruptGzipTrailer returns a copy of a gzip stream with its CRC-32
// damaged: everything decompresses, then the checksum fails.
func CorruptGzipTrailer(data []byte) []byte {
	out := bytes.Clone(data)
	out[len(out)-8] ^= 0xff
	return out
}

// ZstdRecordsWithBadSecond writes td as the Collector's per-record zstd
// frames with the second frame's content damaged (its length intact), and
// returns the byte offset of that frame.
func ZstdRecordsWithBadSecond(td ptrace.Traces) ([]byte, int64) {
	data := MustEncode(WriteOTLPProtoZstdRecords, td)
	first := int(binary.BigEndian.Uint32(data)) + 4
	second := int(binary.BigEndian.Uint32(data[first:]))
	for i := first + 4 + 4; i < first+4+second; i++ { // keep the magic, damage the rest
		data[i] = 0xff
	}
	return data, int64(first)
}
