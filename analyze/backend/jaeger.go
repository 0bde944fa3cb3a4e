package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"
)

// Jaeger is the query API of Jaeger v2 (its jaeger_query extension),
// /api/v3, which answers OTLP JSON. Its facts, from Jaeger v1.75.0's
// cmd/query/app/apiv3/http_gateway.go and its memory storage:
//
//   - GET /api/v3/services answers {"services": [...]}.
//   - GET /api/v3/traces takes query.service_name, query.start_time_min
//     and query.start_time_max (both required, RFC 3339, both inclusive),
//     query.num_traces (the search depth: it must be positive and at most
//     the storage's max_traces), query.operation_name and
//     query.duration_min/max (Go durations), and query.raw_traces (true:
//     the spans as stored, no adjuster shifting clocks or dropping
//     duplicates); attributes cannot be given over HTTP. It answers {"result": TracesData}, every trace whole,
//     or 404 {"error":{"httpCode":404,"message":"No traces found"}}.
//   - A trace matches when one of its spans has the service, the
//     operation, the duration and a start in the window, all at once.
//   - A num_traces above the memory storage's max_traces is a 500 whose
//     message names the "search depth": the source asks again for half.
//   - Past num_traces the storage keeps the traces it received last, in
//     no order of time, and says nothing: the source narrows the window
//     until a page is not full, or says the window was cut.
type Jaeger struct{}

var _ API = Jaeger{}

// Name names the backend in reports.
func (Jaeger) Name() string { return "jaeger" }

// Services lists the services the backend has spans of.
func (Jaeger) Services(ctx context.Context, c *Client) ([]string, error) {
	body, err := c.get(ctx, "/api/v3/services", nil, 16<<20)
	if err != nil {
		return nil, v3Hint(err)
	}
	var r struct {
		Services []string `json:"services"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s/api/v3/services: not a list of services: %w", redactURL(c.base), err)
	}
	return r.Services, nil
}

// Find asks for the traces of f: the OTLP JSON of their spans, nil when
// there are none.
func (Jaeger) Find(ctx context.Context, c *Client, f Find, limit int64) ([]byte, error) {
	q := url.Values{}
	q.Set("query.service_name", f.Service)
	q.Set("query.start_time_min", f.Min.UTC().Format(time.RFC3339Nano))
	q.Set("query.start_time_max", f.Max.UTC().Format(time.RFC3339Nano))
	q.Set("query.num_traces", strconv.Itoa(f.Traces))
	q.Set("query.raw_traces", "true") // the spans as their writer sent them: no adjuster moves a clock or drops a span
	if f.Filter.Operation != "" {
		q.Set("query.operation_name", f.Filter.Operation)
	}
	if f.Filter.MinDuration > 0 {
		q.Set("query.duration_min", f.Filter.MinDuration.String())
	}
	if f.Filter.MaxDuration > 0 {
		q.Set("query.duration_max", f.Filter.MaxDuration.String())
	}
	body, err := c.get(ctx, "/api/v3/traces", q, limit)
	var se *StatusError
	switch {
	case errors.As(err, &se) && se.Status == http.StatusNotFound && strings.Contains(se.Body, "No traces found"):
		return nil, nil
	case errors.As(err, &se) && strings.Contains(se.Body, "search depth"):
		return nil, fmt.Errorf("%w: %w", ErrPageTooLarge, err) // past the storage's max_traces
	}
	if err != nil {
		return nil, v3Hint(err)
	}
	return unwrapResult(body)
}

// Matches is the storage's test of one span, its time aside: the
// resource's service, the span's name and its duration.
func (Jaeger) Matches(f Find, service string, s ptrace.Span) bool {
	if service != f.Service || (f.Filter.Operation != "" && s.Name() != f.Filter.Operation) {
		return false
	}
	d := time.Duration(int64(s.EndTimestamp()) - int64(s.StartTimestamp()))
	return (f.Filter.MinDuration == 0 || d >= f.Filter.MinDuration) && (f.Filter.MaxDuration == 0 || d <= f.Filter.MaxDuration)
}

// v3Hint adds to a 404 that is not Jaeger's own "no traces" what it
// likely means: the URL is no Jaeger v2 query service.
func v3Hint(err error) error {
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return fmt.Errorf("%w (is this a Jaeger v2 query service? its /api/v3 is on the query port, 16686 by default)", err)
	}
	return err
}

// unwrapResult returns the TracesData inside Jaeger's {"result": ...}
// answer, without copying it.
func unwrapResult(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errNotResult
	}
	if tok, err := dec.Token(); err != nil || tok != "result" {
		return nil, errNotResult
	}
	start := dec.InputOffset()
	end := bytes.LastIndexByte(body, '}')
	if end <= int(start) {
		return nil, errNotResult
	}
	v := bytes.TrimSpace(body[start:end])
	if len(v) < 2 || v[0] != ':' {
		return nil, errNotResult
	}
	return bytes.TrimSpace(v[1:]), nil
}

var errNotResult = errors.New(`the answer is not {"result": ...}: is this a Jaeger v2 query service?`)
