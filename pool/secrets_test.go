package pool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
	"github.com/mcptrace/mcptrace/spans/telemetry"
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
	h.srv.RejectNext(fixtures.Reject{Status: 500, Method: "tools/call"})
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

// wireRecorder is a real transport that counts the requests whose headers
// or URL carried a secret: proof that the secret did go where it belongs, so
// that finding it nowhere else means something.
type wireRecorder struct {
	base    http.RoundTripper
	secrets []string
	mu      sync.Mutex
	carried int
}

func (w *wireRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var b strings.Builder
	b.WriteString(req.URL.String())
	for name, vals := range req.Header {
		b.WriteString(name + ": " + strings.Join(vals, ",") + "\n")
	}
	for _, s := range w.secrets {
		if strings.Contains(b.String(), s) {
			w.mu.Lock()
			w.carried++
			w.mu.Unlock()
			break
		}
	}
	return w.base.RoundTrip(req)
}

func (w *wireRecorder) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.carried
}

// secretPlacement is one way a credential reaches a server.
type secretPlacement struct {
	name   string
	secret string // must never show outside the wire
	// forms are the other spellings of secret that must not show either
	// (query escaping).
	forms  []string
	config func(endpoint, secret string) pool.TargetConfig
}

var secretPlacements = []secretPlacement{
	{
		name:   "bearer token",
		secret: "bearer-s3cr3t-1001",
		config: func(ep, s string) pool.TargetConfig { return pool.TargetConfig{Endpoint: ep, BearerToken: s} },
	},
	{
		name:   "Authorization header set by hand",
		secret: "basic-s3cr3t-1002",
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep, Header: http.Header{"Authorization": {"Basic " + s}}}
		},
	},
	{
		name:   "API-key header",
		secret: "apikey-s3cr3t-1003",
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep, Header: http.Header{"X-Api-Key": {s}}}
		},
	},
	{
		name:   "header named secret by SecretHeaders",
		secret: "orgheader-s3cr3t-1004",
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep, Header: http.Header{"X-Org": {s}}, SecretHeaders: []string{"x-org"}}
		},
	},
	{
		name:   "query-string credential",
		secret: "query-s3cr3t-1005",
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep + "?api_key=" + s + "&region=eu"}
		},
	},
	{
		name:   "query-string token that needs escaping",
		secret: "q/s3cr3t+1006=",
		forms:  []string{url.QueryEscape("q/s3cr3t+1006=")},
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep + "?token=" + url.QueryEscape(s)}
		},
	},
	{
		// The endpoint's own spelling (%20 for a space, a lower-case
		// escape) is what net/http quotes in its errors, not the
		// canonical QueryEscape of the value.
		name:   "query-string token spelled with %20 and lower-case escapes",
		secret: "q s3cr3t/1007",
		forms:  []string{"q%20s3cr3t%2f1007", url.QueryEscape("q s3cr3t/1007")},
		config: func(ep, s string) pool.TargetConfig {
			return pool.TargetConfig{Endpoint: ep + "?access_token=" + strings.NewReplacer(" ", "%20", "/", "%2f").Replace(s)}
		},
	},
}

// deadEndpoint returns an endpoint on 127.0.0.1 where nothing listens.
func deadEndpoint(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + fixtures.MCPPath
}

// TestSecretsNeverLeakFromAnyPlacementOrOutcome drives each credential
// placement through every outcome the pool has (success, each failure kind,
// an open breaker, Close) and scans every output: errors, exported spans as
// OTLP JSON, metric labels, debug logs, pool keys and endpoints, Stat;
// with the pool's span names and with SemconvCallSpans, whose spans say
// more (the server's address, each handshake request, a JSON-RPC error's
// own message).
func TestSecretsNeverLeakFromAnyPlacementOrOutcome(t *testing.T) {
	for _, semconv := range []bool{false, true} {
		for _, pl := range secretPlacements {
			name := pl.name
			if semconv {
				name += "/semconv"
			}
			t.Run(name, func(t *testing.T) { checkSecretsNeverLeak(t, pl, semconv) })
		}
	}
}

// checkSecretsNeverLeak is one placement of the secrets suite, with call
// spans in the pool's names or in the conventions' (semconv).
func checkSecretsNeverLeak(t *testing.T, pl secretPlacement, semconv bool) {
	wire := &wireRecorder{base: &http.Transport{}, secrets: append([]string{pl.secret}, pl.forms...)}
	defer wire.base.(*http.Transport).CloseIdleConnections()
	h := newHarness(t, harnessOpts{pool: pool.Options{BreakerThreshold: 2, HTTPTransport: wire, SemconvCallSpans: semconv}})
	// The placement decides the endpoint (query credentials), so
	// the target is built here rather than by the harness.
	tg, err := pool.NewTarget(pl.config(h.srv.URL(), pl.secret))
	if err != nil {
		t.Fatal(err)
	}
	h.target = tg
	bad400, err := fixtures.Start(fixtures.Options{UnknownSessionStatus: http.StatusBadRequest})
	if err != nil {
		t.Fatal(err)
	}
	defer bad400.Close()
	on400, err := pool.NewTarget(pl.config(bad400.URL(), pl.secret))
	if err != nil {
		t.Fatal(err)
	}
	dead, err := pool.NewTarget(pl.config(deadEndpoint(t), pl.secret))
	if err != nil {
		t.Fatal(err)
	}

	var outputs []string
	ctx := context.Background()
	// fail runs one call that must fail and keeps its error text.
	fail := func(what string, tg *pool.Target, tool string, args map[string]any, ctx context.Context) {
		t.Helper()
		_, err := h.pool.CallTool(ctx, tg, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err == nil {
			t.Fatalf("%s: call succeeded, want a failure", what)
		}
		outputs = append(outputs, err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
	}
	ok := func(tg *pool.Target, tool string) {
		t.Helper()
		if _, err := h.pool.CallTool(ctx, tg, &mcp.CallToolParams{Name: tool}); err != nil {
			t.Fatalf("call %s: %v", tool, err)
		}
	}

	ok(h.target, fixtures.ToolSelectWorkspace) // success (cold)
	ok(h.target, fixtures.ToolGetWorkspace)    // success (hit)
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusInternalServerError, Method: "tools/call"})
	fail("500", h.target, fixtures.ToolEcho, nil, ctx)
	ok(h.target, fixtures.ToolEcho)
	h.srv.RejectNext(fixtures.Reject{Status: http.StatusServiceUnavailable, RetryAfter: 5 * time.Second, Method: "tools/call"})
	fail("503 with Retry-After", h.target, fixtures.ToolEcho, nil, ctx)
	ok(h.target, fixtures.ToolEcho)
	h.srv.ForgetSessions()
	ok(h.target, fixtures.ToolEcho) // 404 on a reused session: redialed
	h.srv.ResetConnectionOnNextCall(fixtures.ResetAfterTool)
	fail("connection reset", h.target, fixtures.ToolSideEffect, nil, ctx)
	ok(h.target, fixtures.ToolEcho)
	h.srv.ExpireDuringNextCall()
	fail("expired in flight", h.target, fixtures.ToolSideEffect, nil, ctx)
	ok(h.target, fixtures.ToolEcho)
	ok(on400, fixtures.ToolEcho)
	bad400.ForgetSessions()
	fail("400 for an unknown session", on400, fixtures.ToolEcho, nil, ctx)

	// Cancelled in flight.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fail("cancelled in flight", h.target, fixtures.ToolSlow, map[string]any{"ms": 60_000}, cctx)
	}()
	if err := h.srv.WaitInFlight(boundedContext(t), 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	<-done

	// Handshake past the deadline, while another lease holds the
	// idle session so the call must dial.
	ok(h.target, fixtures.ToolEcho)
	held, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	h.srv.SetMethodLatency("initialize", time.Hour)
	dctx, dcancel := context.WithTimeout(ctx, 50*time.Millisecond)
	fail("handshake past the deadline", h.target, fixtures.ToolEcho, nil, dctx)
	dcancel()
	h.srv.SetMethodLatency("initialize", 0)
	held.Release(nil)

	// A dead server: dial errors quote the URL, then the breaker
	// opens and names the key.
	fail("dead server", dead, fixtures.ToolEcho, nil, ctx)
	fail("dead server again", dead, fixtures.ToolEcho, nil, ctx)
	fail("breaker open", dead, fixtures.ToolEcho, nil, ctx)
	if st := h.pool.Stat(); st.BreakerRejects != 1 {
		t.Fatalf("stat = %+v, want the third dead-server call refused by the breaker", st)
	}

	// Close with a lease out, then a call on the closed pool.
	out, err := h.pool.Acquire(ctx, h.target)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.pool.Close(); err != nil {
		t.Fatal(err)
	}
	fail("closed pool", h.target, fixtures.ToolEcho, nil, ctx)
	out.Release(nil)

	for _, tg := range []*pool.Target{h.target, on400, dead} {
		outputs = append(outputs, tg.Key(), tg.Endpoint(), tg.String(), fmt.Sprint(tg), fmt.Sprintf("%+v", tg), fmt.Sprintf("%#v", tg))
	}
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(telemetry.ToTraces(h.rec.Spans()))
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))
	var rm metricdata.ResourceMetrics
	if err := h.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	metricsJSON, err := json.Marshal(rm)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, fmt.Sprintf("%+v", rm), string(metricsJSON), fmt.Sprintf("%+v", h.pool.Stat()), h.logs.String())

	all := strings.Join(outputs, "\n")
	for _, s := range append([]string{pl.secret}, pl.forms...) {
		if i := strings.Index(all, s); i >= 0 {
			t.Errorf("secret %q leaked near: %q", s, all[max(0, i-100):min(len(all), i+40)])
		}
	}
	if wire.count() == 0 {
		t.Error("the secret never went over the wire: the workload did not exercise the placement")
	}
	if !strings.Contains(string(js), spans.ErrTypeCircuitOpen) || !strings.Contains(h.logs.String(), "circuit breaker opened") {
		t.Error("the scanned spans or logs lack the breaker: the scan may be looking at the wrong output")
	}
	if semconv != strings.Contains(string(js), spans.GenAIOperationExecuteTool) {
		t.Errorf("SemconvCallSpans %v, but the scanned spans say otherwise: the scan may be looking at the wrong output", semconv)
	}
}

func TestIdentitiesWithDifferentCredentialsNeverShareASession(t *testing.T) {
	for _, pl := range secretPlacements {
		t.Run(pl.name, func(t *testing.T) {
			h := newHarness(t, harnessOpts{})
			alice, err := pool.NewTarget(pl.config(h.srv.URL(), pl.secret))
			if err != nil {
				t.Fatal(err)
			}
			bob, err := pool.NewTarget(pl.config(h.srv.URL(), pl.secret+"-bob"))
			if err != nil {
				t.Fatal(err)
			}
			if alice.Key() == bob.Key() {
				t.Fatal("two credentials produced one key")
			}
			ctx := context.Background()
			if _, err := h.pool.CallTool(ctx, alice, &mcp.CallToolParams{Name: fixtures.ToolSelectWorkspace, Arguments: map[string]any{"workspace": "alice"}}); err != nil {
				t.Fatal(err)
			}
			res, err := h.pool.CallTool(ctx, bob, &mcp.CallToolParams{Name: fixtures.ToolGetWorkspace})
			if err != nil {
				t.Fatal(err)
			}
			if got := resultText(res); got != fixtures.NoWorkspace {
				t.Errorf("bob sees %q, want %q: alice's session was shared", got, fixtures.NoWorkspace)
			}
			if st := h.pool.Stat(); st.Keys != 2 || st.Dials != 2 || st.Hits != 0 {
				t.Errorf("stat = %+v, want two keys, two dials, no hit", st)
			}
		})
	}
}
