package pool

import (
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Response bodies are capped at Options.MaxResponseBytes as the SDK reads
// them: the watcher wraps every body, above the HTTP transport, so the
// count is of decoded bytes (net/http decompresses a gzip answer it asked
// for under the wrapper; one it did not ask for is not decoded at all and
// is counted as sent). A JSON body, an error body or a redirect's body is
// capped whole. An SSE stream is capped per event, from its first byte
// through the blank line that ends it, so a stream of small events (a
// long tool's progress) runs as long as the call's context allows, while
// no one event can make the SDK buffer more than the cap.
//
// Over the cap, the read stops: a plain body's next Read fails with the
// breach, which the SDK reports as a failed read and the call fails. On an
// SSE stream, a failed read would be taken for a lost connection and the
// call would wait for an answer that never comes, so the stream ends
// instead with a line that is no SSE field (sseBreachLine, which has no
// colon): the SDK's parser rejects it as malformed and fails the session
// at once. Either way the breach, recorded on the call's callFaults,
// names the failure ([ErrResponseTooLarge]).

// sseBreachLine ends an SSE stream cut at the cap; see above.
const sseBreachLine = "mcptrace-pool-event-over-MaxResponseBytes\n"

// cappedBody is a response body read through the cap.
type cappedBody struct {
	rc        io.ReadCloser
	max       int64
	n         int64 // bytes of the body (plain) or of the current event (SSE)
	sse       bool
	lineEmpty bool // SSE: nothing but CR since the last LF
	sink      *callFaults
	over      error  // the breach, once the cap is passed
	tail      string // SSE: what is left of sseBreachLine to hand out
}

// capBody wraps resp's body in the cap of max bytes, recording a breach
// on sink.
func capBody(resp *http.Response, max int64, sink *callFaults) {
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	resp.Body = &cappedBody{
		rc:        resp.Body,
		max:       max,
		sse:       strings.EqualFold(strings.TrimSpace(ct), "text/event-stream"),
		lineEmpty: true,
		sink:      sink,
	}
}

// Read implements io.Reader.
func (b *cappedBody) Read(p []byte) (int, error) {
	if b.over != nil {
		if b.tail != "" {
			n := copy(p, b.tail)
			b.tail = b.tail[n:]
			return n, nil
		}
		return 0, b.over
	}
	if b.sse {
		return b.readEvents(p)
	}
	if left := b.max - b.n + 1; int64(len(p)) > left {
		p = p[:left] // one byte past the cap is enough to see it passed
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	if b.n > b.max {
		b.breach("the body")
		return n - int(b.n-b.max), b.over
	}
	return n, err
}

// readEvents reads SSE bytes, counting each event's; past the cap it
// hands out the bytes before the one over, then sseBreachLine (after a
// line break, unless at the start of a line).
func (b *cappedBody) readEvents(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	for i, c := range p[:n] {
		b.n++
		if b.n > b.max {
			b.breach("one SSE event")
			b.tail = sseBreachLine
			if !b.lineEmpty {
				b.tail = "\n" + sseBreachLine
			}
			if i == 0 {
				return b.Read(p)
			}
			return i, nil
		}
		switch c {
		case '\n':
			if b.lineEmpty {
				b.n = 0 // a blank line: the event ended
			}
			b.lineEmpty = true
		case '\r':
		default:
			b.lineEmpty = false
		}
	}
	return n, err
}

// breach records that what was over the cap.
func (b *cappedBody) breach(what string) {
	b.over = fmt.Errorf("%w: %s is over %d bytes", ErrResponseTooLarge, what, b.max)
	b.sink.breach(b.over)
}

// Close implements io.Closer.
func (b *cappedBody) Close() error { return b.rc.Close() }
