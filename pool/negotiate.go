package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptrace/mcptrace/spans"
)

// Protocol negotiation. MCP servers of two generations coexist: 2025-11-25
// and older (initialize, then Mcp-Session-Id on every request) and
// 2026-07-28 (no sessions: server/discover once, then per-request _meta).
// Unless a version is pinned, the first dial of a key tries the modern one:
// the SDK sends server/discover, and an old server that refuses it (HTTP 400)
// gets initialize at 2025-11-25 right after, inside the same Connect. A
// server that refuses initialize with JSON-RPC -32022 lists what it speaks
// in the error's data, and the dial retries once with the newest version
// both sides know. The revision found is remembered per key, so the extra
// round trip of a fallback is paid once per key, not once per dial; a server
// that changes its mind later is renegotiated the same way by the next dial.

// handshakeRequest is one HTTP request a handshake made.
type handshakeRequest struct {
	method   string     // JSON-RPC method, "" when not a POST
	post     bool       // a JSON-RPC message, not the DELETE of a half-made session
	status   int        // HTTP status; 0 when the request failed below HTTP
	fault    *httpFault // the non-2xx answer; nil for a success or a failure below HTTP
	duration time.Duration
}

// handshakeLog collects the requests of one dial, across its attempts. The
// watcher appends to it from the SDK's goroutines.
type handshakeLog struct {
	mu   sync.Mutex
	reqs []handshakeRequest
}

func (h *handshakeLog) add(r handshakeRequest) {
	h.mu.Lock()
	h.reqs = append(h.reqs, r)
	h.mu.Unlock()
}

// refusal returns the fault of the handshake's last JSON-RPC request: the
// one that failed a failed dial, nil when that one failed below HTTP. A
// refusal earlier in the handshake, such as the probe's 400 from a server
// that then accepted initialize, is not what failed the dial.
func (h *handshakeLog) refusal() *httpFault {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range slices.Backward(h.reqs) {
		if r.post {
			return r.fault
		}
	}
	return nil
}

func (h *handshakeLog) snapshot() []handshakeRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.reqs)
}

// handshake is what a dial reports for spans and Stat.
type handshake struct {
	version  string // the revision negotiated, or the last one tried on failure
	how      string // spans.Negotiation*
	requests int    // HTTP requests made
	log      []handshakeRequest
}

// rpcMethodOf names the JSON-RPC method of a handshake request: the
// Mcp-Method header the SDK sets from 2026-07-28 on, or the body's method
// (the SDK builds requests with GetBody, so the body can be read again).
// Only handshakes pay for this; calls never do.
func rpcMethodOf(req *http.Request) string {
	if m := req.Header.Get("Mcp-Method"); m != "" {
		return m
	}
	if req.Method != http.MethodPost || req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	var msg struct {
		Method string `json:"method"`
	}
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil || json.Unmarshal(data, &msg) != nil {
		return ""
	}
	return msg.Method
}

// dial opens and initializes a new session for t, negotiating the protocol
// revision unless one is pinned; remembered is the key's last negotiated
// revision ("" for none). Network I/O runs with no lock held. The pprof
// labels split handshake cost from call cost.
func (p *Pool) dial(ctx context.Context, t *Target, ks *keyState, remembered string) (*conn, handshake, error) {
	start := p.now()
	ctx, span := p.inst.startHandshake(ctx, t)
	hs := handshake{how: spans.NegotiationPinned, version: t.protocolVersion}
	if hs.version == "" {
		hs.version = p.opts.ProtocolVersion
	}
	if hs.version == "" {
		hs.how, hs.version = spans.NegotiationProbed, spans.ProtocolModern
		if remembered != "" {
			hs.how, hs.version = spans.NegotiationRemembered, remembered
		}
	}
	log := &handshakeLog{}
	cs, w, err := p.connect(ctx, t, hs.version, log)
	if err != nil && hs.how != spans.NegotiationPinned {
		// initialize refused with -32022: retry once with a version the
		// server listed.
		if v := listedVersion(err); v != "" && v != hs.version {
			hs.version = v
			cs, w, err = p.connect(ctx, t, v, log)
		}
	}
	hs.log = log.snapshot()
	hs.requests = len(hs.log)
	if err != nil {
		err = p.scrubber(t).error(fmt.Errorf("dial %s: %w", t.shown, classify(log.refusal(), w.breachErr(), err, false)))
		p.inst.endHandshake(ctx, span, start, nil, hs, err)
		return nil, hs, err
	}
	c := &conn{ks: ks, session: cs, id: cs.ID(), w: w, target: t, born: p.now()}
	if ir := cs.InitializeResult(); ir != nil {
		c.revision = ir.ProtocolVersion
	}
	c.sessionless = c.id == ""
	if c.sessionless && p.opts.MaxSharedCalls > 0 {
		c.slots = make(chan struct{}, p.opts.MaxSharedCalls)
	}
	if hs.how != spans.NegotiationPinned && usedBoth(hs.log) {
		// Both handshakes went out: the server refused the first (a
		// discover answered with an older revision or a 400, or an
		// initialize refused with -32022) and the second worked.
		hs.how = spans.NegotiationFallback
	}
	hs.version = c.revision
	p.inst.endHandshake(ctx, span, start, c, hs, nil)
	return c, hs, nil
}

// usedBoth reports whether a handshake sent both server/discover and
// initialize: one of them was the negotiation's extra round trip.
func usedBoth(log []handshakeRequest) bool {
	var discover, initialize bool
	for _, r := range log {
		switch r.method {
		case "server/discover":
			discover = true
		case "initialize":
			initialize = true
		}
	}
	return discover && initialize
}

// connect runs one SDK Connect at version on a fresh transport whose round
// tripper logs the handshake's requests into log.
func (p *Pool) connect(ctx context.Context, t *Target, version string, log *handshakeLog) (*mcp.ClientSession, *watcher, error) {
	w := &watcher{
		base:            withOAuth(p.transport, p.opts.OAuthHandler),
		header:          t.header,
		origin:          t.origin,
		followRedirects: p.opts.FollowSameOriginRedirects,
		maxBody:         p.opts.MaxResponseBytes,
		scrub:           p.scrubber(t),
	}
	if p.inst.semconv && p.inst.tracer != nil {
		w.sc = &semconvHandshake{tracer: p.inst.tracer, target: t}
	}
	w.hs.Store(log)
	defer w.hs.Store(nil)
	tr := &mcp.StreamableClientTransport{
		Endpoint:             t.endpoint,
		HTTPClient:           &http.Client{Transport: w, CheckRedirect: w.checkRedirect},
		MaxEventSize:         sdkEventBound(p.opts.MaxResponseBytes),
		DisableStandaloneSSE: !p.opts.StandaloneSSE,
		MaxRetries:           p.opts.StreamResumes,
	}
	var cs *mcp.ClientSession
	var err error
	pprof.Do(ctx, pprof.Labels(spans.PprofLabelKey, t.key, spans.PprofLabelPhase, spans.PhaseHandshake), func(ctx context.Context) {
		cs, err = p.client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	})
	return cs, w, err
}

// sdkEventBound is the SDK's own bound on an SSE event for a pool
// capping each at max bytes: past the pool's, so it never fires first (the
// watcher caps each event, bodycap.go, and the SDK counts an event without
// its blank line), or off (-1) when max leaves no room above it.
func sdkEventBound(max int64) int {
	if max > math.MaxInt32-4096 {
		return -1
	}
	return int(max) + 4096
}

// listedVersion returns the newest revision this SDK speaks among those a
// -32022 (unsupported protocol version) error lists in data.supported, or "".
func listedVersion(err error) string {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != mcp.CodeUnsupportedProtocolVersion || len(je.Data) == 0 {
		return ""
	}
	var data mcp.UnsupportedProtocolVersionData
	if json.Unmarshal(je.Data, &data) != nil {
		return ""
	}
	for _, v := range mcp.SupportedProtocolVersions() { // newest first
		if slices.Contains(data.Supported, v) {
			return v
		}
	}
	return ""
}
