package pool_test

// The hostile server of FuzzPoolAgainstHostileServer (hostile_fuzz_test.go):
// a streamable HTTP MCP server on 127.0.0.1 whose every answer is read from
// the fuzzer's input. Decoding is total: any byte string is a program, and
// a program that runs out of bytes answers as a well-behaved 2025-11-25
// server does, so every case ends.
//
// Input layout: [calls][deadline][n0][n0 bytes][n1][n1 bytes][n2]...[n3]...
// Each of the four request classes (handshake POSTs, tools/call POSTs,
// DELETEs, GETs) reads its own byte stream, so a DELETE the pool sends in
// the background does not shift what the next call is answered. A step is
// four bytes: the op (low 4 bits) with a delay class (bits 4-5), then three
// parameters the op reads as it likes.

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Request classes: each reads its own stream of steps.
const (
	classHandshake = iota // server/discover, initialize, notifications, ping
	classCall             // tools/call
	classDelete           // DELETE (session close)
	classGet              // GET (SSE resumption, standalone stream)
	nClasses
)

// Ops: what a step makes the server answer.
const (
	opNormal        = iota // the well-behaved answer (JSON); p1 odd: server/discover served
	opNormalSSE            // the well-behaved answer as an SSE stream
	opStatus               // a status from statusTable, Retry-After, Location
	opRPCError             // a JSON-RPC error or isError result with hostile text
	opWrongID              // a result for another id, or none
	opTruncated            // the answer cut short
	opHuge                 // a body of sizeTable's size (streamed, never allocated)
	opNotifications        // many notifications before the result
	opEndless              // an SSE stream that never ends
	opSSECut               // an SSE stream with ids cut before the result
	opGzipBomb             // Content-Encoding gzip inflating to 8 or 16 times the cap
	opSession              // a hostile Mcp-Session-Id
	opContentType          // a wrong or garbage Content-Type
	opHeaders              // hostile extra headers (huge, many)
	opEcho                 // the request's credentials echoed back
	opHang                 // no answer until the client gives up, or a cut connection
	nOps
)

// statusTable is the statuses opStatus answers with.
var statusTable = []int{200, 202, 204, 301, 302, 307, 308, 400, 401, 403, 404, 429, 500, 503}

// retryAfterTable is the Retry-After values of opStatus ("" sends none).
var retryAfterTable = []string{
	"", "0", "1", "7", "-1", "86400",
	"99999999999999999999", // overflows int64 seconds
	"9223372036854775807",  // MaxInt64 seconds: overflows a Duration
	"9223372037",           // seconds just past a Duration's range
	"Fri, 31 Dec 9999 23:59:59 GMT",
	"Thu, 01 Jan 1970 00:00:00 GMT",
	"1e9", " 5", "garbage\x01\u202e",
}

// mib is a mebibyte.
const mib = 1 << 20

// assumedCap is the largest default Options.MaxResponseBytes the harness
// assumes: the pool must refuse a body past it (16 MiB or less).
const assumedCap = 16 * mib

// sizeTable is the body sizes of opHuge: small, just under and over the
// assumed cap, twice it, and 16 times it (what a body read whole, with no
// cap, cannot hide from the heap and byte-count checks).
var sizeTable = []int64{64 << 10, mib, assumedCap - 4096, assumedCap + 1, 2 * assumedCap, 16 * assumedCap}

// scriptedServer is the scripted server and a second, foreign listener that
// the main one's redirects may point at: any credential the foreign one
// sees was carried across origins.
type scriptedServer struct {
	main, foreign *httptest.Server
	secrets       fuzzSecrets
	stop          chan struct{} // closed before the listeners close: ends every held answer

	mu           sync.Mutex
	prog         *program
	runs         map[string]int // tools/call nonce -> times answered 2xx
	leaked       []string       // credentials the foreign listener saw
	sawCreds     bool           // the main listener saw both credentials
	sessions     int
	lastCall     map[string]rpcIn // session id -> its last tools/call, for a resuming GET
	overAccepted []string         // huge bodies the client read past the bound
}

// fuzzSecrets are a case's credentials: random, recognisable values the
// harness looks for in every error and span.
type fuzzSecrets struct {
	bearer, header string
}

// secretHeaderName is the target's secret header, named by
// TargetConfig.SecretHeaders (its name alone does not look secret).
const secretHeaderName = "X-Tenant-Pass"

func newScriptedServer(prog *program, secrets fuzzSecrets) *scriptedServer {
	s := &scriptedServer{prog: prog, secrets: secrets, runs: map[string]int{}, lastCall: map[string]rpcIn{}, stop: make(chan struct{})}
	s.main = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, false) }))
	s.foreign = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, true) }))
	return s
}

// close ends every held answer, then both listeners.
func (s *scriptedServer) close() {
	close(s.stop)
	s.main.CloseClientConnections()
	s.foreign.CloseClientConnections()
	s.main.Close()
	s.foreign.Close()
}

// rpcIn is the part of a client message the server reads.
type rpcIn struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Arguments       struct {
			Nonce string `json:"nonce"`
		} `json:"arguments"`
	} `json:"params"`
}

// request is one incoming request as an op sees it.
type request struct {
	r       *http.Request
	msg     rpcIn
	hasID   bool
	class   int
	foreign bool
}

func (s *scriptedServer) serve(w http.ResponseWriter, r *http.Request, foreign bool) {
	req := request{r: r, foreign: foreign}
	if foreign {
		s.noteForeign(r)
	} else if r.Header.Get("Authorization") == "Bearer "+s.secrets.bearer && r.Header.Get(secretHeaderName) == s.secrets.header {
		s.mu.Lock()
		s.sawCreds = true
		s.mu.Unlock()
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, mib))
	switch r.Method {
	case http.MethodPost:
		_ = json.Unmarshal(body, &req.msg)
		req.hasID = len(req.msg.ID) > 0 && string(req.msg.ID) != "null"
		req.class = classHandshake
		if req.msg.Method == "tools/call" {
			req.class = classCall
		}
	case http.MethodDelete:
		req.class = classDelete
	default:
		req.class = classGet
	}
	if req.class == classCall {
		s.mu.Lock()
		s.lastCall[r.Header.Get("Mcp-Session-Id")] = req.msg
		s.mu.Unlock()
	}
	st := s.next(req.class)
	if d := st.delay(); d > 0 {
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		case <-s.stop:
			return
		}
	}
	s.answer(w, req, st)
}

// noteForeign records the credentials a request to the foreign listener
// carried: they were sent to an origin they do not belong to.
func (s *scriptedServer) noteForeign(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v := r.Header.Get("Authorization"); v != "" {
		s.leaked = append(s.leaked, "Authorization")
	}
	if v := r.Header.Get(secretHeaderName); v != "" {
		s.leaked = append(s.leaked, secretHeaderName)
	}
	if q := r.URL.RawQuery; strings.Contains(q, s.secrets.bearer) || strings.Contains(q, s.secrets.header) {
		s.leaked = append(s.leaked, "query")
	}
}

// step is one decoded answer.
type step struct{ op, p1, p2, p3 byte }

func (st step) delay() time.Duration {
	return [...]time.Duration{0, time.Millisecond, 5 * time.Millisecond, 25 * time.Millisecond}[st.op>>4&3]
}

// next decodes the next step of a class's stream.
func (s *scriptedServer) next(class int) step {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.prog.streams[class]
	return step{op: c.byte(), p1: c.byte(), p2: c.byte(), p3: c.byte()}
}

// ran counts a tools/call answered 2xx: the tool ran (or began to).
func (s *scriptedServer) ran(req request, status int) {
	if req.class != classCall || status < 200 || status > 299 {
		return
	}
	s.mu.Lock()
	s.runs[req.msg.Params.Arguments.Nonce]++
	s.mu.Unlock()
}

// accepted records a huge body the client read more of than a capped
// client can: the cap plus what loopback socket buffers hold.
func (s *scriptedServer) accepted(n, size int64) {
	if n <= assumedCap+acceptSlack {
		return
	}
	s.mu.Lock()
	s.overAccepted = append(s.overAccepted, fmt.Sprintf("%d of a %d-byte body", n, size))
	s.mu.Unlock()
}

// acceptSlack is what socket buffers and net/http may hold of a body the
// client stopped reading: Linux grows a loopback receive buffer up to
// net.ipv4.tcp_rmem's maximum (32 MiB on some machines), the send buffer
// up to 4 MiB.
const acceptSlack = 40 * mib

func (s *scriptedServer) newSessionID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions++
	return "s-" + strconv.Itoa(s.sessions)
}

// answer writes st's answer to req.
func (s *scriptedServer) answer(w http.ResponseWriter, req request, st step) {
	opAnswers[st.op%nOps](s, w, req, st)
}

// opAnswers is each op's answer, by op.
var opAnswers = [nOps]func(*scriptedServer, http.ResponseWriter, request, step){
	opNormal:        (*scriptedServer).normalStep,
	opNormalSSE:     (*scriptedServer).normalSSE,
	opStatus:        (*scriptedServer).status,
	opRPCError:      (*scriptedServer).rpcError,
	opWrongID:       (*scriptedServer).wrongID,
	opTruncated:     (*scriptedServer).truncated,
	opHuge:          (*scriptedServer).huge,
	opNotifications: (*scriptedServer).notifications,
	opEndless:       (*scriptedServer).endless,
	opSSECut:        (*scriptedServer).sseCut,
	opGzipBomb:      (*scriptedServer).gzipBomb,
	opSession: func(s *scriptedServer, w http.ResponseWriter, req request, st step) {
		w.Header().Set("Mcp-Session-Id", s.hostileText(st.p1, st.p2))
		s.normal(w, req, nil)
	},
	opContentType: (*scriptedServer).contentType,
	opHeaders:     (*scriptedServer).headers,
	opEcho:        (*scriptedServer).echo,
	opHang:        (*scriptedServer).hang,
}

// normalStep is opNormal: the well-behaved answer, where server/discover
// with p1 odd is answered as a 2026-07-28 server does (no sessions: the
// pool shares one client for every call), and refused otherwise.
func (s *scriptedServer) normalStep(w http.ResponseWriter, req request, st step) {
	if req.msg.Method == "server/discover" && req.hasID && st.p1&1 != 0 {
		s.ran(req, http.StatusOK)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(message(req.msg.ID, map[string]any{
			"supportedVersions": []string{"2026-07-28"},
			"capabilities":      map[string]any{"tools": map[string]any{}},
		}))
		return
	}
	s.normal(w, req, nil)
}

// normalResult returns the well-behaved result of req's method and the
// HTTP status to answer with; a nil result means no JSON-RPC body.
func (s *scriptedServer) normalResult(w http.ResponseWriter, req request) (any, int) {
	switch {
	case req.r.Method == http.MethodDelete:
		return nil, http.StatusOK
	case req.r.Method != http.MethodPost:
		return nil, http.StatusMethodNotAllowed
	case !req.hasID:
		return nil, http.StatusAccepted
	}
	switch req.msg.Method {
	case "initialize":
		if w.Header().Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", s.newSessionID())
		}
		v := req.msg.Params.ProtocolVersion
		if v != "2025-11-25" && v != "2025-06-18" && v != "2025-03-26" {
			v = "2025-11-25"
		}
		return map[string]any{
			"protocolVersion": v,
			"capabilities":    map[string]any{"tools": map[string]any{}},
			"serverInfo":      map[string]any{"name": "hostile", "version": "1"},
		}, http.StatusOK
	case "tools/call":
		return scriptedToolResult(req.msg.Params.Arguments.Nonce), http.StatusOK
	case "ping":
		return map[string]any{}, http.StatusOK
	}
	// server/discover and anything else: refused as a 2025-11-25 server
	// refuses them, which makes the client fall back to initialize.
	return rpcErrorBody(nil, -32601, "Method not found"), http.StatusBadRequest
}

// rpcErrorBody is a JSON-RPC error object to marshal as the whole message.
type rpcErrorMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func rpcErrorBody(id json.RawMessage, code int, message string) rpcErrorMsg {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	m := rpcErrorMsg{JSONRPC: "2.0", ID: id}
	m.Error.Code, m.Error.Message = code, message
	return m
}

// message is the JSON-RPC message answering req with result (an
// rpcErrorMsg is sent as is).
func message(id json.RawMessage, result any) []byte {
	if m, ok := result.(rpcErrorMsg); ok {
		b, _ := json.Marshal(m)
		return b
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
	return b
}

// normal writes the well-behaved answer as JSON; override, when set,
// replaces the result.
func (s *scriptedServer) normal(w http.ResponseWriter, req request, override any) {
	if s.resume(w, req) {
		return
	}
	result, status := s.normalResult(w, req)
	if override != nil && result != nil {
		result = override
	}
	s.ran(req, status)
	if result == nil {
		w.WriteHeader(status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(message(req.msg.ID, result))
}

// resume answers a GET with Last-Event-ID as a server that keeps its
// streams does: the rest of the session's last call's stream, its result.
func (s *scriptedServer) resume(w http.ResponseWriter, req request) bool {
	if req.r.Method != http.MethodGet || req.r.Header.Get("Last-Event-ID") == "" {
		return false
	}
	s.mu.Lock()
	call, ok := s.lastCall[req.r.Header.Get("Mcp-Session-Id")]
	s.mu.Unlock()
	if !ok {
		return false
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	writeEvent(w, "r1", message(call.ID, scriptedToolResult(call.Params.Arguments.Nonce)))
	return true
}

// scriptedToolResult is the well-behaved tools/call result.
func scriptedToolResult(nonce string) any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": "ran " + nonce}}}
}

// sseHeader starts an SSE answer.
func (s *scriptedServer) sseHeader(w http.ResponseWriter, req request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	s.ran(req, http.StatusOK)
}

// writeEvent writes one SSE event and flushes it; false when the client
// has gone.
func writeEvent(w http.ResponseWriter, id string, data []byte) bool {
	var b bytes.Buffer
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return false
	}
	_ = http.NewResponseController(w).Flush()
	return true
}

func (s *scriptedServer) normalSSE(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil || status != http.StatusOK {
		s.normal(w, req, nil)
		return
	}
	s.sseHeader(w, req)
	if st.p1&2 != 0 {
		_, _ = io.WriteString(w, "retry: "+strconv.Itoa(int(st.p2)*40)+"\n\n")
	}
	id := ""
	if st.p1&1 != 0 {
		id = "e1"
		_, _ = io.WriteString(w, "id: e0\ndata:\n\n") // a priming event
	}
	writeEvent(w, id, message(req.msg.ID, result))
}

func (s *scriptedServer) status(w http.ResponseWriter, req request, st step) {
	code := statusTable[int(st.p1)%len(statusTable)]
	if ra := retryAfterTable[int(st.p2)%len(retryAfterTable)]; ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	if code >= 300 && code < 400 {
		base := s.main.URL
		if st.p3&1 != 0 {
			base = s.foreign.URL
		}
		locations := []string{base + "/", base + "/mcp", base + "/?token=x", "//" + strings.TrimPrefix(base, "http://") + "/mcp"}
		w.Header().Set("Location", locations[st.p3>>1&3])
	}
	s.ran(req, code)
	switch st.p3 >> 3 & 3 {
	case 1: // a JSON-RPC error with hostile text, as the SDK decodes it
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write(message(nil, rpcErrorBody(req.msg.ID, -32001, s.hostileText(st.p3>>5, st.p2))))
	case 2: // hostile plain text
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, s.hostileText(st.p3>>5, st.p2))
	default:
		w.WriteHeader(code)
	}
}

func (s *scriptedServer) rpcError(w http.ResponseWriter, req request, st step) {
	text := s.hostileText(st.p1, st.p2)
	switch st.p3 % 3 {
	case 0:
		s.normal(w, req, rpcErrorBody(req.msg.ID, -32000-int(st.p3), text))
	case 1: // a tool error result
		s.normal(w, req, map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": text}}})
	default: // the error as an SSE event
		s.sseHeader(w, req)
		writeEvent(w, "", message(nil, rpcErrorBody(req.msg.ID, -32603, text)))
	}
}

func (s *scriptedServer) wrongID(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil {
		s.normal(w, req, nil)
		return
	}
	ids := []string{`"other"`, `null`, `999999`, `{"x":1}`, `1e400`}
	id := json.RawMessage(ids[int(st.p1)%len(ids)])
	s.ran(req, status)
	if st.p2&1 == 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(message(id, result))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(status)
	writeEvent(w, "", message(id, result))
	if st.p2&2 != 0 { // then the right one, twice
		writeEvent(w, "", message(req.msg.ID, result))
		writeEvent(w, "", message(req.msg.ID, result))
	}
}

func (s *scriptedServer) truncated(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil {
		s.normal(w, req, nil)
		return
	}
	body := message(req.msg.ID, result)
	cut := len(body) * int(st.p1) / 256
	s.ran(req, status)
	if st.p2&1 != 0 {
		w.Header().Set("Content-Type", "text/event-stream")
		body = append(append([]byte("id: t1\ndata: "), body...), "\n\n"...)
		cut += len("id: t1\ndata: ")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if st.p2&2 != 0 { // promise the whole length, send part of it
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body[:cut])
	_ = http.NewResponseController(w).Flush()
	panic(http.ErrAbortHandler) // cut the connection mid-body
}

// filler is a reader of n repeating bytes: a huge body streamed from one
// 32 KiB block, never allocated whole, and copied in blocks (a byte loop
// would cost seconds per body under the race detector).
type filler struct {
	block []byte
	n     int64
}

func newFiller(b byte, n int64) *filler {
	return &filler{block: bytes.Repeat([]byte{b}, 32<<10), n: n}
}

func (f *filler) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, io.EOF
	}
	k := copy(p[:min(int64(len(p)), f.n)], f.block)
	f.n -= int64(k)
	return k, nil
}

// WriteTo writes the rest in blocks; io.Copy takes this path.
func (f *filler) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for f.n > 0 {
		k, err := w.Write(f.block[:min(int64(len(f.block)), f.n)])
		total += int64(k)
		f.n -= int64(k)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// countingWriter counts the bytes the client accepted.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (s *scriptedServer) huge(w http.ResponseWriter, req request, st step) {
	size := sizeTable[int(st.p1)%len(sizeTable)]
	result, status := s.normalResult(w, req)
	if result == nil {
		result, status = map[string]any{}, http.StatusOK
	}
	var head, tail []byte
	var fill byte = ' '
	switch st.p2 % 5 {
	case 0: // valid JSON: whitespace before the message
		w.Header().Set("Content-Type", "application/json")
		tail = message(req.msg.ID, result)
	case 1: // junk
		w.Header().Set("Content-Type", "application/json")
		fill = 'A'
	case 2: // a huge error message
		w.Header().Set("Content-Type", "application/json")
		head, fill, tail = []byte(`{"jsonrpc":"2.0","id":`+string(req.msg.ID)+`,"error":{"code":-1,"message":"`), 'm', []byte(`"}}`)
	case 3: // one huge SSE event
		w.Header().Set("Content-Type", "text/event-stream")
		head, fill, tail = []byte("data: "), 'x', []byte("\n\n")
	default: // a huge error body on a failure status
		status = statusTable[7+int(st.p3)%(len(statusTable)-7)]
		w.Header().Set("Content-Type", "application/json")
		tail = message(nil, rpcErrorBody(req.msg.ID, -32000, "huge"))
	}
	if st.p3&1 != 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(int64(len(head))+size+int64(len(tail)), 10))
	}
	w.WriteHeader(status)
	s.ran(req, status)
	cw := &countingWriter{w: w}
	_, _ = cw.Write(head)
	if _, err := io.Copy(cw, newFiller(fill, size)); err == nil {
		_, _ = cw.Write(tail)
	}
	s.accepted(cw.n, size)
}

func (s *scriptedServer) notifications(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil || status != http.StatusOK {
		s.normal(w, req, nil)
		return
	}
	s.sseHeader(w, req)
	n := int(st.p1)*8 + int(st.p2)%8
	for i := range n {
		id := ""
		if st.p3&1 != 0 {
			id = "n" + strconv.Itoa(i)
		}
		var note any
		switch st.p3 >> 1 % 4 {
		case 0:
			note = map[string]any{"jsonrpc": "2.0", "method": "notifications/progress", "params": map[string]any{"progressToken": i, "progress": i, "message": s.hostileText(st.p2, 0)}}
		case 1:
			note = map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "error", "data": s.hostileText(st.p2, 0)}}
		case 2: // a server request the client has no handler for
			note = map[string]any{"jsonrpc": "2.0", "id": 1000 + i, "method": "elicitation/create", "params": map[string]any{"message": s.hostileText(st.p2, 0)}}
		default:
			note = map[string]any{"jsonrpc": "2.0", "method": s.hostileText(st.p2, 0)}
		}
		b, _ := json.Marshal(note)
		if !writeEvent(w, id, b) {
			return
		}
	}
	writeEvent(w, "", message(req.msg.ID, result))
}

// endless streams events until the client goes away or the case ends; one
// event a millisecond keeps it cheap.
func (s *scriptedServer) endless(w http.ResponseWriter, req request, st step) {
	s.sseHeader(w, req)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-req.r.Context().Done():
			return
		case <-s.stop:
			return
		case <-tick.C:
		}
		var err error
		switch st.p1 % 3 {
		case 0:
			_, err = io.WriteString(w, ": keep-alive\n\n")
		case 1:
			_, err = io.WriteString(w, "id: "+strconv.Itoa(i)+"\ndata:\n\n")
		default:
			_, err = io.WriteString(w, `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":`+strconv.Itoa(i)+"}}\n\n")
		}
		if err != nil {
			return
		}
		_ = http.NewResponseController(w).Flush()
	}
}

// sseCut primes an SSE stream with event ids and ends it before the
// result, so the client resumes with a GET (answered by the GET stream).
func (s *scriptedServer) sseCut(w http.ResponseWriter, req request, st step) {
	s.sseHeader(w, req)
	_, _ = io.WriteString(w, "retry: "+strconv.Itoa(int(st.p1)%50)+"\n")
	writeEvent(w, "c"+strconv.Itoa(int(st.p2)), nil)
	if st.p3&1 != 0 {
		panic(http.ErrAbortHandler)
	}
}

// bombMember is a gzip member of 1 MiB of spaces, made once (about
// 1 KiB): concatenated members are one gzip stream, so a bomb of any size
// inflating to leading whitespace of a JSON message costs the server a
// write of a few KiB per 1 MiB.
var bombMember = sync.OnceValue(func() []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = io.Copy(zw, newFiller(' ', mib))
	_ = zw.Close()
	return b.Bytes()
})

// gzipBomb answers with Content-Encoding gzip: 8 or 16 times the cap of
// whitespace, then the well-behaved message, which net/http inflates for
// the client because it asked for gzip.
func (s *scriptedServer) gzipBomb(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil {
		result, status = map[string]any{}, http.StatusOK
	}
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Content-Type", []string{"application/json", "text/event-stream"}[st.p2&1])
	w.WriteHeader(status)
	s.ran(req, status)
	if st.p2&1 != 0 && st.p3&1 == 0 {
		// An SSE event's field name first, so the inflated line is one
		// huge data field; without it, a line with no colon at all.
		_, _ = w.Write(gzipped([]byte("data: ")))
	}
	for range (1 + int(st.p1)%2) * 8 * assumedCap / mib {
		if _, err := w.Write(bombMember()); err != nil {
			return
		}
	}
	tail := message(req.msg.ID, result)
	if st.p2&1 != 0 {
		tail = append(tail, "\n\n"...)
	}
	_, _ = w.Write(gzipped(tail))
}

// gzipped is b as one gzip member.
func gzipped(b []byte) []byte {
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	_, _ = zw.Write(b)
	_ = zw.Close()
	return out.Bytes()
}

// contentTypes are opContentType's headers.
var contentTypes = []string{"", "text/plain", "application/json; charset=utf-8", "text/event-stream", "application/json\x01", "text/html\u202e", "multipart/mixed; boundary=x", strings.Repeat("a/b;", 2000)}

func (s *scriptedServer) contentType(w http.ResponseWriter, req request, st step) {
	result, status := s.normalResult(w, req)
	if result == nil {
		s.normal(w, req, nil)
		return
	}
	if ct := contentTypes[int(st.p1)%len(contentTypes)]; ct != "" {
		w.Header().Set("Content-Type", ct)
	} else {
		w.Header()["Content-Type"] = nil // no sniffing either
	}
	w.WriteHeader(status)
	s.ran(req, status)
	_, _ = w.Write(message(req.msg.ID, result))
}

func (s *scriptedServer) headers(w http.ResponseWriter, req request, st step) {
	switch st.p1 % 3 {
	case 0: // one header past net/http's 1 MiB response header limit
		w.Header().Set("X-Huge", strings.Repeat("h", mib+int(st.p2)))
	case 1: // many headers
		for i := range 200 + int(st.p2)*4 {
			w.Header().Set("X-Many-"+strconv.Itoa(i), s.hostileText(st.p3, 0))
		}
	default: // hostile values on the headers the client reads
		w.Header().Set("Retry-After", s.hostileText(st.p2, st.p3))
		w.Header().Set("WWW-Authenticate", `Bearer error="`+s.hostileText(st.p2, st.p3)+`"`)
	}
	s.normal(w, req, nil)
}

// echo sends the request's credentials back where the client may quote
// them: the session id, an error message, an error body, a notification.
func (s *scriptedServer) echo(w http.ResponseWriter, req request, st step) {
	creds := []string{req.r.Header.Get("Authorization"), req.r.Header.Get(secretHeaderName), s.secrets.bearer, s.secrets.header}
	cred := creds[int(st.p2)%len(creds)]
	switch st.p1 % 5 {
	case 0:
		w.Header().Set("Mcp-Session-Id", cred)
		s.normal(w, req, nil)
	case 1:
		s.normal(w, req, rpcErrorBody(req.msg.ID, -32000, "denied for "+cred))
	case 2:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusTable[7+int(st.p3)%(len(statusTable)-7)])
		_, _ = w.Write(message(nil, rpcErrorBody(req.msg.ID, -32000, "bad credential "+cred)))
	case 3:
		s.sseHeader(w, req)
		note, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "error", "data": cred}})
		writeEvent(w, "", note)
		writeEvent(w, "", message(nil, rpcErrorBody(req.msg.ID, -32000, cred)))
	default:
		w.Header().Set("Mcp-Session-Id", "s-"+cred+"\x01")
		s.normal(w, req, nil)
	}
}

// hang holds the answer until the client gives up or the case ends, or cuts
// the connection.
func (s *scriptedServer) hang(w http.ResponseWriter, req request, st step) {
	switch st.p1 % 3 {
	case 0: // nothing at all
	case 1: // headers, then nothing
		w.Header().Set("Content-Type", []string{"application/json", "text/event-stream"}[st.p2&1])
		w.WriteHeader(http.StatusOK)
		s.ran(req, http.StatusOK)
		_ = http.NewResponseController(w).Flush()
	default: // cut the connection
		panic(http.ErrAbortHandler)
	}
	held := (<-chan time.Time)(nil)
	if req.class == classDelete {
		// The SDK gives a DELETE 5 s: hold it a little only, or every
		// such case would cost Close those seconds.
		held = time.After(50 * time.Millisecond)
	}
	select {
	case <-req.r.Context().Done():
	case <-s.stop:
	case <-held:
	}
}

// hostileTexts are the families of server text: control bytes, C1, bidi
// overrides, invalid UTF-8, DEL, ANSI escapes, and the credentials.
func (s *scriptedServer) hostileText(family, size byte) string {
	texts := []string{
		"nul\x00bell\x07esc\x1b[31mred\r\nInjected: header",
		"c1 \u0085 next line \u009b csi",
		"bidi \u202e gnp.exe \u2066 isolate \u200f mark",
		"invalid \xff\xfe\x80 utf-8",
		"del \x7f char",
		"\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\",
		s.secrets.bearer,
		"Bearer " + s.secrets.bearer + " and " + s.secrets.header,
		`quotes " \" \\ </script>`,
		"plain",
	}
	t := texts[int(family)%len(texts)]
	n := []int{0, 0, 0, 4 << 10, 64 << 10, 1 << 20}[int(size)%6]
	for len(t) < n {
		t += t
	}
	return t
}
