package pool

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/spans"
)

// This file holds what Options.SemconvCallSpans adds to the pool's spans:
// the OpenTelemetry MCP semantic conventions (semantic-conventions-genai
// v0.1.0, docs/gen-ai/mcp.md, the "MCP client" span), on the call spans and
// as an "initialize" or "server/discover" client span per handshake request.
// The invoke, acquire and handshake spans are the pool's own either way.

// semconvNetAttrs are the conventions' transport attributes of streamable
// HTTP ("Recording MCP transport": network.transport tcp,
// network.protocol.name http).
var semconvNetAttrs = []attribute.KeyValue{
	attribute.String(spans.AttrNetworkTransport, spans.NetworkTransportTCP),
	attribute.String(spans.AttrNetworkProtocolName, spans.NetworkProtocolHTTP),
}

// rpcID is where the watcher leaves the JSON-RPC id of a call's tools/call
// request for the call span (jsonrpc.request.id): the SDK assigns ids inside
// its connection and exposes them nowhere else, so the id is read from the
// first bytes of the request body it sends. Only calls traced in the
// conventions' form carry one (in their context), so the default costs
// nothing.
type rpcID struct{ v atomic.Pointer[string] }

// rpcIDKey is the context key of a call's *rpcID.
type rpcIDKey struct{}

// observe records the JSON-RPC id of req when it is the call's tools/call
// request and none was recorded yet (an SSE resume is a GET without a body;
// a cancellation's notifications/cancelled has no id).
func (r *rpcID) observe(req *http.Request) {
	if req.Method != http.MethodPost || r.v.Load() != nil {
		return
	}
	method, id := rpcHead(req)
	if method == spans.MethodToolsCall && id != "" {
		r.v.CompareAndSwap(nil, &id)
	}
}

// maxRPCHead bounds what rpcHead reads of a request body: the SDK writes
// "jsonrpc", "id" and "method" first (jsonrpc2's wireCombined), so the id
// is in the first few dozen bytes whatever the arguments weigh.
const maxRPCHead = 256

// rpcHead returns the method and id of the JSON-RPC request in req's body,
// read from at most maxRPCHead bytes and only up to the first object or
// array value (the params: an "id" inside them is the arguments', not the
// request's). A field it cannot see, or a head that is not the JSON it
// expects, yields "". It scans the head itself rather than through
// encoding/json's Decoder, whose tokens cost some fifty allocations a call
// on a path every traced call takes; anything but the plain shape the SDK
// writes (a string with an escape, say) goes back to encoding/json.
func rpcHead(req *http.Request) (method, id string) {
	if req.GetBody == nil {
		return "", ""
	}
	body, err := req.GetBody()
	if err != nil {
		return "", ""
	}
	defer body.Close()
	var head [maxRPCHead]byte
	n, _ := io.ReadFull(body, head[:])
	s := headScanner{b: head[:n]}
	return s.methodAndID()
}

// methodAndID reads the head's fields up to the first object or array
// value, or until it has seen both the method and the id. A value it cannot
// read whole ends the scan with what it has.
func (s *headScanner) methodAndID() (method, id string) {
	if !s.byte('{') {
		return "", ""
	}
	for method == "" || id == "" {
		key, ok := s.str()
		if !ok || !s.byte(':') {
			break
		}
		val, ok := s.fieldValue()
		if !ok {
			return method, id
		}
		switch string(key) { // no copy: compared, not kept
		case "method":
			method = string(val)
			if method == spans.MethodToolsCall {
				method = spans.MethodToolsCall // the constant, not the copy
			}
		case "id":
			id = string(val)
		}
		if !s.byte(',') {
			break
		}
	}
	return method, id
}

// fieldValue reads the value after a field's colon: a string's bytes, a
// number as written, or nil for null, true and false (no id). It reports
// false at an object or array (the params, whose "id" is the arguments')
// and at a value the head does not hold whole, where the scan stops.
func (s *headScanner) fieldValue() ([]byte, bool) {
	s.ws()
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		return nil, false // the params
	default:
		raw := s.scalar()
		if len(raw) == 0 {
			return nil, false
		}
		if c == '-' || (c >= '0' && c <= '9') {
			return raw, true // a number id, as written
		}
		return nil, true // null, true, false: no id
	}
}

// headScanner reads the head of a JSON object: strings, scalars and
// punctuation, never a nested value. Every step is bounded by the head.
type headScanner struct {
	b []byte
	i int
}

// ws skips JSON whitespace.
func (s *headScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// byte skips whitespace and c, reporting whether c was there.
func (s *headScanner) byte(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str reads a JSON string, its bytes in the head's buffer. One with an
// escape is decoded by encoding/json; one cut by the end of the head is not
// a string.
func (s *headScanner) str() ([]byte, bool) {
	if !s.byte('"') {
		return nil, false
	}
	start, escaped := s.i, false
	for ; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			escaped = true
			s.i++ // the escaped byte cannot end the string
		case '"':
			raw := s.b[start:s.i]
			s.i++
			if !escaped {
				return raw, true
			}
			var v string
			if json.Unmarshal(s.b[start-1:s.i], &v) != nil {
				return nil, false
			}
			return []byte(v), true
		}
	}
	return nil, false
}

// scalar reads a number or a literal (true, false, null) as written; empty
// when the head ends inside it.
func (s *headScanner) scalar() []byte {
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if c == ',' || c == '}' || c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return s.b[start:s.i]
		}
		s.i++
	}
	return nil
}

// jsonrpcIDText is the conventions' "string representation of the id":
// a number as written, a string as is; null (discouraged) or anything else
// is no id.
func jsonrpcIDText(v any) string {
	switch v := v.(type) {
	case json.Number:
		return v.String()
	case string:
		return v
	}
	return ""
}

// withRPCID returns ctx carrying a fresh *rpcID when call spans follow the
// conventions, else ctx unchanged.
func (in *instruments) withRPCID(ctx context.Context) context.Context {
	if !in.semconv || in.tracer == nil {
		return ctx
	}
	return context.WithValue(ctx, rpcIDKey{}, &rpcID{})
}

// rpcIDFrom returns the *rpcID a call put in ctx, nil when none.
func rpcIDFrom(ctx context.Context) *rpcID {
	r, _ := ctx.Value(rpcIDKey{}).(*rpcID)
	return r
}

// endSemconvCall records on a conventions' call span what is known only
// once the call is over: jsonrpc.request.id, and on failure error.type,
// rpc.response.status_code and the status. A JSON-RPC error answer has
// error.type set to its code ("-32602"), whatever HTTP status carried it
// (a 2026-07-28 server answers an unknown tool with 400 and -32602), and
// the status description to its message, as the conventions ask (with the target's secrets removed, as
// from every error text: the message is the server's, and a server may
// echo a credential back); isError is "tool_error"; any other
// failure keeps the pool's error type (transport, session_expired,
// bad_session, http_status with no JSON-RPC error in the body, canceled),
// a low-cardinality class as the error.type guidance asks: a forgotten
// session stays session_expired even when its 404 carries a JSON-RPC error,
// since that is what the pool acted on (the redial).
func endSemconvCall(ctx context.Context, span trace.Span, scrub scrubber, res *mcp.CallToolResult, err error) {
	if r := rpcIDFrom(ctx); r != nil {
		if id := r.v.Load(); id != nil {
			span.SetAttributes(attribute.String(spans.AttrJSONRPCRequestID, *id))
		}
	}
	var je *jsonrpc.Error
	switch class := errorType(err); {
	case (class == spans.ErrTypeProtocol || class == spans.ErrTypeHTTPStatus) && errors.As(err, &je) && je.Code != codeTransportFailure:
		code := strconv.FormatInt(je.Code, 10)
		span.SetAttributes(attribute.String(spans.AttrErrorType, code), attribute.String(spans.AttrRPCResponseStatusCode, code))
		span.SetStatus(codes.Error, scrub.text(je.Message))
	case err != nil:
		span.SetAttributes(attribute.String(spans.AttrErrorType, errorType(err)))
		span.SetStatus(codes.Error, err.Error())
	case res != nil && res.IsError:
		span.SetAttributes(attribute.String(spans.AttrErrorType, spans.ErrTypeToolError))
		span.SetStatus(codes.Error, "tool result has isError set")
	}
}

// semconvHandshake writes the conventions' client span of each initialize
// and server/discover request a handshake sends, as children of the pool's
// handshake span (whose context the SDK's requests carry). The watcher of a
// handshake holds one when call spans follow the conventions; nil otherwise.
type semconvHandshake struct {
	tracer trace.Tracer
	target *Target
}

// handshakeRPC is what a handshake request's body says.
type handshakeRPC struct {
	ID     any    `json:"id"`
	Method string `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"params"`
}

// start starts the span of req when its method is one the conventions
// name a handshake by (initialize, server/discover); nil for any other
// request (notifications/initialized, the DELETE of a half-made session).
func (s *semconvHandshake) start(req *http.Request, method string) trace.Span {
	if s == nil || (method != spans.MethodInitialize && method != spans.MethodServerDiscover) {
		return nil
	}
	var rpc handshakeRPC
	if req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			dec := json.NewDecoder(io.LimitReader(body, 1<<20))
			dec.UseNumber()
			_ = dec.Decode(&rpc)
			body.Close()
		}
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs,
		attribute.String(spans.AttrMethodName, method),
		attribute.String(spans.AttrServerAddress, s.target.address),
		attribute.Int(spans.AttrServerPort, s.target.port),
	)
	attrs = append(attrs, semconvNetAttrs...)
	if id := jsonrpcIDText(rpc.ID); id != "" {
		attrs = append(attrs, attribute.String(spans.AttrJSONRPCRequestID, id))
	}
	// The revision this request asks for: the header the SDK sets from the
	// request's _meta (server/discover), else initialize's params.
	version := req.Header.Get("Mcp-Protocol-Version")
	if version == "" {
		version = rpc.Params.ProtocolVersion
	}
	if version != "" {
		attrs = append(attrs, attribute.String(spans.AttrProtocolVersion, version))
	}
	_, span := s.tracer.Start(req.Context(), spans.SemconvSpanName(method, ""), trace.WithSpanKind(trace.SpanKindClient))
	span.SetAttributes(attrs...)
	return span
}

// end ends a span from start with the request's outcome: the session id the
// server issued (an initialize answered at 2025-11-25; none at 2026-07-28),
// or error.type: the HTTP status as text for a refusal ("400": the watcher
// reads no response body, so a JSON-RPC code inside it is not known), the
// pool's class for a failure below HTTP (transport, canceled).
func (s *semconvHandshake) end(span trace.Span, req *http.Request, resp *http.Response, err error) {
	switch {
	case err != nil:
		class := errorType(err) // transport, or the bound the server broke
		if req.Context().Err() != nil {
			class = spans.ErrTypeCanceled
		}
		span.SetAttributes(attribute.String(spans.AttrErrorType, class))
		span.SetStatus(codes.Error, class)
	case resp.StatusCode >= 400:
		status := strconv.Itoa(resp.StatusCode)
		span.SetAttributes(attribute.String(spans.AttrErrorType, status))
		span.SetStatus(codes.Error, "HTTP "+status)
	default:
		if id := resp.Header.Get(sessionHeader); id != "" {
			span.SetAttributes(attribute.String(spans.AttrSessionID, id))
		}
	}
	span.End()
}
