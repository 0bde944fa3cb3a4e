package ingest

import (
	"bytes"
	"fmt"
	"testing"
)

// TestStreamBufferIsSizedForTheFileUpToItsCap pins openStream's buffer: a
// file smaller than streamBufferBytes gets a buffer of its size (at least
// 512 bytes), a larger one or one of unknown size the cap, never its own
// size (read_compress.go:88: a 7 GB dump with a 7 GB buffer).
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
