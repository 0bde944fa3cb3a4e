package pool_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// tornDown is a transport that, like some proxies' and HTTP stacks', does
// not say why a request ended: a request whose context is done fails with
// its own error, not the context's.
type tornDown struct{ base http.RoundTripper }

func (t tornDown) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil && req.Context().Err() != nil {
		return nil, errors.New("connection torn down")
	}
	return resp, err
}

// TestASemconvHandshakeSpanOfACancelledCallerIsCanceled pins the error.type
// of a handshake request the caller cancelled in flight: canceled,
// whatever error the transport underneath returned for it.
func TestASemconvHandshakeSpanOfACancelledCallerIsCanceled(t *testing.T) {
	srv, err := fixtures.Start(fixtures.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	sp := newSemconvPool(t, pool.Options{ProtocolVersion: spans.ProtocolLegacy})
	base := sp.wire.base
	sp.wire.base = tornDown{base: base}
	srv.SetMethodLatency(spans.MethodInitialize, time.Hour)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := len(srv.Requests())
	go func() {
		defer cancel()
		_ = srv.WaitRequests(ctx, seen+1) // the held initialize reached the server
	}()
	if _, err := sp.pool.CallTool(ctx, mustTarget(t, srv.URL()), &mcp.CallToolParams{Name: fixtures.ToolEcho}); err == nil {
		t.Fatal("a call whose handshake the caller cancelled succeeded")
	}
	inits := sp.named(spans.MethodInitialize)
	if len(inits) != 1 || attr(inits[0], spans.AttrErrorType) != spans.ErrTypeCanceled || inits[0].Status().Code != codes.Error {
		t.Errorf("initialize spans %v, want one with error.type canceled", attrsOf(inits))
	}
}
