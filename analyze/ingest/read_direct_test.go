package ingest

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"testing"
)

// sizedReads is a source that records the size of every read asked of it,
// and gives at most most bytes to each (0: no bound).
type sizedReads struct {
	r     io.Reader
	most  int
	asked []int
}

func (s *sizedReads) Read(p []byte) (int, error) {
	s.asked = append(s.asked, len(p))
	if s.most > 0 && len(p) > s.most {
		p = p[:s.most]
	}
	return s.r.Read(p)
}

// TestReadFullTakesLongReadsStraightFromTheSource pins stream.readFull:
// once the buffer is drained, a read still wanting directReadBytes or more
// asks the source for exactly what it wants (one copy, into the caller's
// block), and one wanting a byte less goes through the buffer (a fill of
// the buffer's size). Either way the bytes and the offset are those of the
// input.
func TestReadFullTakesLongReadsStraightFromTheSource(t *testing.T) {
	const head = 3 << 10
	drained := streamBufferBytes - head // what the first fill leaves after head
	for _, c := range []struct {
		name string
		want int // bytes wanted past the buffered ones
		ask  int // the read the source sees for them
	}{
		{"at the bound", directReadBytes, directReadBytes},
		{"past the bound", directReadBytes + 1, directReadBytes + 1},
		{"a byte under the bound", directReadBytes - 1, streamBufferBytes},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := make([]byte, 3*streamBufferBytes)
			for i := range in {
				in[i] = byte(i * 7)
			}
			src := &sizedReads{r: bytes.NewReader(in)}
			s, err := openStream("dump.pb", src, -1, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			got := make([]byte, head+drained+c.want)
			if n, err := s.readFull(got[:head]); n != head || err != nil {
				t.Fatalf("head: %d, %v", n, err)
			}
			src.asked = nil
			if n, err := s.readFull(got[head:]); n != len(got)-head || err != nil {
				t.Fatalf("record: %d, %v", n, err)
			}
			if len(src.asked) != 1 || src.asked[0] != c.ask {
				t.Errorf("the source was asked for %v, want one read of %d", src.asked, c.ask)
			}
			if !bytes.Equal(got, in[:len(got)]) {
				t.Error("the bytes read are not the input's")
			}
			if s.off != int64(len(got)) {
				t.Errorf("offset %d after %d bytes", s.off, len(got))
			}
		})
	}
}

// TestReadFullEndsAsReadFullDoes pins readFull's ends to io.ReadFull's, on
// the direct path and the buffered one: nothing left is io.EOF, a part is
// io.ErrUnexpectedEOF with what was read, all of it is no error even when
// the source gives its last bytes with io.EOF (as gzip's reader does), and
// a source's failure is its error, kept as the stream's. The source gives
// at most a kilobyte a read, so the open's peek buffers one kilobyte and a
// direct read follows it.
func TestReadFullEndsAsReadFullDoes(t *testing.T) {
	const kb = 1 << 10
	boom := errors.New("device gone")
	failing := func(n int) io.Reader { return io.MultiReader(bytes.NewReader(make([]byte, n)), iotestErr{boom}) }
	for _, c := range []struct {
		name    string
		src     io.Reader
		want    int
		n       int
		err     error
		keptErr error
		direct  bool // the source was asked for readFull's bytes, not only for fills
		// uncapped: the source's reads are not cut to a kilobyte (it
		// cuts its first read itself)
		uncapped bool
	}{
		{"nothing left, direct", bytes.NewReader(nil), directReadBytes, 0, io.EOF, nil, true, false},
		{"nothing left, buffered", bytes.NewReader(nil), 10, 0, io.EOF, nil, false, false},
		{"a part, direct", bytes.NewReader(make([]byte, 3*kb)), kb + directReadBytes, 3 * kb, io.ErrUnexpectedEOF, nil, true, false},
		{"a part, buffered", bytes.NewReader(make([]byte, 3*kb)), 4 * kb, 3 * kb, io.ErrUnexpectedEOF, nil, false, false},
		{"all of it, direct", bytes.NewReader(make([]byte, kb+directReadBytes)), kb + directReadBytes, kb + directReadBytes, nil, nil, true, false},
		{"all of it, the last bytes with EOF, direct", &restWithEOF{b: make([]byte, kb+directReadBytes), first: kb}, kb + directReadBytes, kb + directReadBytes, nil, nil, true, true},
		{"a failing source, direct", failing(kb), kb + directReadBytes, kb, boom, boom, true, false},
		{"a failing source, buffered", failing(2 * kb), 4 * kb, 2 * kb, boom, boom, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &sizedReads{r: c.src, most: kb}
			if c.uncapped {
				src.most = 0
			}
			s, err := openStream("dump.pb", src, -1, 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			n, err := s.readFull(make([]byte, c.want))
			if n != c.n || !errors.Is(err, c.err) || (c.err == nil) != (err == nil) {
				t.Errorf("read %d, %v; want %d, %v", n, err, c.n, c.err)
			}
			if !errors.Is(s.err, c.keptErr) || (c.keptErr == nil) != (s.err == nil) {
				t.Errorf("the stream kept %v, want %v", s.err, c.keptErr)
			}
			if s.off != int64(n) {
				t.Errorf("offset %d after %d bytes", s.off, n)
			}
			if direct := slices.ContainsFunc(src.asked, func(n int) bool { return n != streamBufferBytes }); direct != c.direct {
				t.Errorf("the source was asked for %v; a direct read: %v", src.asked, c.direct)
			}
		})
	}
}

// iotestErr is a source that fails every read with err.
type iotestErr struct{ err error }

func (e iotestErr) Read([]byte) (int, error) { return 0, e.err }

// restWithEOF gives first bytes of b to its first read, then the rest to
// the next one together with io.EOF, as gzip's reader gives its last bytes.
type restWithEOF struct {
	b     []byte
	first int
	read  bool
}

func (r *restWithEOF) Read(p []byte) (int, error) {
	if !r.read {
		r.read = true
		n := copy(p, r.b[:min(r.first, len(r.b))])
		r.b = r.b[n:]
		return n, nil
	}
	n := copy(p, r.b)
	if r.b = r.b[n:]; len(r.b) == 0 {
		return n, io.EOF
	}
	return n, nil
}
