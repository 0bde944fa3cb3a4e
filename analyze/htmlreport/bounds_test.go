package htmlreport

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// scopesDump writes one pooled invocation (a cold miss with its handshake,
// then a call) in each of n pool scopes; the first scope's name is long.
func scopesDump(t testing.TB, n int, long string) string {
	t.Helper()
	d := dumptest.New()
	for i := range n {
		name := fmt.Sprintf("scope-%d", i)
		if i == 0 {
			name = long
		}
		ss := d.Resource(spans.ResourceServiceName, "gw", spans.ResourceServiceInstanceID, name)
		tr, start := uint64(i+1), time.Duration(i)*time.Millisecond
		end, mid := start+500*time.Microsecond, start+50*time.Microsecond
		session := fmt.Sprintf("s%d", i)
		inv := d.Add(ss, dumptest.Span{Trace: tr, Name: spans.SpanInvoke, Start: start, End: end, Attrs: []any{spans.AttrCacheKey, "k"}})
		acq := d.Add(ss, dumptest.Span{Trace: tr, Parent: inv, Name: spans.SpanAcquire, Start: start, End: mid,
			Attrs: []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false, spans.AttrMissReason, spans.MissCold}})
		d.Add(ss, dumptest.Span{Trace: tr, Parent: acq, Name: spans.SpanHandshake, Kind: ptrace.SpanKindClient, Start: start, End: mid,
			Attrs: []any{spans.AttrSessionID, session}})
		d.Add(ss, dumptest.Span{Trace: tr, Parent: inv, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient, Start: mid, End: end,
			Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, session}})
	}
	return d.Write(t)
}

// TestHTMLReportListsABoundedNumberOfScopes pins the HTML report's size
// budget: it lists at most DefaultMaxListedScopes scopes, says
// how many more there are, and its page does not grow with the unlisted
// scopes' charts, whatever one scope's name holds.
func TestHTMLReportListsABoundedNumberOfScopes(t *testing.T) {
	const n = 300
	long := strings.Repeat("[x](https://e.example)\u202e", 40_000) // about 1 MB
	r, ev := analyzetest.Analyzed(t, scopesDump(t, n, long), rulefmt.Config{}, ingest.ReadOptions{Strict: true})
	if len(r.Pool.ByScope) != n {
		t.Fatalf("%d scopes, want %d", len(r.Pool.ByScope), n)
	}
	h, err := New(r, ev, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Scopes) != DefaultMaxListedScopes || h.Sampling.ScopesLeftOut != n-DefaultMaxListedScopes {
		t.Errorf("HTML lists %d scopes and %d left out, want %d and %d", len(h.Scopes), h.Sampling.ScopesLeftOut, DefaultMaxListedScopes, n-DefaultMaxListedScopes)
	}
	if !strings.Contains(h.Sampling.Note, fmt.Sprintf("and %d more", n-DefaultMaxListedScopes)) {
		t.Errorf("the sampling note does not say how many more scopes: %q", h.Sampling.Note)
	}
	var page bytes.Buffer
	if err := h.Render(&page); err != nil {
		t.Fatal(err)
	}
	// The page carries the long name (data, escaped) once per listed
	// place; it must not grow with the unlisted scopes' charts.
	if per := page.Len() / n; per > 40<<10 {
		t.Errorf("HTML page is %d bytes for %d scopes (%d per scope)", page.Len(), n, per)
	}
}

// TestHTMLReportSaysExecutionsAreNotMeasurable pins the HTML report's words
// on a dump whose call outlives its root (a finding, and the headline not
// measurable), and that a call ending exactly with its root says nothing of
// the kind.
func TestHTMLReportSaysExecutionsAreNotMeasurable(t *testing.T) {
	for _, tc := range []struct {
		name    string
		callEnd time.Duration
		want    bool
	}{
		{"a call outliving its root", time.Second + time.Nanosecond, true},
		{"a call within its root", time.Second, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := dumptest.New()
			ss := d.Resource(spans.ResourceServiceName, "gw")
			root := d.Add(ss, dumptest.Span{Trace: 1, Name: "request", End: time.Second})
			d.Add(ss, dumptest.Span{Trace: 1, Parent: root, Name: spans.SpanCallTool, Kind: ptrace.SpanKindClient, End: tc.callEnd,
				Attrs: []any{spans.AttrMethodName, spans.MethodToolsCall, spans.AttrSessionID, "s1"}})
			cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
			r, ev := analyzetest.Analyzed(t, d.Write(t), cfg, ingest.ReadOptions{Strict: true})
			h, err := New(r, ev, Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, o := range h.Offenders {
				found = found || (o.ID == "executions not measurable" && strings.Contains(o.Found, "root span ended"))
			}
			if found != tc.want || h.Headline.ExecutionsMeasurable == tc.want {
				t.Errorf("HTML: offender %v, headline measurable %v; want offender %v", found, h.Headline.ExecutionsMeasurable, tc.want)
			}
		})
	}
}
