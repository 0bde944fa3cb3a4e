package pool

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"
)

// sessionHeader is the streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// httpFault is the first non-2xx answer seen on a session since its lease
// began.
type httpFault struct {
	status       int
	sessionBound bool
	retryAfter   time.Duration
}

// watcher is the round tripper of one session. It adds the target's headers
// and records the HTTP status of failures, because the SDK's errors do not
// reliably say what happened: a 404 whose body is a JSON-RPC error with an id
// surfaces with no sentinel, and a 400 for a stale session looks like any
// other protocol error. The status is the reliable signal.
//
// A shared client of a sessionless server carries many callers' requests at
// once, so its faults are recorded per call instead: a call puts a
// [callFaults] in its request context and the watcher fills that one.
type watcher struct {
	base   http.RoundTripper
	header http.Header
	fault  atomic.Pointer[httpFault]
	broken atomic.Bool                  // a request failed below HTTP
	hs     atomic.Pointer[handshakeLog] // set while the session's handshake runs
}

// callFaults is what the watcher saw for one call's requests on a shared
// client.
type callFaults struct {
	fault  atomic.Pointer[httpFault]
	broken atomic.Bool
}

// callFaultsKey is the context key of a call's *callFaults.
type callFaultsKey struct{}

// RoundTrip implements http.RoundTripper.
func (w *watcher) RoundTrip(req *http.Request) (*http.Response, error) {
	log := w.hs.Load()
	var method string
	var began time.Time
	if log != nil {
		method, began = rpcMethodOf(req), time.Now()
	}
	if len(w.header) > 0 {
		req = req.Clone(req.Context())
		for name, vals := range w.header {
			req.Header[name] = vals
		}
	}
	fault, broken := &w.fault, &w.broken
	if cf, ok := req.Context().Value(callFaultsKey{}).(*callFaults); ok {
		fault, broken = &cf.fault, &cf.broken
	}
	resp, err := w.base.RoundTrip(req)
	if log != nil {
		r := handshakeRequest{method: method, duration: time.Since(began)}
		if err == nil {
			r.status = resp.StatusCode
		}
		log.add(r)
	}
	if err != nil {
		if req.Context().Err() == nil {
			broken.Store(true)
		}
		return nil, err
	}
	if resp.StatusCode >= 400 {
		f := &httpFault{status: resp.StatusCode, sessionBound: req.Header.Get(sessionHeader) != ""}
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			f.retryAfter = parseRetryAfter(ra)
		}
		fault.CompareAndSwap(nil, f)
	}
	return resp, nil
}

// reset forgets faults; called when a session is leased. It stores only
// when there is something to forget: an atomic store is a locked instruction
// (XCHG on amd64), and this runs on every hit.
func (w *watcher) reset() {
	if w.fault.Load() != nil {
		w.fault.Store(nil)
	}
	if w.broken.Load() {
		w.broken.Store(false)
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
