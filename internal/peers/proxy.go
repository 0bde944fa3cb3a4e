package peers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptrace/mcptrace/fixtures"
)

// proxy is a recording reverse proxy in front of a peer that keeps no ledger
// of its own (server-everything): it records every request the way the
// script peers do (method, JSON-RPC method, tool, session id, status, set
// when the upstream's answer header arrives, before the client sees it) and
// serves the same hooks from outside the server. A rejection is answered by
// the proxy and never forwarded (Fault "reject"); forgetting a session sends
// the server a DELETE for it, so the server itself no longer knows it.
type proxy struct {
	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	tr       *http.Transport
	rp       *httputil.ReverseProxy

	mu         sync.Mutex
	ledger     []*fixtures.Request
	rejects    []Reject
	live       []string // session ids issued and not deleted, in order
	forgetLeft int
}

// maxPeek bounds how much of a request body the proxy reads for its
// JSON-RPC method.
const maxPeek = 4 << 20

func startProxy(upstream string) (*proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("peers: proxy upstream %q: %w", upstream, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("peers: proxy listen: %w", err)
	}
	p := &proxy{upstream: u, ln: ln, tr: &http.Transport{}}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.URL.Path = u.Path
			r.Out.Host = u.Host
		},
		Transport:     p.tr,
		FlushInterval: -1, // SSE answers stream through at once
		ModifyResponse: func(resp *http.Response) error {
			ctx := resp.Request.Context()
			if status, ok := ctx.Value(afterRunKey{}).(int); ok {
				replaceAnswer(resp, status)
			}
			if rec, ok := ctx.Value(recKey{}).(*fixtures.Request); ok {
				if _, after := ctx.Value(afterRunKey{}).(int); after {
					p.mu.Lock()
					rec.Fault = FaultRejectAfterRun
					p.mu.Unlock()
				}
				p.observe(rec, resp)
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if rec, ok := r.Context().Value(recKey{}).(*fixtures.Request); ok {
				p.mu.Lock()
				rec.Status = http.StatusBadGateway
				p.mu.Unlock()
			}
			http.Error(w, "peers proxy: upstream: "+err.Error(), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: http.HandlerFunc(p.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *proxy) url() string { return "http://" + p.ln.Addr().String() + p.upstream.Path }

// recKey is the context key of a forwarded request's ledger entry;
// afterRunKey of the status that replaces its answer (Reject.AfterRun).
type (
	recKey      struct{}
	afterRunKey struct{}
)

func (p *proxy) serve(w http.ResponseWriter, r *http.Request) {
	rec := &fixtures.Request{Time: time.Now(), HTTPMethod: r.Method, SessionID: r.Header.Get("Mcp-Session-Id")}
	if r.Method == http.MethodPost && r.Body != nil {
		head, err := io.ReadAll(io.LimitReader(r.Body, maxPeek))
		if err != nil {
			http.Error(w, "peers proxy: read body: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(head), r.Body), r.Body}
		rec.RPCMethod, rec.Tool = peek(head)
	}
	p.mu.Lock()
	p.ledger = append(p.ledger, rec)
	rej, ok := p.takeRejectLocked(rec)
	if ok && !rej.AfterRun {
		rec.Fault = fixtures.FaultReject
		rec.Status = rej.Status
	}
	p.mu.Unlock()
	if ok && !rej.AfterRun {
		writeReject(w, rej.Status)
		return
	}
	ctx := context.WithValue(r.Context(), recKey{}, rec)
	if ok {
		ctx = context.WithValue(ctx, afterRunKey{}, rej.Status)
	}
	p.rp.ServeHTTP(w, r.WithContext(ctx))
}

// peek reads the JSON-RPC method and tool name of a body (a batch's first
// message).
func peek(body []byte) (method, tool string) {
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(trimmed, &batch) != nil || len(batch) == 0 {
			return "", ""
		}
		trimmed = batch[0]
	}
	if json.Unmarshal(trimmed, &msg) != nil {
		return "", ""
	}
	if msg.Method == "tools/call" {
		tool = msg.Params.Name
	}
	return msg.Method, tool
}

// writeReject answers like the script peers (peers/lib/peer.mjs).
func writeReject(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if status == http.StatusNotFound {
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)
		return
	}
	code := -32603
	if status == http.StatusBadRequest {
		code = -32000
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","error":{"code":%d,"message":"peers proxy: answered %d once by the reject hook (request not forwarded)"},"id":null}`, code, status)
}

// replaceAnswer reads the server's answer to its end (for a tools/call
// streamed as SSE, the tool has then run to completion) and replaces it
// with status and a JSON-RPC error, as a lost answer.
func replaceAnswer(resp *http.Response, status int) {
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"peers proxy: the request was served and its answer replaced by %d (Reject.AfterRun)"},"id":null}`, status)
	resp.StatusCode = status
	resp.Status = fmt.Sprintf("%d %s", status, http.StatusText(status))
	resp.Header = http.Header{"Content-Type": {"application/json"}}
	resp.Body = io.NopCloser(strings.NewReader(body))
	resp.ContentLength = int64(len(body))
}

// takeRejectLocked pops the first queued rejection rec matches. p.mu must
// be held.
func (p *proxy) takeRejectLocked(rec *fixtures.Request) (Reject, bool) {
	for i, r := range p.rejects {
		match := rec.RPCMethod == r.Method
		if r.Method == "" {
			match = !r.SessionBound || rec.SessionID != ""
		}
		if match {
			p.rejects = slices.Delete(p.rejects, i, i+1)
			return r, true
		}
	}
	return Reject{}, false
}

// observe records the upstream's answer to rec and tracks sessions; after a
// handshake completes while forget-next is armed, it makes the server
// forget the session before the client has the answer.
func (p *proxy) observe(rec *fixtures.Request, resp *http.Response) {
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	p.mu.Lock()
	rec.Status = resp.StatusCode
	if issued := resp.Header.Get("Mcp-Session-Id"); ok && issued != "" && !slices.Contains(p.live, issued) {
		p.live = append(p.live, issued)
	}
	if ok && rec.HTTPMethod == http.MethodDelete {
		p.live = slices.DeleteFunc(p.live, func(s string) bool { return s == rec.SessionID })
	}
	forget := ok && rec.RPCMethod == "notifications/initialized" && rec.SessionID != "" && p.forgetLeft > 0
	if forget {
		p.forgetLeft--
	}
	p.mu.Unlock()
	if forget {
		_ = p.deleteUpstream(resp.Request.Context(), rec.SessionID)
	}
}

// deleteUpstream ends a session on the server with a DELETE of its own,
// not recorded in the ledger.
func (p *proxy) deleteUpstream(ctx context.Context, id string) error {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, p.upstream.String(), nil)
	if err != nil {
		return fmt.Errorf("peers proxy: forget %s: %w", id, err)
	}
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := (&http.Client{Transport: p.tr, Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("peers proxy: forget %s: %w", id, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	p.mu.Lock()
	p.live = slices.DeleteFunc(p.live, func(s string) bool { return s == id })
	p.mu.Unlock()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("peers proxy: forget %s: the server answered DELETE with HTTP %d", id, resp.StatusCode)
	}
	return nil
}

func (p *proxy) forgetAll(ctx context.Context) error {
	p.mu.Lock()
	ids := slices.Clone(p.live)
	p.mu.Unlock()
	var errs []error
	for _, id := range ids {
		errs = append(errs, p.deleteUpstream(ctx, id))
	}
	return errors.Join(errs...)
}

func (p *proxy) forgetNext(n int) {
	p.mu.Lock()
	p.forgetLeft = n
	p.mu.Unlock()
}

func (p *proxy) rejectNext(r Reject) {
	p.mu.Lock()
	p.rejects = append(p.rejects, r)
	p.mu.Unlock()
}

func (p *proxy) requests() []fixtures.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]fixtures.Request, len(p.ledger))
	for i, r := range p.ledger {
		out[i] = *r
	}
	return out
}

func (p *proxy) clearHooks() {
	p.mu.Lock()
	p.rejects, p.forgetLeft = nil, 0
	p.mu.Unlock()
}

func (p *proxy) reset() {
	p.mu.Lock()
	p.ledger = nil
	p.mu.Unlock()
}

func (p *proxy) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, p.srv.Close())
	}
	p.tr.CloseIdleConnections()
	if err != nil {
		return fmt.Errorf("peers proxy: close: %w", err)
	}
	return nil
}
