package pool_test

// The pool's spans with Options.SemconvCallSpans, held against the
// OpenTelemetry MCP semantic conventions (semantic-conventions-genai v0.1.0,
// docs/gen-ai/mcp.md, the "MCP client" span) and against the wire: every
// jsonrpc.request.id and session id a span names is the one a recording
// round tripper saw go out or come back, never one the pool reports about
// itself.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/peers"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// wireRPC is one JSON-RPC message the pool sent, as the wire carried it.
type wireRPC struct {
	method, id string // id "" for a notification
	session    string // the Mcp-Session-Id the answer issued ("" none)
	status     int    // HTTP status of the answer; 0 below HTTP
}

// wireLog is a round tripper that records the JSON-RPC method and id of
// every POST body, and the answer's status and Mcp-Session-Id.
type wireLog struct {
	base http.RoundTripper
	mu   sync.Mutex
	rpcs []wireRPC
}

func (w *wireLog) RoundTrip(req *http.Request) (*http.Response, error) {
	var rec wireRPC
	post := req.Method == http.MethodPost && req.GetBody != nil
	if post {
		body, err := req.GetBody()
		if err == nil {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			data, _ := io.ReadAll(body)
			body.Close()
			if json.Unmarshal(data, &msg) == nil {
				rec.method = msg.Method
				rec.id = strings.Trim(string(msg.ID), `"`)
			}
		}
	}
	resp, err := w.base.RoundTrip(req)
	if post {
		if err == nil {
			rec.status = resp.StatusCode
			rec.session = resp.Header.Get("Mcp-Session-Id")
		}
		w.mu.Lock()
		w.rpcs = append(w.rpcs, rec)
		w.mu.Unlock()
	}
	return resp, err
}

// of returns the recorded messages of method, in send order.
func (w *wireLog) of(method string) []wireRPC {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []wireRPC
	for _, r := range w.rpcs {
		if r.method == method {
			out = append(out, r)
		}
	}
	return out
}

// semconvPool is a pool with SemconvCallSpans whose requests go through a
// wireLog, its spans into a recorder.
type semconvPool struct {
	pool *pool.Pool
	rec  *telemetry.Recorder
	wire *wireLog
}

func newSemconvPool(t *testing.T, o pool.Options) *semconvPool {
	t.Helper()
	sp := &semconvPool{rec: telemetry.NewRecorder(), wire: &wireLog{base: http.DefaultTransport.(*http.Transport).Clone()}}
	t.Cleanup(sp.wire.base.(*http.Transport).CloseIdleConnections)
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp.rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	o.SemconvCallSpans = true
	o.TracerProvider = tp
	o.HTTPTransport = sp.wire
	o.SweepInterval = -1
	p, err := pool.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	sp.pool = p
	return sp
}

// named returns the recorded spans named name, in end order.
func (sp *semconvPool) named(name string) []sdktrace.ReadOnlySpan { return recordedNamed(sp.rec, name) }

// attrMap is a span's attributes as text, for exact comparison.
func attrMap(s sdktrace.ReadOnlySpan) map[string]string {
	m := map[string]string{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// diffAttrs describes how got differs from want, "" when equal.
func diffAttrs(got, want map[string]string) string {
	var d []string
	for k, w := range want {
		if g, ok := got[k]; !ok {
			d = append(d, fmt.Sprintf("missing %s=%q", k, w))
		} else if g != w {
			d = append(d, fmt.Sprintf("%s=%q, want %q", k, g, w))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("unexpected %s=%q", k, g))
		}
	}
	sort.Strings(d)
	return strings.Join(d, "; ")
}

// serverAttrs are server.address, server.port and the transport the
// conventions ask for on streamable HTTP, for the server at endpoint.
func serverAttrs(t *testing.T, endpoint string) map[string]string {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		spans.AttrServerAddress:       u.Hostname(),
		spans.AttrServerPort:          u.Port(),
		spans.AttrNetworkTransport:    "tcp",
		spans.AttrNetworkProtocolName: "http",
	}
}

func with(base map[string]string, kv ...string) map[string]string {
	m := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// semconvHandshakeWant is one conventions span a handshake must hold: its
// method, the revision it asks for and, on a refusal, error.type.
type semconvHandshakeWant struct {
	method, version, errType string
}

var semconvSubjects = []struct {
	name      string
	start     func(t *testing.T) matrixServer
	revision  string
	sessions  bool
	handshake []semconvHandshakeWant
}{
	{
		// The Go SDK's 2025-11-25 server answers the probe 200 with older
		// revisions only; the client falls back to initialize.
		name: "go-fixture/negotiated-2025-11-25", start: startGoFixture, revision: spans.ProtocolLegacy, sessions: true,
		handshake: []semconvHandshakeWant{{spans.MethodServerDiscover, spans.ProtocolModern, ""}, {spans.MethodInitialize, spans.ProtocolLegacy, ""}},
	},
	{
		name: "go-fixture/modern-only-2026-07-28", start: startGoFixtureWith(fixtures.Options{ModernOnly: true}), revision: spans.ProtocolModern,
		handshake: []semconvHandshakeWant{{spans.MethodServerDiscover, spans.ProtocolModern, ""}},
	},
	{
		// The TypeScript SDK 1.x refuses the probe with HTTP 400.
		name: "ts-sdk-1/negotiated-2025-11-25", start: startPeer(peers.TSSDK1), revision: spans.ProtocolLegacy, sessions: true,
		handshake: []semconvHandshakeWant{{spans.MethodServerDiscover, spans.ProtocolModern, "400"}, {spans.MethodInitialize, spans.ProtocolLegacy, ""}},
	},
	{
		name: "ts-sdk-v2/negotiated-2026-07-28", start: startPeer(peers.TSSDKv2), revision: spans.ProtocolModern,
		handshake: []semconvHandshakeWant{{spans.MethodServerDiscover, spans.ProtocolModern, ""}},
	},
}

// TestSemconvSpansFollowTheMCPConventionsOnEveryServer pins, on the Go
// fixture and on real TypeScript SDK servers, at 2025-11-25 (sessions) and
// 2026-07-28 (none), every name, kind and attribute of the spans the pool
// writes with SemconvCallSpans: two calls on one pooled session are two
// "tools/call <tool>" CLIENT spans with exactly the conventions'
// attributes (plus the pool's cache key and pool id), their jsonrpc.request.id the ids
// that went out and mcp.session.id the one the server issued (absent at
// 2026-07-28); the one handshake is the pool's handshake span holding one
// CLIENT span per initialize or server/discover request, in order, with
// the refusal of a probe as error.type; the invoke and acquire spans are
// the pool's own, one miss then one hit.
func TestSemconvSpansFollowTheMCPConventionsOnEveryServer(t *testing.T) {
	for _, sub := range semconvSubjects {
		t.Run(sub.name, func(t *testing.T) {
			srv := sub.start(t)
			sp := newSemconvPool(t, pool.Options{})
			tg := mustTarget(t, srv.URL())
			echo := srv.Tools().echo
			for range 2 {
				if _, err := sp.pool.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: echo.name, Arguments: echo.args}); err != nil {
					t.Fatal(err)
				}
			}
			if n := len(sp.named(spans.SpanCallTool)); n != 0 {
				t.Errorf("%d spans named %s, want none", n, spans.SpanCallTool)
			}
			net := serverAttrs(t, srv.URL())
			session := ""
			if inits := sp.wire.of(spans.MethodInitialize); sub.sessions {
				if len(inits) != 1 || inits[0].session == "" {
					t.Fatalf("initialize on the wire: %+v, want one that issued a session", inits)
				}
				session = inits[0].session
			}

			calls := sp.named(spans.SemconvSpanName(spans.MethodToolsCall, echo.name))
			sent := sp.wire.of(spans.MethodToolsCall)
			if len(calls) != 2 || len(sent) != 2 {
				t.Fatalf("%d call spans and %d tools/call on the wire, want 2 each", len(calls), len(sent))
			}
			for i, c := range calls {
				want := with(net,
					spans.AttrMethodName, spans.MethodToolsCall,
					spans.AttrGenAIToolName, echo.name,
					spans.AttrGenAIOperationName, "execute_tool",
					spans.AttrJSONRPCRequestID, sent[i].id,
					spans.AttrProtocolVersion, sub.revision,
					spans.AttrCacheKey, tg.Key(),
					spans.AttrPoolID, sp.pool.ID(),
				)
				if session != "" {
					want[spans.AttrSessionID] = session
				}
				if d := diffAttrs(attrMap(c), want); d != "" {
					t.Errorf("call %d: %s", i, d)
				}
				if c.SpanKind() != trace.SpanKindClient || c.Status().Code != codes.Unset {
					t.Errorf("call %d: kind %v status %v, want client and unset", i, c.SpanKind(), c.Status())
				}
			}
			if sent[0].id == "" || sent[0].id == sent[1].id {
				t.Errorf("ids on the wire %q and %q: want two distinct ids", sent[0].id, sent[1].id)
			}

			checkSemconvHandshake(t, sp, sub.handshake, net, session)
			acq := sp.named(spans.SpanAcquire)
			if len(acq) != 2 || attr(acq[0], spans.AttrCacheHit) != "false" || attr(acq[1], spans.AttrCacheHit) != "true" {
				t.Errorf("acquire spans %d, want a miss then a hit (the pool's own spans stay)", len(acq))
			}
			if n := len(sp.named(spans.SpanInvoke)); n != 2 {
				t.Errorf("%d invoke spans, want 2", n)
			}
		})
	}
}

// checkSemconvHandshake holds the conventions spans under the one handshake
// span against want and the wire.
func checkSemconvHandshake(t *testing.T, sp *semconvPool, want []semconvHandshakeWant, net map[string]string, session string) {
	t.Helper()
	hs := sp.named(spans.SpanHandshake)
	if len(hs) != 1 {
		t.Fatalf("%d handshake spans, want 1", len(hs))
	}
	var got []sdktrace.ReadOnlySpan
	for _, s := range sp.rec.Spans() {
		if n := s.Name(); n == spans.MethodInitialize || n == spans.MethodServerDiscover {
			got = append(got, s)
		}
	}
	sort.SliceStable(got, func(i, j int) bool { return got[i].StartTime().Before(got[j].StartTime()) })
	if len(got) != len(want) {
		t.Fatalf("handshake request spans %v, want %v", spanNames(got), want)
	}
	seen := map[string]int{}
	for i, w := range want {
		s := got[i]
		onWire := sp.wire.of(w.method)
		k := seen[w.method]
		seen[w.method]++
		if k >= len(onWire) {
			t.Fatalf("span %d %s: only %d on the wire", i, w.method, len(onWire))
		}
		wantAttrs := with(net, spans.AttrMethodName, w.method, spans.AttrJSONRPCRequestID, onWire[k].id, spans.AttrProtocolVersion, w.version)
		wantStatus := codes.Unset
		if w.errType != "" {
			wantAttrs[spans.AttrErrorType] = w.errType
			wantStatus = codes.Error
		} else if w.method == spans.MethodInitialize && session != "" {
			wantAttrs[spans.AttrSessionID] = session
		}
		if s.Name() != w.method {
			t.Errorf("handshake span %d named %q, want %q", i, s.Name(), w.method)
		}
		if d := diffAttrs(attrMap(s), wantAttrs); d != "" {
			t.Errorf("handshake span %d (%s): %s", i, w.method, d)
		}
		if s.SpanKind() != trace.SpanKindClient || s.Status().Code != wantStatus {
			t.Errorf("handshake span %d: kind %v status %v, want client and %v", i, s.SpanKind(), s.Status(), wantStatus)
		}
		if s.Parent().SpanID() != hs[0].SpanContext().SpanID() {
			t.Errorf("handshake span %d is not a child of the pool's handshake span", i)
		}
	}
}

func spanNames(ss []sdktrace.ReadOnlySpan) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Name()
	}
	return out
}

// TestSemconvCallSpansRecordFailuresAsTheConventionsAsk pins error.type
// and the status on a conventions call span, one row per way a call fails
// on a real fixture: a tool result with isError is "tool_error" (a clean
// release, the session stays); a JSON-RPC error answer is its code, also in
// rpc.response.status_code, with the error's message as the status; a
// connection reset is the pool's "transport"; a forgotten session is
// "session_expired" on the first attempt's span and the redial's span
// succeeds on a new session; an initialize refused with 503 fails its
// handshake span with error.type "503". The first three again at
// 2026-07-28, on a sessionless server's shared client.
func TestSemconvCallSpansRecordFailuresAsTheConventionsAsk(t *testing.T) {
	unknown := "no_such_tool"
	for _, tc := range []struct {
		name   string
		inject func(srv *fixtures.Server)
		tool   string
		// errTypes: error.type of each call span of the call, in order
		// ("" for a success); rpcCode: rpc.response.status_code of the
		// last; status: the last span's status description ("" none).
		errTypes        []string
		rpcCode, status string
		handshakeErr    string // error.type of the initialize span
		callErr         bool
		modern          bool // at 2026-07-28 on a modern-only server: no session
	}{
		{name: "isError_is_tool_error", tool: fixtures.ToolFail, errTypes: []string{spans.ErrTypeToolError}, status: "tool result has isError set"},
		{name: "a_JSON-RPC_error_is_its_code", tool: unknown, errTypes: []string{"-32602"}, rpcCode: "-32602", status: `unknown tool "` + unknown + `"`, callErr: true},
		{name: "a_connection_reset_is_transport", tool: fixtures.ToolEcho, inject: func(srv *fixtures.Server) { srv.ResetConnectionOnNextCall(fixtures.ResetBeforeTool) },
			errTypes: []string{spans.ErrTypeTransport}, callErr: true},
		{name: "a_forgotten_session_is_session_expired_then_the_redial_succeeds", tool: fixtures.ToolEcho, inject: func(srv *fixtures.Server) { srv.ForgetSessions() },
			errTypes: []string{spans.ErrTypeSessionExpired, ""}},
		{name: "a_refused_initialize_fails_its_span", tool: fixtures.ToolEcho, inject: func(srv *fixtures.Server) {
			srv.ForgetSessions()
			srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, Method: spans.MethodInitialize})
		}, errTypes: []string{spans.ErrTypeSessionExpired}, handshakeErr: "503", callErr: true},
		// The same failures on a sessionless server's shared client, whose
		// calls keep their faults apart in their own context.
		{name: "isError_is_tool_error_at_2026-07-28", modern: true, tool: fixtures.ToolFail, errTypes: []string{spans.ErrTypeToolError}, status: "tool result has isError set"},
		{name: "a_JSON-RPC_error_is_its_code_at_2026-07-28", modern: true, tool: unknown, errTypes: []string{"-32602"}, rpcCode: "-32602", status: `unknown tool "` + unknown + `"`, callErr: true},
		{name: "a_connection_reset_is_transport_at_2026-07-28", modern: true, tool: fixtures.ToolEcho, inject: func(srv *fixtures.Server) { srv.ResetConnectionOnNextCall(fixtures.ResetBeforeTool) },
			errTypes: []string{spans.ErrTypeTransport}, callErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			revision := spans.ProtocolLegacy
			if tc.modern {
				revision = spans.ProtocolModern
			}
			srv, err := fixtures.Start(fixtures.Options{ModernOnly: tc.modern})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			sp := newSemconvPool(t, pool.Options{ProtocolVersion: revision})
			tg := mustTarget(t, srv.URL())
			callOn(t, sp.pool, tg, fixtures.ToolEcho, nil) // a pooled session first
			sp.rec.Reset()
			if tc.inject != nil {
				tc.inject(srv)
			}
			_, err = sp.pool.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: tc.tool})
			if (err != nil) != tc.callErr {
				t.Fatalf("call: %v, want an error: %v", err, tc.callErr)
			}
			calls := sp.named(spans.SemconvSpanName(spans.MethodToolsCall, tc.tool))
			if len(calls) != len(tc.errTypes) {
				t.Fatalf("%d call spans, want %d", len(calls), len(tc.errTypes))
			}
			for i, want := range tc.errTypes {
				c := calls[i]
				wantStatus := codes.Unset
				if want != "" {
					wantStatus = codes.Error
				}
				if got := attr(c, spans.AttrErrorType); got != want || c.Status().Code != wantStatus {
					t.Errorf("call span %d: error.type %q status %v, want %q and %v", i, got, c.Status(), want, wantStatus)
				}
				// The request went out, failed or not: its id, revision
				// and (with sessions) session are on the span.
				if attr(c, spans.AttrJSONRPCRequestID) == "" || attr(c, spans.AttrProtocolVersion) != revision || hasAttr(c, spans.AttrSessionID) == tc.modern {
					t.Errorf("call span %d: %v, want a jsonrpc.request.id, mcp.protocol.version %s and a session id only with sessions", i, attrMap(c), revision)
				}
			}
			last := calls[len(calls)-1]
			if got := attr(last, spans.AttrRPCResponseStatusCode); got != tc.rpcCode {
				t.Errorf("rpc.response.status_code = %q, want %q", got, tc.rpcCode)
			}
			if tc.status != "" && last.Status().Description != tc.status {
				t.Errorf("status description %q, want %q", last.Status().Description, tc.status)
			}
			if tc.name == "a_forgotten_session_is_session_expired_then_the_redial_succeeds" {
				if a, b := attr(calls[0], spans.AttrSessionID), attr(calls[1], spans.AttrSessionID); a == "" || b == "" || a == b {
					t.Errorf("session ids %q then %q: want the redial on a new session", a, b)
				}
			}
			if tc.handshakeErr != "" {
				inits := sp.named(spans.MethodInitialize)
				if len(inits) != 1 || attr(inits[0], spans.AttrErrorType) != tc.handshakeErr || inits[0].Status().Code != codes.Error || hasAttr(inits[0], spans.AttrSessionID) {
					t.Errorf("initialize spans %d (%v), want one with error.type %s, status error, no session", len(inits), attrsOf(inits), tc.handshakeErr)
				}
			}
		})
	}
}

func attrsOf(ss []sdktrace.ReadOnlySpan) []map[string]string {
	out := make([]map[string]string, len(ss))
	for i, s := range ss {
		out[i] = attrMap(s)
	}
	return out
}

// TestRPCHeadReadsTheIDFromTheBodyHead pins what the call span's
// jsonrpc.request.id is read from: the id at the head of the body the SDK
// writes, a number as written or a string as is (escapes decoded, any
// whitespace between tokens), and nothing from a body whose head holds no
// id before its params (an "id" inside the params, the arguments' own, is
// not the request's), whose id is cut by the head's end or is no number or
// string, nor from one that is no JSON.
func TestRPCHeadReadsTheIDFromTheBodyHead(t *testing.T) {
	for _, tc := range []struct{ body, method, id string }{
		{`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`, "tools/call", "7"},
		{`{"jsonrpc":"2.0","id":"req-7","method":"tools/call","params":{}}`, "tools/call", "req-7"},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`, "notifications/cancelled", ""},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"},"id":9}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"id":5}}}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`, "tools/call", ""},
		{`{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call"}`, "tools/call", "12345678901234567890"},
		{`{"jsonrpc":"2.0","id":"a\"b\u00e9","method":"tools\/call","params":{}}`, "tools/call", "a\"b\u00e9"},
		{` { "jsonrpc" : "2.0" ,` + "\n\t" + `"id" : -3 , "method" : "tools/call" } `, "tools/call", "-3"},
		{`{"jsonrpc":"2.0","id":"` + strings.Repeat("x", 300) + `","method":"tools/call"}`, "", ""},
		{`{"jsonrpc":"2.0","method":"tools/call","id":8}`, "tools/call", "8"},
		{`{"jsonrpc":"2.0","method":"tools/call","id":7`, "tools/call", ""},
		{`{"jsonrpc":"2.0","id":true,"method":"tools/call"}`, "tools/call", ""},
		{`not json`, "", ""},
		{``, "", ""},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader([]byte(tc.body)))
		if err != nil {
			t.Fatal(err)
		}
		method, id := pool.RPCHead(req)
		if method != tc.method || id != tc.id {
			t.Errorf("RPCHead(%s) = %q, %q; want %q, %q", tc.body, method, id, tc.method, tc.id)
		}
	}
	// A big body: the id is read from its head alone.
	big := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"arguments":{"blob":"` + strings.Repeat("x", 1<<20) + `"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", strings.NewReader(big))
	if _, id := pool.RPCHead(req); id != "42" {
		t.Errorf("id of a 1 MiB body = %q, want 42", id)
	}
}

// TestSemconvCallSpansRecordFailuresOnTypeScriptPeers holds the failure
// rows against real TypeScript SDK servers, with sessions (1.x, 2025-11-25)
// and without (v2, 2026-07-28): the peer's failing tool answers isError,
// which is "tool_error"; a call whose answer the peer loses (it answers 500
// once, its hook) is the pool's "http_status"; both spans carry the
// request's id, the revision, and a session id only where there are
// sessions.
func TestSemconvCallSpansRecordFailuresOnTypeScriptPeers(t *testing.T) {
	for _, sub := range semconvSubjects {
		if !strings.HasPrefix(sub.name, "ts-") {
			continue
		}
		t.Run(sub.name, func(t *testing.T) {
			srv := sub.start(t)
			sp := newSemconvPool(t, pool.Options{})
			tg := mustTarget(t, srv.URL())
			tools := srv.Tools()
			callOn(t, sp.pool, tg, tools.echo.name, tools.echo.args)
			for _, row := range []struct {
				name    string
				call    call
				inject  func()
				errType string
				callErr bool
			}{
				{"isError_is_tool_error", tools.fail, nil, spans.ErrTypeToolError, false},
				{"a_lost_answer_is_http_status", tools.echo, func() { srv.LoseAnswer(t) }, spans.ErrTypeHTTPStatus, true},
			} {
				sp.rec.Reset()
				if row.inject != nil {
					row.inject()
				}
				_, err := sp.pool.CallTool(t.Context(), tg, &mcp.CallToolParams{Name: row.call.name, Arguments: row.call.args})
				if (err != nil) != row.callErr {
					t.Fatalf("%s: call error %v, want one: %v", row.name, err, row.callErr)
				}
				calls := sp.named(spans.SemconvSpanName(spans.MethodToolsCall, row.call.name))
				if len(calls) != 1 {
					t.Fatalf("%s: %d call spans, want 1", row.name, len(calls))
				}
				c := calls[0]
				if got := attr(c, spans.AttrErrorType); got != row.errType || c.Status().Code != codes.Error {
					t.Errorf("%s: error.type %q status %v, want %q and error", row.name, got, c.Status(), row.errType)
				}
				if attr(c, spans.AttrJSONRPCRequestID) == "" || attr(c, spans.AttrProtocolVersion) != sub.revision || hasAttr(c, spans.AttrSessionID) != sub.sessions {
					t.Errorf("%s: %v, want a request id, revision %s, a session id only with sessions", row.name, attrMap(c), sub.revision)
				}
			}
		})
	}
}

// TestRPCHeadReadsOnlyWellFormedHeads pins the head scanner's bounds and
// punctuation: a body cut after any byte yields at most the fields it holds
// whole, never a panic; a head whose opening brace, colon or comma is some
// other byte yields nothing read after that byte (a head that is not the
// JSON the SDK writes is not guessed at); the params, by name or by
// position, end the head.
func TestRPCHeadReadsOnlyWellFormedHeads(t *testing.T) {
	const body = ` { "jsonrpc" : "2.0" , "id" : 7 , "method" : "tools/call" , "params" : {} } `
	for n := 0; n <= len(body); n++ {
		method, id := pool.RPCHead(postBody(t, body[:n]))
		if (method != "" && method != spans.MethodToolsCall) || (id != "" && id != "7") || (n == len(body) && (method == "" || id == "")) {
			t.Errorf("RPCHead(%q) = %q, %q", body[:n], method, id)
		}
	}
	for _, tc := range []struct{ name, body, method, id string }{
		{"no opening brace", `x"jsonrpc":"2.0","id":7,"method":"tools/call"}`, "", ""},
		{"no colon after a key", `{"jsonrpc":"2.0","id"=7,"method":"tools/call"}`, "", ""},
		{"a space for the colon", `{"method" "tools/call","id":7}`, "", ""},
		{"no comma after a value", `{"method":"tools/call"."id":7}`, "tools/call", ""},
		{"params by position end the head", `{"jsonrpc":"2.0","method":"tools/call","params":[0],"id":4}`, "tools/call", ""},
		{"params by name end the head", `{"jsonrpc":"2.0","method":"tools/call","params":{},"id":4}`, "tools/call", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if method, id := pool.RPCHead(postBody(t, tc.body)); method != tc.method || id != tc.id {
				t.Errorf("RPCHead(%s) = %q, %q; want %q, %q", tc.body, method, id, tc.method, tc.id)
			}
		})
	}
}

// postBody is a POST of body to a 127.0.0.1 endpoint, as the SDK sends it.
func postBody(t *testing.T, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	return req
}
