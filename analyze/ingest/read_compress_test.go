package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// TestStreamBufferIsSizedForTheFileUpToItsCap pins openStream's buffer: a
// file smaller than streamBufferBytes gets a buffer of its size (at least
// 512 bytes), a larger one or one of unknown size the cap, never its own
// size (a 7 GB dump gets no 7 GB buffer).
func TestStreamBufferIsSizedForTheFileUpToItsCap(t *testing.T) {
	for _, c := range []struct {
		size int64
		want int
	}{
		{-1, streamBufferBytes},
		{0, 512},
		{100, 512},
		{4096, 4096},
		{streamBufferBytes - 1, streamBufferBytes - 1},
		{streamBufferBytes, streamBufferBytes},
		{10 * streamBufferBytes, streamBufferBytes},
	} {
		t.Run(fmt.Sprintf("size %d", c.size), func(t *testing.T) {
			s, err := openStream("dump.jsonl", bytes.NewReader([]byte("{}\n")), c.size, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if got := s.r.Size(); got != c.want {
				t.Errorf("buffer of %d bytes for a file of %d, want %d", got, c.size, c.want)
			}
		})
	}
}

// bigDump is the prod-cold-starts scenario written by write and repeated
// past 2 MiB, past the stream's head and its 1 MiB buffer, so that a
// compressed stream failing at its end fails in a read of the format's
// reader, not in the peek at the head.
func bigDump(write tracegen.WriteFunc) (data []byte, spans int) { return dumpOf(write, 2<<20) }

// dumpOf is the prod-cold-starts scenario written by write and repeated
// past size bytes.
func dumpOf(write tracegen.WriteFunc, size int) (data []byte, spans int) {
	prod := tracegen.ProdColdStarts()
	one := tracegen.MustEncode(write, prod)
	n := size/len(one) + 1
	return bytes.Repeat(one, n), n * prod.SpanCount()
}

// TestACompressedStreamFailingPastItsHeadIsBlamed pins that a gzip stream
// failing after the head (its checksum wrong, or cut) is reported as the
// stream's failure at any length and in any format inside it: stream.Read
// records the first error (the failure is not blamed on the line), and
// problem blames the stream for a cut record when the stream itself ended
// early (a cut gzip stream of protobuf records is no cut record of an
// intact file).
func TestACompressedStreamFailingPastItsHeadIsBlamed(t *testing.T) {
	for _, format := range []struct {
		name  string
		write tracegen.WriteFunc
	}{{"json lines", tracegen.WriteOTLPJSONLines}, {"protobuf", tracegen.WriteOTLPProto}} {
		data, spans := bigDump(format.write)
		gz := tracegen.GzipBytes(data)
		for _, tc := range []struct {
			name, msg string
			data      []byte
			is        error
		}{
			{"a wrong checksum", "expected a valid gzip stream: gzip: invalid checksum", tracegen.CorruptGzipTrailer(gz), nil},
			{"cut in the middle", "expected a valid gzip stream: truncated: the gzip stream ends early", gz[:len(gz)/2], ErrTruncated},
		} {
			t.Run(format.name+", "+tc.name, func(t *testing.T) {
				_, _, err := readBytes(t, tc.data, ReadOptions{Strict: true})
				var re *ReadError
				if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.msg) || (tc.is != nil && !errors.Is(err, tc.is)) {
					t.Fatalf("err %v, want a ReadError containing %q", err, tc.msg)
				}
				if re.Offset <= headBytes {
					t.Errorf("the failure is placed at byte %d, inside the head: the case tests the head's peek, not the read", re.Offset)
				}
				inputs, batches, err := readBytes(t, tc.data, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				got := 0
				for _, b := range batches {
					got += b.SpanCount()
				}
				if !inputs[0].Partial || got == 0 || got > spans || !strings.Contains(strings.Join(inputs[0].Warnings, "\n"), tc.msg) {
					t.Errorf("non-strict: %d of %d spans kept, partial %v, warnings %q; want the spans before the failure and a warning containing %q",
						got, spans, inputs[0].Partial, inputs[0].Warnings, tc.msg)
				}
			})
		}
	}
}

// zstdFrame compresses data into one frame; size false leaves the frame's
// content size out (a streaming writer's frame), with the given window.
func zstdFrame(t *testing.T, data []byte, size bool, window int) []byte {
	t.Helper()
	if size {
		enc, err := zstd.NewWriter(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer enc.Close()
		return enc.EncodeAll(data, nil)
	}
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithSingleSegment(false), zstd.WithWindowSize(window))
	if err != nil {
		t.Fatal(err)
	}
	// Flushed before Close: the header goes out before the size is
	// known, so it holds the window and no size (on Close alone the
	// writer would know the size, write it and shrink the window).
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	var h zstd.Header
	if err := h.Decode(buf.Bytes()); err != nil || h.HasFCS || h.WindowSize != uint64(window) {
		t.Fatalf("the frame's header (%v) says size %v, window %d; want no size and the window %d", err, h.HasFCS, h.WindowSize, window)
	}
	return buf.Bytes()
}

// TestZeroPaddingAfterTheLastRecordIsSkipped pins skipZeroWords' bound at
// the end of the input (no panic on the padding's last word): zero words after the last record are
// empty records, whatever their count.
func TestZeroPaddingAfterTheLastRecordIsSkipped(t *testing.T) {
	rec := framed(request(baseResource, baseSpan()))
	for _, words := range []int{1, 2, 3, 5} {
		data := append(append([]byte{}, rec...), make([]byte, 4*words)...)
		inputs, _, err := readBytes(t, data, ReadOptions{Strict: true})
		if err != nil || inputs[0].Spans != 1 || len(inputs[0].Warnings) != 0 {
			t.Errorf("%d zero words after the record: err %v, inputs %+v; want its span read, no warning", words, err, inputs)
		}
	}
}

// skippableFrame is a zstd skippable frame (RFC 8878, section 3.1.2):
// the magic 0x184D2A5?, little-endian, with low as its first byte (any
// byte here: a test may ask for one outside the range), then the
// payload's length and the payload.
func skippableFrame(low byte, payload []byte) []byte {
	out := []byte{low, 0x2a, 0x4d, 0x18}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(payload)))
	return append(out, payload...)
}

// TestAZstdStreamStartingWithASkippableFrameIsRead pins zstd detection on
// skippable frames, as pzstd writes before every frame: a stream that
// starts with one, with any of the sixteen magic numbers 0x184D2A50 to
// 0x184D2A5F, is zstd and read (a skippable frame between frames too);
// the numbers either side of the range are no zstd, and no trace dump.
func TestAZstdStreamStartingWithASkippableFrameIsRead(t *testing.T) {
	dump := append(framed(request(baseResource, baseSpan())), framed(request(baseResource, baseSpan()))...)
	frame := zstdFrame(t, dump, true, 0)
	for _, tc := range []struct {
		name string
		low  byte
		zstd bool
	}{
		{"0x184D2A50, the first of the range", 0x50, true},
		{"0x184D2A5F, the last of the range", 0x5f, true},
		{"0x184D2A4F, one before the range", 0x4f, false},
		{"0x184D2A60, one past the range", 0x60, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append(skippableFrame(tc.low, []byte("abcd")), frame...)
			data = append(append(data, skippableFrame(0x5a, nil)...), frame...)
			inputs, _, err := readBytes(t, data, ReadOptions{Strict: true})
			if !tc.zstd {
				if !errors.Is(err, ErrNotTraceDump) {
					t.Fatalf("err %v; want ErrNotTraceDump", err)
				}
				return
			}
			if err != nil || inputs[0].Spans != 4 || inputs[0].Compression != "zstd" {
				t.Fatalf("err %v, inputs %+v; want the 4 spans of both frames, zstd", err, inputs)
			}
		})
	}
}
