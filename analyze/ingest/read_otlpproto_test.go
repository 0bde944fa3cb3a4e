package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// TestAZstdRecordDecompressesUpToTheRecordCap pins decompress's bounds: a
// frame that says its size is read when the size is exactly the record
// cap, refused one byte past it; so is a frame that does not say it,
// whatever window it asks for (its history is the buffer it is decoded
// into, so a large window costs nothing), and whether it fits the first
// buffer tried or only the cap.
func TestAZstdRecordDecompressesUpToTheRecordCap(t *testing.T) {
	const small = 64 << 10
	rec := bytes.Repeat([]byte("0123456789abcdef"), small/16)
	big := make([]byte, 4<<20) // compresses thousands of times: the first buffer tried is too small
	for i := range big {
		big[i] = byte(i / 1024)
	}
	for _, tc := range []struct {
		name   string
		cap    int64
		frame  []byte
		want   []byte
		refuse bool
	}{
		{"a sized frame of exactly the cap", small, zstdFrame(t, rec, true, 0), rec, false},
		{"a sized frame a byte past the cap", small - 1, zstdFrame(t, rec, true, 0), rec, true},
		{"an unsized frame of exactly the cap", small, zstdFrame(t, rec, false, 4<<20), rec, false},
		{"an unsized frame in a 16 MiB window, cap 64 KiB", small, zstdFrame(t, rec, false, 16<<20), rec, false},
		{"an unsized frame past the cap", small - 1, zstdFrame(t, rec, false, 1<<20), rec, true},
		{"an unsized frame that outgrows the first buffer, exactly the cap", 4 << 20, zstdFrame(t, big, false, 8<<20), big, false},
		{"an unsized frame that outgrows the first buffer, a byte past the cap", 4<<20 - 1, zstdFrame(t, big, false, 8<<20), big, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := newFramedReader(&stream{path: "-"}, FormatAuto, true, 1, 0, tc.cap)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.zstd.Close()
			got, _, err := fr.decompress(1, tc.frame)
			switch {
			case tc.refuse && err == nil:
				t.Errorf("decompressed %d bytes, want an error (the record cap is %d)", len(got), tc.cap)
			case !tc.refuse && err != nil:
				t.Errorf("err %v, want the %d bytes (the record cap is %d)", err, len(tc.want), tc.cap)
			case !tc.refuse && !bytes.Equal(got, tc.want):
				t.Errorf("decompressed %d bytes, not the record's %d", len(got), len(tc.want))
			}
		})
	}
}

// TestRecordsBeforeAnOversizeRecordAreReadFirst pins the order around a
// protobuf record skipped for its size (the records read ahead of it are
// flushed before the skip's problem is handed on): in strict mode the records before it reach the sink before its
// error stops the read, as a bad record's would; non-strict, every other
// record is read, with one warning.
func TestRecordsBeforeAnOversizeRecordAreReadFirst(t *testing.T) {
	small := framed(request(baseResource, baseSpan()))
	data := append(append(append([]byte{}, small...), framed(bigAttrRecord(3<<20))...), small...)
	for _, strict := range []bool{true, false} {
		inputs, _, err := readBytes(t, data, ReadOptions{Strict: strict, MaxMemory: 16 << 20})
		wantSpans, wantErr := 2, false
		if strict {
			wantSpans, wantErr = 1, true
		}
		if inputs[0].Spans != wantSpans || (err != nil) != wantErr || (!strict && len(inputs[0].Warnings) != 1) ||
			(err != nil && !errors.Is(err, ErrRecordTooLarge)) {
			t.Errorf("strict %v: %d spans, err %v, warnings %q; want %d spans and the record too large (an error only when strict)",
				strict, inputs[0].Spans, err, inputs[0].Warnings, wantSpans)
		}
	}
}

// TestZstdRecordsExpandUpToExactlyTheRatioAndTheSlack pins the
// decompression bound on zstd records at its edge: records that decompress to exactly ratio times their compressed bytes
// plus the slack are read; at a ratio whose bound is a byte less, the last
// record is over it and stops the read with ErrDecompressionLimit. The
// ratio is the quotient, nudged by an ulp or two until the bound is the
// total exactly, as decode computes it.
func TestZstdRecordsExpandUpToExactlyTheRatioAndTheSlack(t *testing.T) {
	rec := zstdFramed(t, bigAttrRecord(2<<20))
	var data []byte
	var in int64
	for range 9 {
		data = append(data, rec...)
		in += int64(len(rec) - 4) // the frame, without its length prefix
	}
	var u ptrace.ProtoUnmarshaler
	one, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := one.DecodeAll(rec[4:], nil)
	one.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.UnmarshalTraces(out); err != nil {
		t.Fatal(err)
	}
	total := 9 * int64(len(out))
	if total <= decompressionSlack {
		t.Fatalf("the records decompress to %d bytes, not past the slack", total)
	}
	exact := float64(total-decompressionSlack) / float64(in)
	for _, step := range []float64{0, math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)} {
		if float64(total) == exact*float64(in)+decompressionSlack {
			break
		}
		exact = math.Nextafter(exact, step)
	}
	if float64(total) != exact*float64(in)+decompressionSlack {
		t.Fatalf("no ratio makes the bound exactly %d bytes", total)
	}
	for _, tc := range []struct {
		name  string
		ratio float64
		limit bool
	}{{"exactly the bound", exact, false}, {"a byte under", float64(total-1-decompressionSlack) / float64(in), true}} {
		t.Run(tc.name, func(t *testing.T) {
			inputs, _, err := readBytes(t, data, ReadOptions{Strict: true, Workers: 1, MaxMemory: 256 << 20, MaxDecompressionRatio: tc.ratio})
			if got := errors.Is(err, ErrDecompressionLimit); got != tc.limit || (!tc.limit && inputs[0].Spans != 9) {
				t.Errorf("ratio %v: err %v, %d spans; want the limit %v", tc.ratio, err, inputs[0].Spans, tc.limit)
			}
		})
	}
}

// recordOfSize is a protobuf record in the common shape of exactly n
// bytes, padded by a string attribute.
func recordOfSize(t *testing.T, n int) []byte {
	t.Helper()
	for pad := n - len(bigAttrRecord(0)); pad > 0; pad-- {
		if rec := bigAttrRecord(pad); len(rec) == n {
			return rec
		} else if len(rec) < n {
			break
		}
	}
	t.Fatalf("no record of exactly %d bytes", n)
	return nil
}

// capEdge is a record's size at the edge of the record cap, and whether
// a record of that size is read.
type capEdge struct {
	name string
	size int
	read bool
}

// capEdges are the sizes at either edge of the record cap recCap.
func capEdges(recCap int) []capEdge {
	return []capEdge{{"exactly the cap", recCap, true}, {"a byte past the cap", recCap + 1, false}}
}

// readAtTheCap reads data, a record at the edge of the record cap then a
// record of one span, with opts, and checks that both were read (read)
// or that the first was refused as too large.
func readAtTheCap(t *testing.T, data []byte, opts ReadOptions, read bool) {
	t.Helper()
	inputs, _, err := readBytes(t, data, opts)
	switch {
	case read && (err != nil || inputs[0].Spans != 2):
		t.Errorf("err %v, inputs %+v; want both records read", err, inputs)
	case !read && !errors.Is(err, ErrRecordTooLarge):
		t.Errorf("err %v; want the record refused (ErrRecordTooLarge)", err)
	}
}

// TestAProtobufRecordOfExactlyTheCapIsRead pins the record cap and the
// length prefix's bound at their edges: a stored record of exactly the
// record cap is read, one a byte longer skipped; a length prefix of
// exactly maxRecordBytes is a length (neither a dump refused as none nor
// its record as too large), and the input ending inside its record is a
// cut record.
func TestAProtobufRecordOfExactlyTheCapIsRead(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 << 20, Strict: true}
	recCap := int(opts.budget().recordCap())
	for _, tc := range capEdges(recCap) {
		t.Run(tc.name, func(t *testing.T) {
			readAtTheCap(t, append(framed(recordOfSize(t, tc.size)), framed(request(baseResource, baseSpan()))...), opts, tc.read)
		})
	}
	t.Run("a length of exactly maxRecordBytes", func(t *testing.T) {
		data := append(binary.BigEndian.AppendUint32(nil, maxRecordBytes), request(baseResource, baseSpan())...)
		_, _, err := readBytes(t, data, ReadOptions{Strict: true})
		if !errors.Is(err, ErrTruncated) || errors.Is(err, ErrRecordTooLarge) {
			t.Errorf("err %v; want the record cut short (ErrTruncated), not too large", err)
		}
	})
	// One past it, the prefix is no length: read as protobuf it is a
	// record too large, not one cut short, and detection does not take
	// it for a protobuf dump at all.
	past := append(binary.BigEndian.AppendUint32(nil, maxRecordBytes+1), request(baseResource, baseSpan())...)
	t.Run("a length one past maxRecordBytes, read as protobuf", func(t *testing.T) {
		_, _, err := readBytes(t, past, ReadOptions{Strict: true, Format: FormatOTLPProto})
		if !errors.Is(err, ErrRecordTooLarge) || errors.Is(err, ErrTruncated) {
			t.Errorf("err %v; want the length refused (ErrRecordTooLarge), not the record cut short", err)
		}
	})
	t.Run("a length one past maxRecordBytes, detected", func(t *testing.T) {
		_, _, err := readBytes(t, past, ReadOptions{Strict: true})
		if !errors.Is(err, ErrNotTraceDump) || errors.Is(err, ErrRecordTooLarge) {
			t.Errorf("err %v; want no trace dump detected (ErrNotTraceDump)", err)
		}
	})
}

// TestAnUnsizedFrameOfExactlyTheCapIsReadAtTheLastTry pins the last try
// of a zstd frame that does not say its size: the tries double from the
// first one's 64 KiB, and one that stops a byte short of the record cap
// must still be followed by a try of the cap itself. With a budget whose
// cap is 1 MiB and a byte, the fifth try is 1 MiB, a byte short: a record
// of exactly the cap is read at the sixth, one a byte longer is refused.
func TestAnUnsizedFrameOfExactlyTheCapIsReadAtTheLastTry(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 * (1<<20 + 1), Strict: true}
	recCap := int(opts.budget().recordCap())
	if recCap != 1<<20+1 {
		t.Fatalf("record cap %d, want 1 MiB and a byte", recCap)
	}
	for _, tc := range capEdges(recCap) {
		t.Run(tc.name, func(t *testing.T) {
			frame := zstdFramedNoSize(t, recordOfSize(t, tc.size))
			if n := len(frame) - 4; firstTry(n, int64(recCap)) != 64<<10 {
				t.Fatalf("a frame of %d bytes: first try %d, want the 64 KiB floor", n, firstTry(n, int64(recCap)))
			}
			readAtTheCap(t, append(frame, zstdFramedNoSize(t, request(baseResource, baseSpan()))...), opts, tc.read)
		})
	}
}
