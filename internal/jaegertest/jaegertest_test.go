package jaegertest

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/peers"
)

// The tests pin what Jaeger v1.75.0's /api/v3 HTTP API does, as the
// client that reads it must expect. The source lines they name are
// v1.75.0's: http_gateway.go is cmd/query/app/apiv3/http_gateway.go (the
// HTTP gateway); memory.go and tenant.go are in internal/storage/v2/memory
// (the in-memory store); standard.go and clockskew.go are in
// cmd/query/app/querysvc/v2/adjuster (what a query does to the traces it
// returns, unless query.raw_traces=true).

// span is one span of the test data, sent by its service's resource.
type span struct {
	service, trace, id, parent, name string
	kind                             ptrace.SpanKind
	start                            time.Time
	dur                              time.Duration
}

// otlpJSON is spans as one OTLP/HTTP JSON export request: a resource per
// service, in order of first appearance.
func otlpJSON(t testing.TB, spans ...span) []byte {
	t.Helper()
	td := ptrace.NewTraces()
	scopes := map[string]ptrace.SpanSlice{}
	for _, s := range spans {
		ss, ok := scopes[s.service]
		if !ok {
			rs := td.ResourceSpans().AppendEmpty()
			rs.Resource().Attributes().PutStr("service.name", s.service)
			sc := rs.ScopeSpans().AppendEmpty()
			sc.Scope().SetName("jaegertest")
			ss = sc.Spans()
			scopes[s.service] = ss
		}
		sp := ss.AppendEmpty()
		sp.SetTraceID(traceID(t, s.trace))
		sp.SetSpanID(spanID(t, s.id))
		if s.parent != "" {
			sp.SetParentSpanID(spanID(t, s.parent))
		}
		sp.SetName(s.name)
		sp.SetKind(s.kind)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.start.Add(s.dur)))
		sp.Attributes().PutInt("retries", 2)
	}
	b, err := new(ptrace.JSONMarshaler).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func traceID(t testing.TB, h string) pcommon.TraceID {
	t.Helper()
	var id pcommon.TraceID
	fromHex(t, id[:], h)
	return id
}

// spanID is h, at most 16 hex digits, zero-padded on the left.
func spanID(t testing.TB, h string) pcommon.SpanID {
	t.Helper()
	var id pcommon.SpanID
	fromHex(t, id[:], strings.Repeat("0", 16-len(h))+h)
	return id
}

func fromHex(t testing.TB, dst []byte, h string) {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil || len(b) != len(dst) {
		t.Fatalf("id %q: want %d hex bytes: %v", h, len(dst), err)
	}
	copy(dst, b)
}

// The test traces' ids.
const (
	tA = "0000000000000000000000000000000a" // alpha GET /a at T-10m, beta child at T-10m+10ms
	tB = "0000000000000000000000000000000b" // alpha GET /b at T-5m, 300ms
	tC = "0000000000000000000000000000000c" // beta alone at T-2m
	tD = "0000000000000000000000000000000d" // alpha at T-60m (outside W), beta child at T-1m
)

// fixture is a Jaeger holding the test traces, sent one export request
// each in the order B, A, C, D (not their start order), and the time T
// they are placed around. W, the window most queries use, is
// [T-30m, T].
type fixture struct {
	j *Jaeger
	T time.Time
}

func (f fixture) wMin() string { return rfc(f.T.Add(-30 * time.Minute)) }
func (f fixture) wMax() string { return rfc(f.T) }

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// newFixture starts Jaeger and stores the test traces in it.
func newFixture(t *testing.T) fixture {
	t.Helper()
	j := Start(t)
	T := time.Now().Truncate(time.Millisecond)
	m := time.Minute
	sends := [][]span{
		{{service: "alpha", trace: tB, id: "b1", name: "GET /b", kind: ptrace.SpanKindServer, start: T.Add(-5 * m), dur: 300 * time.Millisecond}},
		{
			{service: "alpha", trace: tA, id: "a1", name: "GET /a", kind: ptrace.SpanKindServer, start: T.Add(-10 * m), dur: 100 * time.Millisecond},
			{service: "beta", trace: tA, id: "a2", parent: "a1", name: "db.query", kind: ptrace.SpanKindClient, start: T.Add(-10*m + 10*time.Millisecond), dur: 50 * time.Millisecond},
		},
		{{service: "beta", trace: tC, id: "c1", name: "db.query", kind: ptrace.SpanKindClient, start: T.Add(-2 * m), dur: 20 * time.Millisecond}},
		{
			{service: "alpha", trace: tD, id: "d1", name: "GET /late", kind: ptrace.SpanKindServer, start: T.Add(-60 * m), dur: 10 * time.Millisecond},
			{service: "beta", trace: tD, id: "d2", parent: "d1", name: "db.query", kind: ptrace.SpanKindClient, start: T.Add(-1 * m), dur: 10 * time.Millisecond},
		},
	}
	for _, s := range sends {
		j.SendOTLPJSON(t, otlpJSON(t, s...))
	}
	j.WaitSpans(t, "alpha", 3)
	j.WaitSpans(t, "beta", 3)
	return fixture{j: j, T: T}
}

// find runs GET /api/v3/traces with q and returns the status, the
// Content-Type and the body.
func (f fixture) find(t *testing.T, q url.Values) (int, string, []byte) {
	t.Helper()
	return f.get(t, "/api/v3/traces?"+q.Encode())
}

func (f fixture) get(t *testing.T, path string) (int, string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, h, body, err := f.j.get(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	return code, h.Get("Content-Type"), body
}

// traceIDs returns the trace ids of a 200 answer in the order their spans
// come, each once, and the number of spans of each.
func traceIDs(t *testing.T, body []byte) ([]string, map[string]int) {
	t.Helper()
	td, err := decodeResult(body)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	spans := map[string]int{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				id := sp.TraceID().String()
				if spans[id] == 0 {
					ids = append(ids, id)
				}
				spans[id]++
			}
		}
	}
	return ids, spans
}

// query is the find-traces parameters with W, num_traces 10 and service,
// changed by kv (name, value pairs; an empty value deletes the name).
func (f fixture) query(service string, kv ...string) url.Values {
	q := url.Values{
		"query.start_time_min": {f.wMin()},
		"query.start_time_max": {f.wMax()},
		"query.num_traces":     {"10"},
	}
	if service != "" {
		q.Set("query.service_name", service)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			q.Del(kv[i])
		} else {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

// TestFindTracesReturnsWhichTraces pins which traces a find-traces query
// returns, in what order, and whole or not.
func TestFindTracesReturnsWhichTraces(t *testing.T) {
	f := newFixture(t)
	for _, c := range whichTracesCases(f) {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := f.find(t, c.q)
			if len(c.want) == 0 {
				if code != http.StatusNotFound {
					t.Fatalf("status %d, want 404: %s", code, body)
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", code, body)
			}
			ids, spans := traceIDs(t, body)
			if !slices.Equal(ids, c.want) {
				t.Errorf("traces %v, want %v", ids, c.want)
			}
			for id, n := range c.spans {
				if spans[id] != n {
					t.Errorf("trace %s has %d spans, want %d", id, spans[id], n)
				}
			}
		})
	}
}

// whichTracesCase is a find-traces query and the traces it returns.
type whichTracesCase struct {
	name  string
	q     url.Values
	want  []string       // trace ids in answer order; none: a 404
	spans map[string]int // spans per trace, where pinned
}

// whichTracesCases are TestFindTracesReturnsWhichTraces's cases on f.
func whichTracesCases(f fixture) []whichTracesCase {
	return []whichTracesCase{
		// tenant.go:121-145: the ring buffer is walked from the most
		// recently stored trace back, so the newest *ingested* matching
		// trace comes first, not the newest by start time: A (sent
		// after B) before B though A starts 5 minutes earlier.
		{"most recently ingested first, not by start time", f.query("alpha"), []string{tA, tB}, nil},
		// The first num_traces matches of that walk: the most recently
		// ingested, here A, not the latest-starting B.
		{"num_traces keeps the most recently ingested", f.query("alpha", "query.num_traces", "1"), []string{tA}, nil},
		// A trace matched by one span comes back whole: D matches by its
		// beta span at T-1m and brings its alpha span at T-60m, outside
		// the window, of another service; A brings its alpha span.
		{"matched trace comes back whole, other services and spans outside the window too", f.query("beta"),
			[]string{tD, tC, tA}, map[string]int{tD: 2, tC: 1, tA: 2}},
		// tenant.go:220-272: a trace matches when one span satisfies
		// every condition at once: of the service's resource, starting
		// in the window. D's alpha span starts outside W, its beta span
		// (inside W) is not alpha's: D is not an alpha match in W.
		{"window tests the start of the queried service's spans only", f.query("alpha"), []string{tA, tB}, nil},
		// Around T-60m only D's alpha span starts: D is an alpha match
		// there, and not a beta one, though D has a beta span.
		{"window around the alpha span of D, as alpha", f.query("alpha", "query.start_time_min", rfc(f.T.Add(-61*time.Minute)),
			"query.start_time_max", rfc(f.T.Add(-59*time.Minute))), []string{tD}, map[string]int{tD: 2}},
		{"window around the alpha span of D, as beta", f.query("beta", "query.start_time_min", rfc(f.T.Add(-61*time.Minute)),
			"query.start_time_max", rfc(f.T.Add(-59*time.Minute))), nil, nil},
		{"wide window finds the early alpha span", f.query("alpha", "query.start_time_min", wideMin, "query.start_time_max", wideMax),
			[]string{tD, tA, tB}, nil},
		// query.service_name is optional (http_gateway.go:214): no name,
		// any service's span in the window matches.
		{"no service name matches every service", f.query(""), []string{tD, tC, tA, tB}, nil},
		{"operation name narrows to spans of that name", f.query("alpha", "query.operation_name", "GET /b"), []string{tB}, nil},
		{"operation of another service does not match", f.query("alpha", "query.operation_name", "db.query"), nil, nil},
		// Durations are Go durations (time.ParseDuration,
		// http_gateway.go:246-259); both bounds are inclusive
		// (tenant.go:259-265); A's beta span lasts exactly 50ms.
		{"duration_min in Go syntax", f.query("alpha", "query.duration_min", "200ms"), []string{tB}, nil},
		{"duration_max is inclusive", f.query("beta", "query.duration_max", "50ms"), []string{tD, tC, tA}, nil},
		{"duration_max below the span", f.query("beta", "query.duration_max", "49ms"), []string{tD, tC}, nil},
		// query.attributes is not read by the HTTP gateway: Attributes is
		// always empty (http_gateway.go:216), so it filters nothing.
		{"query.attributes is ignored", f.query("alpha", "query.attributes", `{"retries":"999"}`), []string{tA, tB}, nil},
		// There is no query.search_depth parameter in the HTTP gateway;
		// query.num_traces is the search depth (http_gateway.go:238-244).
		{"query.search_depth is ignored", f.query("alpha", "query.search_depth", "1"), []string{tA, tB}, nil},
		// RFC 3339, with or without fractional seconds or a UTC offset
		// (time.RFC3339Nano parses all of them, http_gateway.go:227).
		{"whole seconds with a UTC offset", f.query("alpha",
			"query.start_time_min", f.T.Add(-30*time.Minute).Truncate(time.Second).In(time.FixedZone("", 2*3600)).Format(time.RFC3339),
			"query.start_time_max", f.T.Add(time.Second).Truncate(time.Second).Format(time.RFC3339)), []string{tA, tB}, nil},
	}
}

// TestFindTracesWindowBoundsAreInclusive pins that start_time_min and
// start_time_max both include a span starting exactly on them, to the
// nanosecond (tenant.go:252-258: Before and After, not !After).
func TestFindTracesWindowBoundsAreInclusive(t *testing.T) {
	f := newFixture(t)
	cStart := f.T.Add(-2 * time.Minute)
	ns := time.Nanosecond
	cases := []struct {
		name     string
		min, max time.Time
		found    bool
	}{
		{"min and max both on the start", cStart, cStart, true},
		{"min one ns after the start", cStart.Add(ns), cStart.Add(time.Second), false},
		{"max one ns before the start", cStart.Add(-time.Second), cStart.Add(-ns), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := f.query("beta", "query.start_time_min", rfc(c.min), "query.start_time_max", rfc(c.max))
			code, _, body := f.find(t, q)
			if !c.found {
				if code != http.StatusNotFound {
					t.Fatalf("status %d, want 404: %s", code, body)
				}
				return
			}
			if code != http.StatusOK {
				t.Fatalf("status %d, want 200: %s", code, body)
			}
			if ids, _ := traceIDs(t, body); !slices.Equal(ids, []string{tC}) {
				t.Errorf("traces %v, want [%s]", ids, tC)
			}
		})
	}
}

// TestLateSpanKeepsItsTracesPlace pins that a span stored after its
// trace's first spans joins the trace where it is (tenant.go:93-101), so
// the trace does not become the most recent: num_traces=1 still returns
// the trace first stored last.
func TestLateSpanKeepsItsTracesPlace(t *testing.T) {
	f := newFixture(t)
	late := span{service: "alpha", trace: tB, id: "b2", parent: "b1", name: "GET /b/retry", start: f.T.Add(-4 * time.Minute), dur: time.Millisecond}
	f.j.SendOTLPJSON(t, otlpJSON(t, late))
	f.j.WaitSpans(t, "alpha", 4)
	code, _, body := f.find(t, f.query("alpha", "query.num_traces", "1"))
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if ids, _ := traceIDs(t, body); !slices.Equal(ids, []string{tA}) {
		t.Errorf("traces %v, want [%s]: a late span moved its trace", ids, tA)
	}
	// The late span's trace comes back with both its spans, the late one
	// in a resourceSpans entry of its own though its resource is the
	// same: entries are per export request, not per service.
	code, _, body = f.find(t, f.query("alpha", "query.operation_name", "GET /b/retry"))
	if ids, spans := traceIDs(t, body); code != http.StatusOK || !slices.Equal(ids, []string{tB}) || spans[tB] != 2 {
		t.Errorf("status %d, traces %v with %v spans, want [%s] with 2", code, ids, spans, tB)
	}
	if td, err := decodeResult(body); err != nil || td.ResourceSpans().Len() != 2 {
		t.Errorf("want 2 resourceSpans entries for alpha (one per request), err %v: %s", err, body)
	}
}

// TestAdjustersMutateTheMemoryStore pins a trap of v1.75.0: a query
// without query.raw_traces=true runs the standard adjusters
// (adjuster/standard.go) on the very traces the memory store holds
// (memory.go:101-115 yields them uncopied), so they change the stored
// data. With max_clock_skew_adjust 0s the clock-skew adjuster adds, on
// each query, one more "@jaeger@warnings" entry to a child span that
// starts outside its parent (clockskew.go:186-188): D's beta span, an
// hour after its alpha parent; and SortCollections reorders attributes
// in place. A raw query changes nothing, but sees what earlier
// non-raw queries added.
func TestAdjustersMutateTheMemoryStore(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		name     string
		raw      bool
		warnings int
	}{
		{"raw query before any other: as sent", true, 0},
		{"first adjusted query adds a warning", false, 1},
		{"second adjusted query adds another", false, 2},
		{"raw query sees the stored warnings", true, 2},
		{"raw query adds none", true, 2},
	}
	for _, st := range steps {
		q := f.query("beta", "query.num_traces", "1")
		if st.raw {
			q.Set("query.raw_traces", "true")
		}
		code, _, body := f.find(t, q)
		if code != http.StatusOK {
			t.Fatalf("%s: status %d: %s", st.name, code, body)
		}
		n := bytes.Count(body, []byte(`{"stringValue":"clock skew adjustment disabled; not applying calculated delta of -59m0s"}`))
		if n != st.warnings || (n > 0) != bytes.Contains(body, []byte(`"key":"@jaeger@warnings"`)) {
			t.Errorf("%s: %d warnings, want %d:\n%s", st.name, n, st.warnings, body)
		}
	}
}

// TestFindTracesRefusals pins the status and exact body of every answer
// but a 200: the error object, "\n"-terminated, text/plain.
func TestFindTracesRefusals(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		name string
		q    url.Values
		code int
		body string
	}{
		// http_gateway.go:129-139: no trace is a 404 with an error object.
		{"unknown service", f.query("nosuch"), 404, `{"error":{"httpCode":404,"message":"No traces found"}}`},
		{"empty window", f.query("alpha", "query.start_time_min", "2001-01-01T00:00:00Z", "query.start_time_max", "2001-01-02T00:00:00Z"),
			404, `{"error":{"httpCode":404,"message":"No traces found"}}`},
		// http_gateway.go:222-226: both ends of the window are required.
		{"no start_time_max", f.query("alpha", "query.start_time_max", ""), 400,
			`{"error":{"httpCode":400,"message":"query.start_time_min and query.start_time_max are required"}}`},
		{"no start_time_min", f.query("alpha", "query.start_time_min", ""), 400,
			`{"error":{"httpCode":400,"message":"query.start_time_min and query.start_time_max are required"}}`},
		// tenant.go:122-124, answered as a 500 (http_gateway.go:126):
		// num_traces is required in effect, 1..max_traces.
		{"no num_traces", f.query("alpha", "query.num_traces", ""), 500,
			`{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}`},
		{"num_traces 0", f.query("alpha", "query.num_traces", "0"), 500,
			`{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}`},
		{"num_traces over max_traces", f.query("alpha", "query.num_traces", strconv.Itoa(MaxTraces+1)), 500,
			`{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}`},
		// http_gateway.go:108-114: a parameter that does not parse is a
		// 400 naming it and Go's parse error.
		{"num_traces not a number", f.query("alpha", "query.num_traces", "ten"), 400,
			`{"error":{"httpCode":400,"message":"malformed parameter query.num_traces: strconv.Atoi: parsing \"ten\": invalid syntax"}}`},
		{"start_time_min a date only", f.query("alpha", "query.start_time_min", "2026-01-02"), 400,
			`{"error":{"httpCode":400,"message":"malformed parameter query.start_time_min: parsing time \"2026-01-02\" as \"2006-01-02T15:04:05.999999999Z07:00\": cannot parse \"\" as \"T\""}}`},
		{"start_time_max in Unix seconds", f.query("alpha", "query.start_time_max", "1767225600"), 400,
			`{"error":{"httpCode":400,"message":"malformed parameter query.start_time_max: parsing time \"1767225600\" as \"2006-01-02T15:04:05.999999999Z07:00\": cannot parse \"225600\" as \"-\""}}`},
		{"duration without a unit", f.query("alpha", "query.duration_min", "100"), 400,
			`{"error":{"httpCode":400,"message":"malformed parameter query.duration_min: time: missing unit in duration \"100\""}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, ctype, body := f.find(t, c.q)
			if code != c.code || string(body) != c.body+"\n" {
				t.Errorf("status %d, body %q\nwant %d, %q", code, body, c.code, c.body+"\n")
			}
			if ctype != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ctype)
			}
		})
	}
}

// TestFindTracesAnswerIsOneOTLPJSONObject pins the shape of a 200: one
// JSON object {"result": TracesData} (http_gateway.go:116-151, no
// newline-delimited chunks, no paging token), TracesData in OTLP JSON
// (hex ids, kind as a number, int64s as strings), the resourceSpans of
// every returned trace in one list, and Content-Type text/plain as Go
// sniffs it, for the gateway sets none (http_gateway.go:153-155).
func TestFindTracesAnswerIsOneOTLPJSONObject(t *testing.T) {
	f := newFixture(t)
	code, ctype, body := f.find(t, f.query("beta", "query.num_traces", "1"))
	if code != http.StatusOK || ctype != "text/plain; charset=utf-8" {
		t.Fatalf("status %d, Content-Type %q: %s", code, ctype, body)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	var top map[string]json.RawMessage
	if err := dec.Decode(&top); err != nil {
		t.Fatal(err)
	}
	if dec.More() || bytes.HasSuffix(body, []byte("\n")) {
		t.Errorf("more than one JSON value, or a trailing newline: %s", body)
	}
	if keys := slices.Sorted(maps.Keys(top)); !slices.Equal(keys, []string{"result"}) {
		t.Errorf("top-level keys %v, want [result]", keys)
	}
	// D, whole: alpha's d1 and beta's d2, the resources in the order
	// stored (as sent; SortCollections sorts attributes and events, not
	// resources). Each trace brings its own resourceSpans entries, one
	// per resource per export request that carried its spans, all
	// concatenated in the one list: a client groups spans by traceId.
	d1 := fmt.Sprintf(`{"traceId":"%s","spanId":"00000000000000d1","name":"GET /late","kind":2,"startTimeUnixNano":"%d","endTimeUnixNano":"%d","attributes":[{"key":"retries","value":{"intValue":"2"}}],"status":{}}`,
		tD, f.T.Add(-time.Hour).UnixNano(), f.T.Add(-time.Hour+10*time.Millisecond).UnixNano())
	for _, want := range []string{
		`{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"`,
		`"scopeSpans":[{"scope":{"name":"jaegertest"},"spans":[`,
		`"spanId":"00000000000000d2","parentSpanId":"00000000000000d1"`,
		`"kind":3`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("answer lacks %s:\n%s", want, body)
		}
	}
	if !bytes.Contains(body, []byte(d1)) {
		t.Errorf("answer lacks span d1 as\n%s\n%s", d1, body)
	}
}

// TestOtherEndpoints pins /api/v3/services (a set, in no order: a map's
// keys, memory.go:90-99), /api/v3/operations and /api/v3/traces/{id}.
func TestOtherEndpoints(t *testing.T) {
	j := Start(t)
	empty := fixture{j: j}
	if code, ctype, body := empty.get(t, "/api/v3/services"); code != 200 || string(body) != `{}` || ctype != "text/plain; charset=utf-8" {
		t.Errorf("services of an empty Jaeger: %d %q %s, want 200 {}", code, ctype, body)
	}
	f := newFixture(t)
	code, _, body := f.get(t, "/api/v3/services")
	var s struct{ Services []string }
	if err := json.Unmarshal(body, &s); err != nil || code != 200 {
		t.Fatalf("services: %d %s: %v", code, body, err)
	}
	if slices.Sort(s.Services); !slices.Equal(s.Services, []string{"alpha", "beta"}) {
		t.Errorf("services %v, want alpha and beta (in any order): %s", s.Services, body)
	}
	cases := []struct {
		name, path string
		code       int
		body       string // exact, or a prefix ending in "..."
	}{
		{"operations of a service", "/api/v3/operations?service=beta", 200, `{"operations":[{"name":"db.query","spanKind":"client"}]}`},
		{"operations of an unknown service", "/api/v3/operations?service=nosuch", 200, `{"operations":[]}`},
		{"trace by hex id", "/api/v3/traces/" + tC, 200, `{"result":{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"beta"}}]},...`},
		{"unknown trace id", "/api/v3/traces/" + strings.Repeat("e", 32), 404, `{"error":{"httpCode":404,"message":"No traces found"}}` + "\n"},
		{"malformed trace id", "/api/v3/traces/xyz", 400, `{"error":{"httpCode":400,"message":"malformed parameter trace_id: strconv.ParseUint: parsing \"xyz\": invalid syntax"}}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, body := f.get(t, c.path)
			want, prefix := strings.CutSuffix(c.body, "...")
			if code != c.code || (!prefix && string(body) != want) || (prefix && !strings.HasPrefix(string(body), want)) {
				t.Errorf("status %d, body %q\nwant %d, %q", code, body, c.code, c.body)
			}
		})
	}
}

// TestStartListensOnLoopbackOnly checks that the Jaeger Start runs
// listens on 127.0.0.1 alone, on the four ports it was given (query HTTP
// and gRPC, OTLP/HTTP and gRPC): no health check, pprof, zpages, expvar
// or Collector metrics (:8888) listener on 0.0.0.0. It reads the kernel's
// tables of listening TCP sockets for the sockets the process holds.
func TestStartListensOnLoopbackOnly(t *testing.T) {
	if _, err := os.Stat("/proc/net/tcp"); err != nil {
		t.Skipf("no /proc/net/tcp to read listeners from: %v", err)
	}
	j := Start(t)
	got := listeners(t, j.pid)
	want := []string{strings.TrimPrefix(j.QueryURL(), "http://"), j.OTLPHTTPEndpoint(), j.OTLPGRPCEndpoint()}
	for _, l := range got {
		if !strings.HasPrefix(l, "127.0.0.1:") {
			t.Errorf("jaeger listens on %s, off 127.0.0.1 (all: %v)", l, got)
		}
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("jaeger does not listen on %s (all: %v)", w, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("jaeger listens on %d sockets, want 4 (query HTTP and gRPC, OTLP HTTP and gRPC): %v", len(got), got)
	}
}

// listeners returns the local addresses (IPv4 dotted, IPv6 in hex) of the
// listening TCP sockets that process pid holds.
func listeners(t *testing.T, pid int) []string {
	t.Helper()
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if ino, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			inodes[strings.TrimSuffix(ino, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			// sl local_address rem_address st ... inode (field 9)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			out = append(out, localAddr(t, f[1]))
		}
	}
	return out
}

// localAddr decodes /proc/net/tcp's "0100007F:1F90" (IPv4 little-endian
// hex) as 127.0.0.1:8080; an IPv6 address stays hex.
func localAddr(t *testing.T, s string) string {
	t.Helper()
	host, port, _ := strings.Cut(s, ":")
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		t.Fatalf("port of %q: %v", s, err)
	}
	if len(host) != 8 {
		return fmt.Sprintf("[%s]:%d", host, p)
	}
	v, err := strconv.ParseUint(host, 16, 32)
	if err != nil {
		t.Fatalf("host of %q: %v", s, err)
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", v&0xff, v>>8&0xff, v>>16&0xff, v>>24, p)
}

// TestBuildScriptAgreesWithBinary checks that scripts/jaeger-build.sh,
// which CI runs ahead of the tests, names the very file Binary runs: were
// the two paths to differ, every test process would build Jaeger again.
// The script finds the binary Binary made and only prints its path.
func TestBuildScriptAgreesWithBinary(t *testing.T) {
	if os.Getenv(BinEnv) != "" {
		t.Skipf("%s names the binary; the cached one may not exist", BinEnv)
	}
	bin := Binary(t)
	root, err := peers.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "jaeger-build.sh")).Output()
	if err != nil {
		t.Fatalf("scripts/jaeger-build.sh: %v", err)
	}
	if got := strings.TrimSpace(string(out)); got != bin {
		t.Errorf("scripts/jaeger-build.sh printed %q, Binary returned %q", got, bin)
	}
	t.Setenv(BinEnv, bin)
	if got := Binary(t); got != bin {
		t.Errorf("with %s=%s Binary returned %q", BinEnv, bin, got)
	}
}

// TestBuildErrorBlamesTheMachineOnlyForItsFaults pins which failed builds
// skip (errMissing: no route to the module proxy, no time left) and which
// fail the test (the build itself is broken).
func TestBuildErrorBlamesTheMachineOnlyForItsFaults(t *testing.T) {
	expired, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	exit := errors.New("exit status 1")
	cases := []struct {
		name    string
		ctx     context.Context
		output  string
		missing bool
	}{
		{"proxy unreachable", context.Background(), `go: github.com/jaegertracing/jaeger@v1.75.0: Get "https://proxy.golang.org/...": dial tcp: lookup proxy.golang.org: no such host`, true},
		{"proxy off", context.Background(), "go: module lookup disabled by GOPROXY=off", true},
		{"deadline passed", expired, "", true},
		{"compile error", context.Background(), "./x.go:1:1: undefined: y", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := buildError(c.ctx, "dir", exit, c.output)
			if got := errors.Is(err, errMissing); got != c.missing {
				t.Errorf("errors.Is(%v, errMissing) = %v, want %v", err, got, c.missing)
			}
		})
	}
}

// TestCachePathIsKeyedByGoSum pins the cache layout the build script
// repeats: <cache>/mcptrace/jaeger-<16 hex of SHA-256(go.sum)>/jaeger.
func TestCachePathIsKeyedByGoSum(t *testing.T) {
	got := CachePath("/c", []byte("x\n"))
	// printf 'x\n' | sha256sum: 73cb3858a687a849...
	if want := "/c/mcptrace/jaeger-73cb3858a687a849/jaeger"; got != want {
		t.Errorf("CachePath = %s, want %s", got, want)
	}
}
