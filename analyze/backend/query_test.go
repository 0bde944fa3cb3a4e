package backend

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
)

// fakeV3 is a loopback server answering Jaeger's /api/v3 as its memory
// storage does (jaeger.go's facts): a trace matches when one span has the
// service, the operation and a start in the inclusive window; past the
// limit the traces received last are kept. It pins the source's paging
// against those rules; the real Jaeger test pins the rules themselves.
type fakeV3 struct {
	traces   []ptrace.Traces // in the order received
	requests atomic.Int32
	// maxTraces, when set, is the storage's capacity: a page asking for
	// more is refused as Jaeger's memory storage refuses it.
	maxTraces int
	// ignoreWindow answers every trace of the service whatever range is
	// asked: a broken or hostile backend.
	ignoreWindow bool
	// escape, when set, rewrites each page's JSON: what pdata cannot
	// write, such as an escaped lone surrogate.
	escape *strings.Replacer
}

func (f *fakeV3) serve(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.requests.Add(1) > 1000 { // a source paging without end fails the test, not hangs it
			http.Error(w, `{"error":{"httpCode":400,"message":"too many requests for a test"}}`, http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/api/v3/services":
			seen := map[string]bool{}
			var names []string
			for _, td := range f.traces {
				eachSpan(td, func(svc string, _ ptrace.Span) {
					if !seen[svc] {
						seen[svc] = true
						names = append(names, svc)
					}
				})
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"services": names})
		case "/api/v3/traces":
			f.find(t, w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func (f *fakeV3) find(t *testing.T, w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	lo, err1 := time.Parse(time.RFC3339Nano, q.Get("query.start_time_min"))
	hi, err2 := time.Parse(time.RFC3339Nano, q.Get("query.start_time_max"))
	n, err3 := strconv.Atoi(q.Get("query.num_traces"))
	if err1 != nil || err2 != nil || err3 != nil || n <= 0 {
		http.Error(w, `{"error":{"httpCode":400,"message":"malformed parameter"}}`, http.StatusBadRequest)
		return
	}
	if f.maxTraces > 0 && n > f.maxTraces {
		http.Error(w, `{"error":{"httpCode":500,"message":"search depth must be greater than 0 and less than max traces"}}`, http.StatusInternalServerError)
		return
	}
	sel := Find{Service: q.Get("query.service_name"), Filter: Filter{Operation: q.Get("query.operation_name")}}
	out := ptrace.NewTraces()
	found := 0
	for i := len(f.traces) - 1; i >= 0 && found < n; i-- {
		match := false
		eachSpan(f.traces[i], func(svc string, s ptrace.Span) {
			at := s.StartTimestamp().AsTime()
			match = match || (Jaeger{}.Matches(sel, svc, s) && (f.ignoreWindow || !at.Before(lo) && !at.After(hi)))
		})
		if match {
			found++
			for _, rs := range f.traces[i].ResourceSpans().All() {
				rs.CopyTo(out.ResourceSpans().AppendEmpty())
			}
		}
	}
	if found == 0 {
		http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
		return
	}
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(out)
	if err != nil {
		t.Error(err)
	}
	page := `{"result":` + string(b) + `}`
	if f.escape != nil {
		page = f.escape.Replace(page)
	}
	_, _ = w.Write([]byte(page))
}

// span is one span of a fake trace: its service, name and times.
type span struct {
	svc, name  string
	start, end time.Time
}

// add stores a trace of spans with id n.
func (f *fakeV3) add(n uint64, spans ...span) pcommon.TraceID {
	var id pcommon.TraceID
	binary.BigEndian.PutUint64(id[8:], n)
	td := ptrace.NewTraces()
	for i, s := range spans {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr("service.name", s.svc)
		sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
		sp.SetTraceID(id)
		var sid pcommon.SpanID
		binary.BigEndian.PutUint64(sid[:], n<<8|uint64(i+1))
		sp.SetSpanID(sid)
		sp.SetName(s.name)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(s.start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(s.end))
	}
	f.traces = append(f.traces, td)
	return id
}

// handed collects what a Query hands its sink: spans per trace.
type handed map[pcommon.TraceID]int

func (h handed) sink() ingest.Sink {
	return ingest.SinkFunc(func(_ *ingest.Input, td ptrace.Traces) error {
		eachSpan(td, func(_ string, s ptrace.Span) { h[s.TraceID()]++ })
		return nil
	})
}

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func testQuery(t *testing.T, f *fakeV3, services ...string) *Query {
	t.Helper()
	c, err := NewClient(ClientOptions{URL: f.serve(t).URL})
	if err != nil {
		t.Fatal(err)
	}
	return &Query{API: Jaeger{}, Client: c, Services: services, Start: t0, End: t0.Add(time.Hour),
		PageTraces: 10, Now: func() time.Time { return t0.Add(2 * time.Hour) }}
}

// TestEveryTraceIsHandedOnceWholeAcrossPagesAndServices pins the paging:
// a window of twelve pages' worth of traces, some with spans of both
// services, some straddling a page's edge, some starting before the
// window, comes out with every trace once and whole, and nothing cut.
func TestEveryTraceIsHandedOnceWholeAcrossPagesAndServices(t *testing.T) {
	f := &fakeV3{}
	want := map[pcommon.TraceID]int{}
	for i := range 120 {
		at := t0.Add(time.Duration(i) * 30 * time.Second)
		spans := []span{{"a", "call", at, at.Add(time.Second)}}
		switch i % 4 {
		case 1: // a span of the second service, later
			spans = append(spans, span{"b", "serve", at.Add(10 * time.Second), at.Add(11 * time.Second)})
		case 2: // the second service's span first
			spans = append(spans, span{"b", "serve", at.Add(-20 * time.Second), at.Add(-19 * time.Second)})
		}
		want[f.add(uint64(i+1), spans...)] = len(spans)
	}
	want[f.add(500, span{"b", "early", t0.Add(-time.Minute), t0}, span{"b", "in", t0.Add(time.Minute), t0.Add(2 * time.Minute)})] = 2
	f.add(501, span{"a", "outside", t0.Add(-time.Minute), t0.Add(-time.Second)})                                                                   // no span in the window
	f.add(502, span{"a", "at-end", t0.Add(time.Hour), t0.Add(time.Hour + time.Second)})                                                            // starts at the window's end, which is not in it
	want[f.add(504, span{"b", "in", t0.Add(time.Minute), t0.Add(2 * time.Minute)}, span{"a", "at-end", t0.Add(time.Hour), t0.Add(time.Hour)})] = 2 // b's alone: a's span is past the window
	want[f.add(503, span{"a", "at-start", t0, t0.Add(time.Second)})] = 1                                                                           // starts at the window's start, which is
	q := testQuery(t, f, "a", "b")
	got := handed{}
	ins, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink())
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range want {
		if got[id] != n {
			t.Errorf("trace %v: %d spans handed, want %d", id, got[id], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d traces handed, want %d", len(got), len(want))
	}
	b := ins[0].Backend
	if b.Cut || ins[0].Partial || b.Pages < 12 || b.Traces != len(want) || b.Spans != ins[0].Spans {
		t.Errorf("backend read %+v (input partial %v, spans %d): want %d traces, at least 12 pages, nothing cut", b, ins[0].Partial, ins[0].Spans, len(want))
	}
}

// TestAFullPageAtTheNarrowestRangeCutsTheWindow pins the cut: more traces
// than a page holds, all starting in the same nanosecond, cannot be split,
// so the window is cut and the input partial.
func TestAFullPageAtTheNarrowestRangeCutsTheWindow(t *testing.T) {
	for _, tc := range []struct {
		traces int
		cut    bool
	}{{9, false}, {10, true}, {12, true}} {
		f := &fakeV3{}
		for i := range tc.traces {
			f.add(uint64(i+1), span{"a", "call", t0.Add(time.Minute), t0.Add(time.Minute + time.Second)})
		}
		q := testQuery(t, f, "a")
		got := handed{}
		ins, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink())
		if err != nil {
			t.Fatal(err)
		}
		if ins[0].Backend.Cut != tc.cut || ins[0].Partial != tc.cut || len(got) != min(tc.traces, 10) {
			t.Errorf("%d traces at one instant, pages of 10: cut %v, partial %v, %d handed; want cut %v", tc.traces, ins[0].Backend.Cut, ins[0].Partial, len(got), tc.cut)
		}
		if tc.cut && !strings.Contains(strings.Join(ins[0].Warnings, "\n"), "cut") {
			t.Errorf("no warning says the window was cut: %q", ins[0].Warnings)
		}
	}
}

// TestATraceStillBeingWrittenIsNotJudged pins the settle time: a trace
// whose latest span ended less than Settle ago is counted, not handed,
// and makes the input partial; one that ended exactly Settle ago is whole.
func TestATraceStillBeingWrittenIsNotJudged(t *testing.T) {
	f := &fakeV3{}
	now := t0.Add(50 * time.Minute)
	whole := f.add(1, span{"a", "call", t0.Add(time.Minute), now.Add(-30 * time.Second)})
	young := f.add(2, span{"a", "call", t0.Add(2 * time.Minute), now.Add(-30*time.Second + 1)})
	q := testQuery(t, f, "a")
	q.Settle, q.Now = 30*time.Second, func() time.Time { return now }
	got := handed{}
	ins, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink())
	if err != nil {
		t.Fatal(err)
	}
	if got[whole] != 1 || got[young] != 0 || ins[0].Backend.Settling != 1 || !ins[0].Partial {
		t.Errorf("handed %v, settling %d, partial %v: want the settled trace only, one settling, partial", got, ins[0].Backend.Settling, ins[0].Partial)
	}
	if q.Rereadable() {
		t.Error("a window ending after now-settle says it reads the same twice")
	}
	q.End = now.Add(-30 * time.Second)
	if !q.Rereadable() {
		t.Error("a window ending exactly settle ago says it may change")
	}
}

// TestAnUnknownServiceNamesTheKnownOnes pins the refusal of a service the
// backend has no spans of, before any trace is asked for.
func TestAnUnknownServiceNamesTheKnownOnes(t *testing.T) {
	f := &fakeV3{}
	f.add(1, span{"gateway", "call", t0.Add(time.Minute), t0.Add(2 * time.Minute)})
	q := testQuery(t, f, "gatewya")
	_, err := q.Read(context.Background(), ingest.ReadOptions{}, handed{}.sink())
	ue, ok := err.(*UnknownServiceError)
	if !ok || ue.Service != "gatewya" || len(ue.Known) != 1 || ue.Known[0] != "gateway" || f.requests.Load() != 1 {
		t.Errorf("err %v after %d requests, want an UnknownServiceError knowing gateway, after one", err, f.requests.Load())
	}
}

// TestAnEmptyWindowAndAnOperationFilter pins Jaeger's 404 "No traces
// found" as an empty page, and the operation filter's owner test.
func TestAnEmptyWindowAndAnOperationFilter(t *testing.T) {
	f := &fakeV3{}
	f.add(1, span{"a", "call", t0.Add(-2 * time.Hour), t0.Add(-2 * time.Hour)})
	q := testQuery(t, f, "a")
	ins, err := q.Read(context.Background(), ingest.ReadOptions{}, handed{}.sink())
	if err != nil || ins[0].Backend.Traces != 0 || ins[0].Backend.Pages != 1 || ins[0].Partial {
		t.Errorf("an empty window: %v, %+v", err, ins[0].Backend)
	}
	f = &fakeV3{}
	other := f.add(1, span{"a", "list", t0.Add(time.Minute), t0.Add(2 * time.Minute)}, span{"a", "call", t0.Add(-time.Minute), t0})
	picked := f.add(2, span{"a", "call", t0.Add(3 * time.Minute), t0.Add(4 * time.Minute)})
	q = testQuery(t, f, "a")
	q.Filter.Operation = "call"
	got := handed{}
	if _, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink()); err != nil {
		t.Fatal(err)
	}
	if got[picked] != 1 || got[other] != 0 {
		t.Errorf("handed %v: want only the trace whose call starts in the window", got)
	}
}

// TestAPageLargerThanTheBackendAllowsIsHalved pins the answer to Jaeger's
// refusal of a search depth past its max_traces: the source asks for half
// as many until it is accepted, keeps that size, and says so.
func TestAPageLargerThanTheBackendAllowsIsHalved(t *testing.T) {
	f := &fakeV3{maxTraces: 3}
	for i := range 5 {
		f.add(uint64(i+1), span{"a", "call", t0.Add(time.Duration(i+1) * time.Minute), t0.Add(time.Duration(i+1)*time.Minute + time.Second)})
	}
	q := testQuery(t, f, "a")
	var w waits
	q.Client.sleep = w.sleep
	got := handed{}
	ins, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || ins[0].Backend.Cut || !strings.Contains(strings.Join(ins[0].Warnings, "\n"), "refused pages of 10 traces: asked for 2") {
		t.Errorf("%d traces handed, cut %v, warnings %q: want all 5 in pages of 2, said", len(got), ins[0].Backend.Cut, ins[0].Warnings)
	}
}

// TestABackendIgnoringTheRangeAskedIsRefused pins the answer to a backend
// that returns traces outside the range asked: an error naming it, not a
// window paged a millisecond at a time.
func TestABackendIgnoringTheRangeAskedIsRefused(t *testing.T) {
	f := &fakeV3{ignoreWindow: true}
	f.add(1, span{"a", "call", t0.Add(time.Minute), t0.Add(2 * time.Minute)})
	f.add(2, span{"a", "call", t0.Add(40 * time.Minute), t0.Add(41 * time.Minute)})
	q := testQuery(t, f, "a")
	q.PageTraces = 2
	_, err := q.Read(context.Background(), ingest.ReadOptions{}, handed{}.sink())
	if err == nil || !strings.Contains(err.Error(), "does not select by time") || f.requests.Load() > 10 {
		t.Errorf("err %v after %d requests: want the backend refused, at once", err, f.requests.Load())
	}
}

// TestTheRangeGrowsBackAfterABurst pins that paging stays cheap with the
// smallest pages: after a burst narrowed the range, a page less than a
// quarter full (an empty one, with pages of fewer than four) doubles the
// next, so an hour of little is a few requests, not
// one per millisecond.
func TestTheRangeGrowsBackAfterABurst(t *testing.T) {
	for _, pageTraces := range []int{1, 2, 4} {
		f := &fakeV3{}
		for i := range 3 {
			f.add(uint64(i+1), span{"a", "call", t0.Add(time.Duration(i) * time.Millisecond), t0.Add(time.Second)})
		}
		f.add(9, span{"a", "call", t0.Add(59 * time.Minute), t0.Add(59*time.Minute + time.Second)})
		q := testQuery(t, f, "a")
		q.PageTraces = pageTraces
		got := handed{}
		if _, err := q.Read(context.Background(), ingest.ReadOptions{}, got.sink()); err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 || f.requests.Load() > 200 {
			t.Errorf("pages of %d: %d traces after %d requests, want 4 after a few", pageTraces, len(got), f.requests.Load())
		}
	}
}

// TestAPageOfInvalidTraceIDsLeavesItsSpansOutAndReadsOn pins a page whose
// every span has an all-zero trace id: its spans are left out with the
// reader's warning, as a file's are, and the query goes on to the other
// pages, partial; a file of such spans alone is an error, but a page is
// not an input. In strict mode the first such span still fails the query.
func TestAPageOfInvalidTraceIDsLeavesItsSpansOutAndReadsOn(t *testing.T) {
	f := &fakeV3{}
	f.add(0, span{"b", "call", t0.Add(time.Minute), t0.Add(2 * time.Minute)})
	valid := f.add(1, span{"a", "call", t0.Add(3 * time.Minute), t0.Add(4 * time.Minute)})
	got := handed{}
	ins, err := testQuery(t, f, "b", "a").Read(context.Background(), ingest.ReadOptions{}, got.sink())
	if err != nil {
		t.Fatalf("a page of invalid trace ids failed the query: %v", err)
	}
	warned := false
	for _, w := range ins[0].Warnings {
		warned = warned || strings.Contains(w, "spans left out for an invalid trace id in this input: 1")
	}
	if got[valid] != 1 || len(got) != 1 || !ins[0].Partial || !warned {
		t.Errorf("handed %v, partial %v, warnings %q: want the valid trace alone, partial, and the warning", got, ins[0].Partial, ins[0].Warnings)
	}
	_, err = testQuery(t, f, "b", "a").Read(context.Background(), ingest.ReadOptions{Strict: true}, handed{}.sink())
	if !errors.Is(err, ingest.ErrInvalidTraceID) {
		t.Errorf("strict: err %v, want the invalid trace id", err)
	}
}

// TestLoneSurrogatesOfEveryPageAreCountedOnTheInput pins that the escaped
// lone surrogates the pages held are counted on the backend's input
// (ingest.Input.LoneSurrogates), summed over its pages, as a file's are:
// the analysis asks it whether keys holding U+FFFD may be two read as one.
func TestLoneSurrogatesOfEveryPageAreCountedOnTheInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		a, b   string
		lone   int
		warned bool
	}{
		{"none", "call", "serve", 0, false},
		{"one page", "call-LONE", "serve", 1, true},
		{"two pages", "call-LONE", "serve-LONE-LONE", 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeV3{escape: strings.NewReplacer("LONE", `\ud800`)}
			f.add(1, span{"a", tc.a, t0.Add(time.Minute), t0.Add(2 * time.Minute)})
			f.add(2, span{"b", tc.b, t0.Add(time.Minute), t0.Add(2 * time.Minute)})
			q := testQuery(t, f, "a", "b")
			ins, err := q.Read(context.Background(), ingest.ReadOptions{}, handed{}.sink())
			if err != nil {
				t.Fatal(err)
			}
			warned := strings.Contains(strings.Join(ins[0].Warnings, "\n"), "lone UTF-16 surrogates")
			if ins[0].Backend.Pages != 2 || ins[0].LoneSurrogates != tc.lone || warned != tc.warned {
				t.Errorf("%d pages, %d lone surrogates (warnings %q): want 2 pages, %d, warned %v", ins[0].Backend.Pages, ins[0].LoneSurrogates, ins[0].Warnings, tc.lone, tc.warned)
			}
		})
	}
}
