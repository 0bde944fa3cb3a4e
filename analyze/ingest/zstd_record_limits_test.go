package ingest

import (
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

// exactRatio returns the ratio at which the records' bound,
// ratio*in + decompressionSlack as decode computes it, is exactly out
// bytes: the quotient, nudged by an ulp or two.
func exactRatio(t *testing.T, out, in int64) float64 {
	t.Helper()
	r := float64(out-decompressionSlack) / float64(in)
	for _, step := range []float64{0, math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)} {
		if float64(out) == r*float64(in)+decompressionSlack {
			return r
		}
		r = math.Nextafter(r, step)
	}
	t.Fatalf("no ratio makes the bound exactly %d bytes", out)
	return 0
}

// TestZstdRecordsPastTheCapCountTowardTheRatio pins the decompression
// bound on records refused for the record cap: a frame that does not say
// its size and decompresses past the cap is charged the cap it was
// decoded to before it was refused, so records that each expand just past
// the cap stop the read as any bomb does, rather than being decoded one
// after another for ever. At the ratio whose bound is exactly what they
// were charged, each is refused for its size (ErrRecordTooLarge) and the
// read goes on; at a byte less, the last one stops the read with
// ErrDecompressionLimit.
func TestZstdRecordsPastTheCapCountTowardTheRatio(t *testing.T) {
	opts := ReadOptions{MaxMemory: 16 << 20, Workers: 1}
	recCap := opts.budget().recordCap()
	if recCap != 1<<20 {
		t.Fatalf("record cap %d, want 1 MiB", recCap)
	}
	okRec := request(baseResource, baseSpan())
	okFrame := zstdFrame(t, okRec, true, 0)
	bigFrame := zstdFrame(t, bigAttrRecord(2<<20), false, 8<<20)
	const past = 17 // records past the cap: 17 MiB, past the slack
	data := framed(okFrame)
	for range past {
		data = append(data, framed(bigFrame)...)
	}
	in := int64(len(okFrame) + past*len(bigFrame))
	out := int64(len(okRec)) + past*recCap
	exact := exactRatio(t, out, in)
	for _, tc := range []struct {
		name  string
		ratio float64
		limit bool
	}{
		{"exactly the bound: each record refused for its size", exact, false},
		{"a byte under: the limit stops the read", float64(out-1-decompressionSlack) / float64(in), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			o.MaxDecompressionRatio = tc.ratio
			inputs, _, err := readBytes(t, data, o)
			if tc.limit {
				if !errors.Is(err, ErrDecompressionLimit) {
					t.Fatalf("err %v; want ErrDecompressionLimit", err)
				}
				return
			}
			if err != nil || inputs[0].Spans != 1 || len(inputs[0].Warnings) != past || !strings.Contains(inputs[0].Warnings[past-1], "record too large") {
				t.Fatalf("err %v, %d spans, %d warnings; want the good record read and %d records refused for their size",
					err, inputs[0].Spans, len(inputs[0].Warnings), past)
			}
		})
	}
}

// TestRecordsAfterTheLimitAreNotDecompressed pins what the records queued
// behind the one that passed the decompression limit cost: nothing. Once a
// record has tripped the limit, a record decoded after it is refused with
// the limit's error and not decompressed (the totals do not move); while
// the first record is exactly at the bound, the next is decompressed and
// read.
func TestRecordsAfterTheLimitAreNotDecompressed(t *testing.T) {
	big := bigAttrRecord(17 << 20) // past the slack
	first := zstdFrame(t, big, true, 0)
	size := int64(len(big))
	next := zstdFrame(t, request(baseResource, baseSpan()), true, 0)
	exact := exactRatio(t, size, int64(len(first)))
	for _, tc := range []struct {
		name    string
		ratio   float64
		tripped bool
	}{
		{"the first record exactly at the bound", exact, false},
		{"the first record a byte past the bound", float64(size-1-decompressionSlack) / float64(len(first)), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := newFramedReader(&stream{path: "-"}, FormatAuto, true, 1, tc.ratio, 64<<20)
			if err != nil {
				t.Fatal(err)
			}
			defer fr.close()
			res := fr.decode(rec{data: first, seq: 1})
			if got := res.prob != nil && errors.Is(res.prob, ErrDecompressionLimit); got != tc.tripped {
				t.Fatalf("the first record: problem %v; want the limit tripped %v", res.prob, tc.tripped)
			}
			before := fr.zout.Load()
			res = fr.decode(rec{data: next, seq: 1, off: int64(4 + len(first))})
			if tc.tripped {
				if res.prob == nil || !errors.Is(res.prob, ErrDecompressionLimit) || fr.zout.Load() != before {
					t.Errorf("the next record: problem %v, decompressed %d bytes more; want the limit's error and nothing decompressed",
						res.prob, fr.zout.Load()-before)
				}
				return
			}
			if res.prob != nil || res.td.SpanCount() != 1 {
				t.Errorf("the next record: problem %v; want it read", res.prob)
			}
		})
	}
}

// rawZstdFrame is a zstd frame of data in raw blocks whose header says
// its content is declared bytes, whatever it holds (RFC 8878: an 8-byte
// Frame_Content_Size, a 1 MiB window, blocks of at most 128 KiB).
func rawZstdFrame(data []byte, declared uint64) []byte {
	out := append([]byte{}, zstdMagic...)
	out = append(out, 3<<6, 10<<3) // FCS field of 8 bytes; window 1 MiB
	out = binary.LittleEndian.AppendUint64(out, declared)
	for i := 0; i == 0 || i < len(data); {
		n := min(len(data)-i, 128<<10)
		last := uint32(0)
		if i+n >= len(data) {
			last = 1
		}
		hdr := binary.LittleEndian.AppendUint32(nil, last|uint32(n)<<3) // block type 0: raw
		out = append(append(out, hdr[:3]...), data[i:i+n]...)
		i += max(n, 1)
	}
	return out
}

// TestAZstdRecordHoldingMoreThanItsHeaderSaysIsDamaged pins the blame for
// a frame whose content is longer than the size its header declares: the
// frame is damaged, not too large for the budget, so the error says so
// and names no --max-memory (more memory would not read it). A frame that
// holds exactly what it declares is read.
func TestAZstdRecordHoldingMoreThanItsHeaderSaysIsDamaged(t *testing.T) {
	rec := request(baseResource, baseSpan())
	for _, tc := range []struct {
		name     string
		declared uint64
		damaged  bool
	}{
		{"declares exactly what it holds", uint64(len(rec)), false},
		{"declares a byte less than it holds", uint64(len(rec) - 1), true},
		{"declares a hundred bytes, holds 200 KiB", 100, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := rec
			if tc.declared == 100 {
				data = bigAttrRecord(200 << 10)
			}
			inputs, _, err := readBytes(t, framed(rawZstdFrame(data, tc.declared)), ReadOptions{Strict: true})
			if !tc.damaged {
				if err != nil || inputs[0].Spans != 1 {
					t.Fatalf("err %v; want the record read", err)
				}
				return
			}
			if err == nil || errors.Is(err, ErrRecordTooLarge) || strings.Contains(err.Error(), "--max-memory") || !strings.Contains(err.Error(), "damaged frame") {
				t.Fatalf("err %v; want a damaged frame, not a record too large for the budget", err)
			}
		})
	}
}
