package pool_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// The secrets below must never leave the pool except on the wire to the
// server they belong to.
const (
	bearerSecret = "bearer-s3cr3t-0001"
	headerSecret = "apikey-s3cr3t-0002"
	querySecret  = "query-s3cr3t-0003"
)

func TestSecretsNeverAppearInSpansMetricsLogsErrorsOrKeys(t *testing.T) {
	h := newHarness(t, harnessOpts{target: pool.TargetConfig{
		BearerToken: bearerSecret,
		Header:      http.Header{"X-Api-Key": {headerSecret}},
	}})
	withQuery, err := pool.NewTarget(pool.TargetConfig{
		Endpoint:    h.srv.URL() + "?api_key=" + querySecret + "&region=eu",
		BearerToken: bearerSecret,
		Header:      http.Header{"X-Api-Key": {headerSecret}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A port nobody listens on: the dial error quotes the URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := ln.Addr().String()
	ln.Close()
	dead, err := pool.NewTarget(pool.TargetConfig{
		Endpoint:    "http://" + deadAddr + "/mcp?token=" + querySecret,
		BearerToken: bearerSecret,
	})
	if err != nil {
		t.Fatal(err)
	}

	var outputs []string
	ctx := context.Background()
	for _, tg := range []*pool.Target{h.target, withQuery} {
		if _, err := h.pool.CallTool(ctx, tg, &mcp.CallToolParams{Name: "select_workspace"}); err != nil {
			t.Fatalf("call: %v", err)
		}
		outputs = append(outputs, tg.Key(), tg.Endpoint(), tg.String(), fmt.Sprint(tg))
	}
	h.srv.RejectNext(fixtures.Reject{Status: 500})
	if _, err := h.pool.CallTool(ctx, withQuery, &mcp.CallToolParams{Name: "echo"}); err == nil {
		t.Fatal("forced 500 did not fail")
	} else {
		outputs = append(outputs, err.Error())
	}
	if _, err := h.pool.CallTool(ctx, dead, &mcp.CallToolParams{Name: "echo"}); err == nil {
		t.Fatal("call to a dead port succeeded")
	} else {
		outputs = append(outputs, err.Error(), fmt.Sprintf("%+v", err))
	}
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}

	td := h.rec.Traces()
	if td.SpanCount() == 0 {
		t.Fatal("no spans recorded")
	}
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if len(rm.ScopeMetrics) == 0 {
		t.Fatal("no metrics collected")
	}
	outputs = append(outputs, fmt.Sprintf("%+v", rm), fmt.Sprintf("%+v", h.pool.Stat()), h.logs.String())

	all := strings.Join(outputs, "\n")
	for _, secret := range []string{bearerSecret, headerSecret, querySecret} {
		if strings.Contains(all, secret) {
			i := strings.Index(all, secret)
			t.Errorf("secret %q leaked near: %q", secret, all[max(0, i-80):min(len(all), i+40)])
		}
	}
	if !strings.Contains(all, "[REDACTED]") {
		t.Error("the redacted endpoint never showed: the scan may be looking at the wrong output")
	}
}

// bodyRecorder is a real transport that keeps each request body, to check
// what went over the wire.
type bodyRecorder struct {
	mu     sync.Mutex
	bodies []string
	base   http.RoundTripper
}

func (b *bodyRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		data, err := io.ReadAll(req.Body)
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(data))
		b.mu.Lock()
		b.bodies = append(b.bodies, string(data))
		b.mu.Unlock()
	}
	return b.base.RoundTrip(req)
}

func TestCallCarriesTraceContextAndEmptyArguments(t *testing.T) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	rec := &bodyRecorder{base: tr}
	h := newHarness(t, harnessOpts{pool: pool.Options{HTTPTransport: rec}})
	h.mustCall("get_workspace", nil)
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	call := h.spansNamed("plugin.mcp.client.call_tool")[0]
	traceID := call.SpanContext().TraceID().String()
	spanID := call.SpanContext().SpanID().String()
	var found bool
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, b := range rec.bodies {
		if !strings.Contains(b, `"tools/call"`) {
			continue
		}
		found = true
		if want := "00-" + traceID + "-" + spanID; !strings.Contains(b, want) {
			t.Errorf("tools/call body lacks traceparent %s: %s", want, b)
		}
		if !strings.Contains(b, `"arguments":{}`) {
			t.Errorf("nil arguments not sent as an empty object: %s", b)
		}
	}
	if !found {
		t.Fatal("no tools/call request recorded")
	}
}
