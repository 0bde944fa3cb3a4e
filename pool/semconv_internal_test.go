package pool

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
)

// TestSemconvCallStatusNeverCarriesASecret pins that the conventions'
// status description of a JSON-RPC error answer, the server's own message,
// goes through the target's scrubber like every error text: a server that
// echoes the credential it was sent back in its message must not put it in
// a span. (The secrets suite drives every outcome through real servers,
// none of which echoes a credential in a JSON-RPC error.)
func TestSemconvCallStatusNeverCarriesASecret(t *testing.T) {
	const secret = "s3cr3t-token-value"
	rec := telemetry.NewRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	_, span := tp.Tracer("t").Start(context.Background(), "tools/call x")
	scrub := scrubber{r: &redactor{secrets: []string{secret}}}
	je := &jsonrpc.Error{Code: -32602, Message: "bad token " + secret + " for tool x"}
	err := scrub.error(fmt.Errorf("call tool %q: %w", "x", je))
	endSemconvCall(context.Background(), span, scrub, nil, err)
	span.End()
	s := rec.Spans()[0]
	if d := s.Status().Description; strings.Contains(d, secret) || !strings.Contains(d, redacted) {
		t.Errorf("status description %q: want the secret replaced by %s", d, redacted)
	}
	for _, kv := range s.Attributes() {
		if strings.Contains(kv.Value.String(), secret) {
			t.Errorf("attribute %s = %q carries the secret", kv.Key, kv.Value.String())
		}
	}
	var code string
	for _, kv := range s.Attributes() {
		if string(kv.Key) == spans.AttrErrorType {
			code = kv.Value.String()
		}
	}
	if code != "-32602" {
		t.Errorf("error.type = %q, want -32602", code)
	}
}
