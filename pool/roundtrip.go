package pool

import (
	"context"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// sessionHeader is the streamable HTTP session header.
const sessionHeader = "Mcp-Session-Id"

// httpFault is a non-2xx answer: the first one seen on a session since its
// lease began, on one call of a shared client, or on one request of a
// handshake.
type httpFault struct {
	status       int
	sessionBound bool
	retryAfter   time.Duration
}

// watcher is the round tripper of one session. It holds the server to the
// pool's bounds (send: the endpoint's origin only, a checked session id, a
// capped body; see untrusted.go), adds the target's headers and records
// the HTTP status of failures, because the SDK's errors do not
// reliably say what happened: a 404 whose body is a JSON-RPC error with an id
// surfaces with no sentinel, and a 400 for a stale session looks like any
// other protocol error. The status is the reliable signal.
//
// A shared client of a sessionless server carries many callers' requests at
// once, so its faults are recorded per call instead: a call puts a
// [callFaults] in its request context and the watcher fills that one.
//
// While the session's handshake runs, what its requests see is the
// handshake's alone: it goes to the [handshakeLog] (the handshake span's
// events, Stat's fallback counter, the verdict of a failed dial), never to
// fault and broken, which belong to leases. A lease begins clean: a server
// that refuses the version probe (a TypeScript SDK 1.x server answers
// server/discover with HTTP 400, then accepts initialize) must not have that
// 400 decide the first call's fate, drop the session at its first release
// or mask the call's own 404.
type watcher struct {
	base   http.RoundTripper
	header http.Header
	// callFaults holds the lease's first fault (see reset), whether a
	// request of the lease failed below HTTP, and the first bound the
	// server broke on this session (never reset: a session that broke one
	// is dropped).
	callFaults
	hs atomic.Pointer[handshakeLog] // set while the session's handshake runs
	// sc writes the semantic conventions' span of each handshake request
	// (semconv.go); nil unless Options.SemconvCallSpans and tracing are on.
	sc *semconvHandshake
	// What the watcher holds the server to (untrusted.go, bodycap.go):
	// the endpoint's origin, whether same-origin redirects are followed,
	// the body cap and the gate of the target's text.
	origin          *url.URL
	followRedirects bool
	maxBody         int64
	scrub           scrubber
}

// callFaults is what the watcher saw for one call's requests on a shared
// client, or, embedded in the watcher, for the session's.
type callFaults struct {
	fault    atomic.Pointer[httpFault]
	broken   atomic.Bool
	breached atomic.Pointer[error] // the first bound the server broke; see breach
}

// callFaultsKey is the context key of a call's *callFaults.
type callFaultsKey struct{}

// sinkFor returns where the faults of a request with ctx go: its call's
// callFaults on a shared client, else the session's.
func (w *watcher) sinkFor(ctx context.Context) *callFaults {
	if cf, ok := ctx.Value(callFaultsKey{}).(*callFaults); ok {
		return cf
	}
	return &w.callFaults
}

// RoundTrip implements http.RoundTripper.
func (w *watcher) RoundTrip(req *http.Request) (*http.Response, error) {
	log := w.hs.Load()
	var method string
	var began time.Time
	var rpcSpan trace.Span
	if log != nil {
		method, began = rpcMethodOf(req), time.Now()
		rpcSpan = w.sc.start(req, method)
	} else if id := rpcIDFrom(req.Context()); id != nil {
		id.observe(req)
	}
	sink := w.sinkFor(req.Context())
	resp, err := w.send(req, sink)
	if rpcSpan != nil {
		w.sc.end(rpcSpan, req, resp, err)
	}
	if log != nil {
		// A handshake request: its outcome is the handshake's.
		r := handshakeRequest{method: method, post: req.Method == http.MethodPost, duration: time.Since(began)}
		if err == nil {
			r.status = resp.StatusCode
			r.fault = faultOf(req, resp)
		}
		log.add(r)
		return resp, err
	}
	if err != nil {
		if req.Context().Err() == nil {
			sink.broken.Store(true)
		}
		return nil, err
	}
	if f := faultOf(req, resp); f != nil {
		sink.fault.CompareAndSwap(nil, f)
	}
	return resp, nil
}

// send sends req to the endpoint's origin only, with the target's
// headers, and admits the answer: its session id checked, its body
// capped.
func (w *watcher) send(req *http.Request, sink *callFaults) (*http.Response, error) {
	if err := w.guardOrigin(req, sink); err != nil {
		return nil, err
	}
	if len(w.header) > 0 {
		req = req.Clone(req.Context())
		for name, vals := range w.header {
			req.Header[name] = vals
		}
	}
	resp, err := w.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if id := resp.Header.Get(sessionHeader); id != "" {
		if err := w.scrub.checkSessionID(id); err != nil {
			resp.Body.Close()
			sink.breach(err)
			return nil, err
		}
	}
	capBody(resp, w.maxBody, sink)
	return resp, nil
}

// faultOf returns the fault of a non-2xx answer to req, nil for a success.
func faultOf(req *http.Request, resp *http.Response) *httpFault {
	if resp.StatusCode < 400 {
		return nil
	}
	f := &httpFault{status: resp.StatusCode, sessionBound: req.Header.Get(sessionHeader) != ""}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		f.retryAfter = parseRetryAfter(ra)
	}
	return f
}

// reset forgets faults; called when a lease begins ([Pool.newLease]), so a
// lease is judged only by its own requests. It stores only
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
