package jaegertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// waitTimeout bounds WaitSpans and the requests of the helpers: ingestion
// takes milliseconds, but a loaded CI machine stretches everything.
const waitTimeout = 30 * time.Second

// The widest window Jaeger's API takes: every span a test sends is in it.
const (
	wideMin = "1970-01-01T00:00:00Z"
	wideMax = "9999-12-31T23:59:59Z"
)

// waitReady polls until the query API answers GET /api/v3/services with
// 200 and the OTLP/HTTP receiver takes an empty export (the Collector
// starts its extensions, the query API among them, before its receivers),
// or p exits, or startTimeout passes.
func (j *Jaeger) waitReady(p *process) error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	for {
		err := j.ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("jaeger exited before it was ready: %v", p.err)
		case <-ctx.Done():
			return fmt.Errorf("jaeger not ready after %v: %w", startTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ready says why Jaeger is not ready yet, nil when it is.
func (j *Jaeger) ready(ctx context.Context) error {
	code, _, body, err := j.get(ctx, "/api/v3/services")
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("GET /api/v3/services: %d %s", code, body)
	}
	code, body, err = j.postOTLP(ctx, []byte("{}"))
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("POST /v1/traces: %d %s", code, body)
	}
	return nil
}

// SendOTLPJSON posts body, an OTLP ExportTraceServiceRequest in JSON (hex
// ids, timestamps as decimal strings), to the OTLP/HTTP receiver's
// /v1/traces, as an OTLP/HTTP exporter would, and fails the test unless
// Jaeger takes all of it (2xx, no rejected spans). Storage is
// asynchronous to the test's eye: use WaitSpans before querying.
func (j *Jaeger) SendOTLPJSON(t testing.TB, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	code, resp, err := j.postOTLP(ctx, body)
	if err != nil {
		t.Fatalf("jaegertest: %v", err)
	}
	if code < 200 || code > 299 {
		t.Fatalf("jaegertest: POST http://%s/v1/traces: status %d: %s", j.otlpHTTP, code, resp)
	}
	var r struct {
		PartialSuccess struct {
			RejectedSpans json.Number `json:"rejectedSpans"`
			ErrorMessage  string      `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		t.Fatalf("jaegertest: POST /v1/traces answered %q: %v", resp, err)
	}
	if ps := r.PartialSuccess; (ps.RejectedSpans != "" && ps.RejectedSpans != "0") || ps.ErrorMessage != "" {
		t.Fatalf("jaegertest: Jaeger rejected %s spans: %s", ps.RejectedSpans, ps.ErrorMessage)
	}
}

// postOTLP posts body to /v1/traces as JSON.
func (j *Jaeger) postOTLP(ctx context.Context, body []byte) (int, []byte, error) {
	u := "http://" + j.otlpHTTP + "/v1/traces"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return 0, nil, fmt.Errorf("POST %s: %w", u, err)
	}
	req.Header.Set("Content-Type", "application/json")
	code, _, resp, err := do(req)
	return code, resp, err
}

// WaitSpans polls the API until it returns at least want spans of service
// over the widest window, and returns how many it returned: a span is
// stored a moment after its export is answered, so a test queries only
// once its spans are there. It fails the test after waitTimeout. It counts
// the spans whose resource is service's, in the raw traces
// (query.raw_traces=true): as stored, no adjuster dropping duplicates,
// and no adjuster changing the memory store's traces, as Jaeger's
// adjusters do when they run (TestAdjustersMutateTheMemoryStore).
func (j *Jaeger) WaitSpans(t testing.TB, service string, want int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	q := url.Values{
		"query.service_name":   {service},
		"query.start_time_min": {wideMin},
		"query.start_time_max": {wideMax},
		"query.num_traces":     {strconv.Itoa(MaxTraces)},
		"query.raw_traces":     {"true"},
	}
	var got int
	err := pollUntil(ctx, func() (bool, error) {
		var err error
		got, err = j.countSpans(ctx, q, service)
		return err == nil && got >= want, err
	})
	if err != nil {
		t.Fatalf("jaegertest: %d spans of service %q after %v, want %d (last error: %v)", got, service, waitTimeout, want, err)
	}
	return got
}

// pollUntil calls try every 100 ms until it reports done, and returns
// nil then, or try's last error (ctx's when it had none) once ctx ends.
func pollUntil(ctx context.Context, try func() (done bool, err error)) error {
	for {
		done, err := try()
		if done {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// countSpans runs the find-traces query q and counts the returned spans
// whose resource's service.name is service; Jaeger's 404 for no trace is 0.
func (j *Jaeger) countSpans(ctx context.Context, q url.Values, service string) (int, error) {
	code, _, body, err := j.get(ctx, "/api/v3/traces?"+q.Encode())
	if err != nil {
		return 0, err
	}
	if code == http.StatusNotFound {
		return 0, nil
	}
	if code != http.StatusOK {
		return 0, fmt.Errorf("find traces: status %d: %s", code, body)
	}
	td, err := decodeResult(body)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, rs := range td.ResourceSpans().All() {
		if v, ok := rs.Resource().Attributes().Get("service.name"); ok && v.Str() == service {
			for _, ss := range rs.ScopeSpans().All() {
				n += ss.Spans().Len()
			}
		}
	}
	return n, nil
}

// TracesDocument fetches the traces of service from 2000 to 2100 from
// the query server's /api/traces, as they came: the Jaeger JSON document
// jaeger-query serves its UI, and a user saves from it, for a test of a
// reader of that format against what a real Jaeger writes. It polls until
// the document holds at least want spans: /api/traces can answer with no
// trace a moment after the API WaitSpans polls finds them all. It fails
// the test after waitTimeout.
func (j *Jaeger) TracesDocument(t testing.TB, service string, want int) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	q := url.Values{
		"service": {service},
		"start":   {"946684800000000"},  // 2000-01-01, in microseconds since the epoch
		"end":     {"4102444800000000"}, // 2100-01-01: wider ends are not served
		"limit":   {strconv.Itoa(MaxTraces)},
	}
	var body []byte
	var got int
	err := pollUntil(ctx, func() (bool, error) {
		var err error
		body, got, err = j.tracesDocument(ctx, q)
		return err == nil && got >= want, err
	})
	if err != nil {
		t.Fatalf("jaegertest: /api/traces of %q held %d spans after %v, want %d (last error: %v)", service, got, waitTimeout, want, err)
	}
	return body
}

// tracesDocument fetches /api/traces with q and counts its spans.
func (j *Jaeger) tracesDocument(ctx context.Context, q url.Values) ([]byte, int, error) {
	code, _, body, err := j.get(ctx, "/api/traces?"+q.Encode())
	if err != nil {
		return nil, 0, err
	}
	if code != http.StatusOK {
		return nil, 0, fmt.Errorf("GET /api/traces: status %d: %.200s", code, body)
	}
	var doc struct {
		Data []struct {
			Spans []json.RawMessage `json:"spans"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, 0, fmt.Errorf("decode /api/traces' answer %.200q: %w", body, err)
	}
	n := 0
	for _, tr := range doc.Data {
		n += len(tr.Spans)
	}
	return body, n, nil
}

// decodeResult decodes a 200 answer of /api/v3/traces: one JSON object
// {"result": TracesData}, where TracesData is OTLP JSON.
func decodeResult(body []byte) (ptrace.Traces, error) {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return ptrace.Traces{}, fmt.Errorf("decode the API's answer %.200q: %w", body, err)
	}
	td, err := new(ptrace.JSONUnmarshaler).UnmarshalTraces(r.Result)
	if err != nil {
		return ptrace.Traces{}, fmt.Errorf("decode the API's result as OTLP JSON: %w", err)
	}
	return td, nil
}

// get fetches path (with its query) from the query server.
func (j *Jaeger) get(ctx context.Context, path string) (int, http.Header, []byte, error) {
	u := j.queryURL + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("GET %s: %w", u, err)
	}
	return do(req)
}

// do sends req and returns the answer's status, header and body.
func do(req *http.Request) (int, http.Header, []byte, error) {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: read the answer: %w", req.Method, req.URL, err)
	}
	return resp.StatusCode, resp.Header, body, nil
}

// lastLines returns at most n final lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
