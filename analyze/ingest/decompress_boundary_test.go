package ingest

import (
	"errors"
	"io"
	"sync/atomic"
	"testing"
)

// zeros is an endless reader of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestDecompressionGuardAllowsExactlyRatioPlusSlack pins the bomb guard's
// bound: a stream may expand to ratio times the compressed bytes read plus
// decompressionSlack, exactly, and not one byte more; the slack holds even
// before a compressed byte is counted, so a small, very repetitive dump
// reads.
func TestDecompressionGuardAllowsExactlyRatioPlusSlack(t *testing.T) {
	tests := []struct {
		name    string
		in      int64 // compressed bytes read
		ratio   float64
		out     int64 // decompressed bytes the stream holds
		wantErr bool
	}{
		{"nothing counted yet: the slack exactly", 0, DefaultMaxDecompressionRatio, decompressionSlack, false},
		{"nothing counted yet: one byte over the slack", 0, DefaultMaxDecompressionRatio, decompressionSlack + 1, true},
		{"ratio times the input plus the slack exactly", 1000, 10, 10*1000 + decompressionSlack, false},
		{"one byte over ratio times the input plus the slack", 1000, 10, 10*1000 + decompressionSlack + 1, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := new(atomic.Int64)
			in.Store(tc.in)
			g := &ratioGuard{r: io.LimitReader(zeros{}, tc.out), in: in, ratio: tc.ratio}
			n, err := io.Copy(io.Discard, g)
			if got := errors.Is(err, ErrDecompressionLimit); got != tc.wantErr {
				t.Fatalf("after %d bytes: err %v, want the limit %v", n, err, tc.wantErr)
			}
			if !tc.wantErr && n != tc.out {
				t.Errorf("read %d bytes, want all %d", n, tc.out)
			}
		})
	}
}
