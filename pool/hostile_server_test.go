package pool_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// hostileServer is a minimal MCP server (2025-11-25, sessions) on
// 127.0.0.1 whose answers a test shapes: initialize issues the session id
// sessionID returns, and each tools/call is counted (a run of the tool)
// and answered by call (a sessionID of "" makes a sessionless server,
// whose callers share one client). Everything else is answered as a plain server
// would. It records the headers of every request it sees.
type hostileServer struct {
	srv       *httptest.Server
	runs      atomic.Int32 // tools/call requests received
	inits     atomic.Int32 // initialize requests received
	mu        sync.Mutex
	sessionID func() string
	call      func(w http.ResponseWriter, r *http.Request, id json.RawMessage)
	headers   []http.Header
	hosts     []string // the Host of every request, in order
}

// hostsSeen returns the Host of every request so far.
func (h *hostileServer) hostsSeen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.hosts)
}

func startHostile(t *testing.T) *hostileServer {
	t.Helper()
	h := &hostileServer{sessionID: func() string { return "sess-1" }}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	if !strings.HasPrefix(h.srv.Listener.Addr().String(), "127.0.0.1:") {
		t.Fatalf("hostile server listens on %s, want 127.0.0.1", h.srv.Listener.Addr())
	}
	return h
}

// set replaces the answers under the lock, so a test may change them
// between calls.
func (h *hostileServer) set(sessionID func() string, call func(w http.ResponseWriter, r *http.Request, id json.RawMessage)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if sessionID != nil {
		h.sessionID = sessionID
	}
	h.call = call
}

func (h *hostileServer) serve(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.headers = append(h.headers, r.Header.Clone())
	h.hosts = append(h.hosts, r.Host)
	sessionID, call := h.sessionID, h.call
	h.mu.Unlock()
	switch r.Method {
	case http.MethodDelete:
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	_ = json.Unmarshal(body, &msg)
	switch {
	case len(msg.ID) == 0:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		h.inits.Add(1)
		if id := sessionID(); id != "" { // "": a sessionless server
			w.Header().Set("Mcp-Session-Id", id)
		}
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1"}}}`, msg.ID))
	case msg.Method == "tools/call":
		h.runs.Add(1)
		if call == nil {
			writeJSON(w, http.StatusOK, toolResult(msg.ID, "ok"))
			return
		}
		call(w, r, msg.ID)
	default:
		writeJSON(w, http.StatusOK, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID))
	}
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func toolResult(id json.RawMessage, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)
}

// paddedResult returns a tool result for id exactly n bytes long (n must
// leave room for the JSON around the text), as a head, a run of 'x' and a
// tail, so a test can stream gigabytes without holding them.
func paddedResult(id json.RawMessage, n int64) (head string, pad int64, tail string) {
	head = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, id)
	tail = `"}]}}`
	return head, n - int64(len(head)+len(tail)), tail
}

// writePadded streams head, pad bytes of 'x' and tail to w, stopping at
// the first write error (the client hung up).
func writePadded(w io.Writer, head string, pad int64, tail string) {
	if _, err := io.WriteString(w, head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for pad > 0 {
		n := min(pad, int64(len(chunk)))
		if _, err := w.Write(chunk[:n]); err != nil {
			return
		}
		pad -= n
	}
	_, _ = io.WriteString(w, tail)
}

// jsonOfSize answers with a tool result of exactly n bytes.
func jsonOfSize(n int64) func(http.ResponseWriter, *http.Request, json.RawMessage) {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		head, pad, tail := paddedResult(id, n)
		w.Header().Set("Content-Type", "application/json")
		writePadded(w, head, pad, tail)
	}
}

// errorBodyOfSize answers HTTP 400 with a JSON-RPC error of exactly n bytes.
func errorBodyOfSize(n int64) func(http.ResponseWriter, *http.Request, json.RawMessage) {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"`, id)
		tail := `"}}`
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		writePadded(w, head, n-int64(len(head)+len(tail)), tail)
	}
}

// sseEventOfSize answers with an SSE stream whose one event, the result,
// is exactly n bytes from "data: " through the blank line that ends it.
func sseEventOfSize(n int64) func(http.ResponseWriter, *http.Request, json.RawMessage) {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		head, pad, tail := paddedResult(id, n-int64(len("data: \n\n")))
		w.Header().Set("Content-Type", "text/event-stream")
		writePadded(w, "data: "+head, pad, tail+"\n\n")
	}
}

// gzipBomb answers with a tool result of n bytes once decoded, sent
// gzip-compressed (a few kilobytes on the wire per megabyte decoded).
func gzipBomb(n int64) func(http.ResponseWriter, *http.Request, json.RawMessage) {
	return func(w http.ResponseWriter, _ *http.Request, id json.RawMessage) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		head, pad, tail := paddedResult(id, n)
		writePadded(zw, head, pad, tail)
		_ = zw.Close()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(buf.Bytes())
	}
}

// spanTexts returns every string a recorded span carries: name, status
// description, attribute values, event names and event attribute values,
// as the spans hold them (before any exporter escapes them).
func spanTexts(rec *telemetry.Recorder) []string {
	var out []string
	add := func(s sdktrace.ReadOnlySpan) {
		out = append(out, s.Name(), s.Status().Description)
		for _, a := range s.Attributes() {
			out = append(out, a.Value.String())
		}
		for _, e := range s.Events() {
			out = append(out, e.Name)
			for _, a := range e.Attributes {
				out = append(out, a.Value.String())
			}
		}
	}
	for _, s := range rec.Spans() {
		add(s)
	}
	return out
}

// allocatedDuring returns the bytes the process allocated while f ran
// (runtime.MemStats.TotalAlloc): a body buffered whole shows as at least
// its size, whenever the collector ran.
func allocatedDuring(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// hostileHarness is a harness whose pool speaks 2025-11-25 without
// negotiating (the hostile server knows no server/discover), with o's
// other options.
func hostileHarness(t *testing.T, o pool.Options) *harness {
	t.Helper()
	o.ProtocolVersion = "2025-11-25"
	return newHarness(t, harnessOpts{pool: o})
}

// hostileTarget is endpoint with a bearer token and a secret header, the
// credentials a hostile server must never get to move or show.
func hostileTarget(t *testing.T, endpoint string) *pool.Target {
	t.Helper()
	tg, err := pool.NewTarget(pool.TargetConfig{
		Endpoint:    endpoint,
		BearerToken: bearerSecret,
		Header:      http.Header{"X-Api-Key": {headerSecret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// callTool calls tool "t" on tg through h's pool.
func (h *harness) callTool(ctx context.Context, tg *pool.Target) (*mcp.CallToolResult, error) {
	return h.pool.CallTool(ctx, tg, &mcp.CallToolParams{Name: "t"})
}
