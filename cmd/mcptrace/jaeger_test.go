package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/internal/jaegertest"
	"github.com/mcptrace/mcptrace/internal/testbound"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// demoService is the service.name of the pooled demo's spans.
const demoService = "mcptrace-demo-pooled"

// jaegerWithDemo starts a real Jaeger on 127.0.0.1 and runs the pooled
// demo (the pool against a fixture server) with its spans going two ways
// at once: into a dump file, and over OTLP/HTTP to Jaeger's receiver
// through the OpenTelemetry SDK's exporter, as a gateway's would. It waits
// until Jaeger holds every span the dump holds, and returns Jaeger and
// the dump.
func jaegerWithDemo(t *testing.T) (*jaegertest.Jaeger, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a real Jaeger and runs the demo: not in -short mode")
	}
	j := jaegertest.Start(t)
	dump := filepath.Join(t.TempDir(), "pooled.jsonl")
	if _, stderr, err := execute(t, "demo", "--mode", "pooled", "--dump", dump, "--format", "json",
		"--otlp-endpoint", "http://"+j.OTLPHTTPEndpoint()); err != nil {
		t.Fatalf("demo: %v\n%s", err, stderr)
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	spans := bytes.Count(b, []byte(`"spanId"`))
	if spans == 0 {
		t.Fatal("the demo wrote no span")
	}
	j.WaitSpans(t, demoService, spans)
	return j, dump
}

// jaegerArgs are the flags that read the demo's window from j.
func jaegerArgs(j *jaegertest.Jaeger, extra ...string) []string {
	return append([]string{"--jaeger", j.QueryURL(), "--service", demoService, "--since", "1h", "--settle", "0s"}, extra...)
}

// figures is a report without its inputs: what was measured, whatever
// the source.
func figures(t *testing.T, out string) (string, []report.InputReport) {
	t.Helper()
	r := decodeReport(t, out)
	inputs := r.Inputs
	r.Inputs = nil
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b), inputs
}

// TestJaegerAsASource runs the commands against one real Jaeger holding
// the pooled demo's spans (started once: the build, the start and the
// demo take a while).
func TestJaegerAsASource(t *testing.T) {
	j, dump := jaegerWithDemo(t)
	t.Run("the figures of the same spans in a file", func(t *testing.T) { jaegerEqualsFile(t, j, dump) })
	t.Run("refusals exit as they should", func(t *testing.T) { jaegerRefusals(t, j) })
	t.Run("an interrupt mid-fetch exits 130 and writes nothing", func(t *testing.T) { jaegerInterrupted(t, j) })
}

// jaegerEqualsFile is the backend's contract: the demo's spans read back
// from a real Jaeger give the report the dump gives, figure for figure,
// whether one page holds the window or many, or the page size asked for is
// past what Jaeger allows; check gives the same verdict and exit code,
// diff against the dump the same rows, and whatif the same rows. The
// report says what it read from where.
func jaegerEqualsFile(t *testing.T, j *jaegertest.Jaeger, dump string) {
	code, out, stderr := runCLI(t, "", "analyze", "--format", "json", dump)
	if code != 0 {
		t.Fatalf("analyze of the dump: exit %d\n%s", code, stderr)
	}
	want, _ := figures(t, out)
	// Pages of 6 traces page through the window (the demo writes a
	// dozen); 200000 is past this Jaeger's max_traces, which it refuses:
	// the source halves it. A smaller page may see the window cut on a
	// fast run: the pooled demo starts some traces a few milliseconds
	// apart, and a page still full at the 1ms floor is cut, as it should.
	const smallPage = "6"
	for _, pageTraces := range []string{"500", smallPage, "200000"} {
		code, out, stderr = runCLI(t, "", append([]string{"analyze", "--format", "json"}, jaegerArgs(j, "--page-traces", pageTraces)...)...)
		if code != 0 {
			t.Fatalf("analyze --jaeger, pages of %s traces: exit %d\n%s", pageTraces, code, stderr)
		}
		if refused := strings.Contains(stderr, "refused pages of 200000 traces: asked for 100000"); refused != (pageTraces == "200000") {
			t.Errorf("pages of %s traces: stderr says of a refusal %v:\n%s", pageTraces, refused, stderr)
		}
		got, inputs := figures(t, out)
		if got != want {
			t.Errorf("pages of %s traces: the figures from Jaeger differ from the dump's:\n--- jaeger\n%s\n--- dump\n%s", pageTraces, got, want)
		}
		if len(inputs) != 1 || inputs[0].Backend == nil {
			t.Fatalf("inputs %+v: want the one query, described", inputs)
		}
		b := inputs[0].Backend
		if b.Backend != "jaeger" || b.URL != j.QueryURL() || b.Cut || b.Traces == 0 || (pageTraces == smallPage) != (b.Pages > 1) {
			t.Errorf("pages of %s traces: the query read %+v", pageTraces, b)
		}
	}
	fileCode, fileOut, _ := runCLI(t, "", "check", "--format", "json", dump)
	jCode, jOut, jErr := runCLI(t, "", append([]string{"check", "--format", "json"}, jaegerArgs(j)...)...)
	if fileCode != jCode || checkVerdict(t, fileOut) != checkVerdict(t, jOut) {
		t.Errorf("check: the dump's verdict %s (exit %d), Jaeger's %s (exit %d)\n%s", checkVerdict(t, fileOut), fileCode, checkVerdict(t, jOut), jCode, jErr)
	}
	_, fileOut, _ = runCLI(t, "", "diff", "--format", "json", dump, dump)
	_, jOut, jErr = runCLI(t, "", append([]string{"diff", "--format", "json", dump}, jaegerArgs(j)...)...)
	if fr, jr := diffRows(t, fileOut), diffRows(t, jOut); fr != jr {
		t.Errorf("diff against Jaeger differs from against the dump:\n--- jaeger\n%s\n%s\n--- dump\n%s", jr, jErr, fr)
	}
	_, fileOut, _ = runCLI(t, "", "whatif", "--format", "json", "--idle-ttl", "1s,5m", dump)
	_, jOut, jErr = runCLI(t, "", append([]string{"whatif", "--format", "json", "--idle-ttl", "1s,5m"}, jaegerArgs(j)...)...)
	if fileOut != jOut {
		t.Errorf("whatif from Jaeger differs from the dump's:\n--- jaeger\n%s\n%s\n--- dump\n%s", jOut, jErr, fileOut)
	}
}

// checkVerdict is a check report's verdict.
func checkVerdict(t *testing.T, out string) string {
	t.Helper()
	var r struct {
		Verdict string `json:"verdict"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("check's JSON: %v\n%s", err, out)
	}
	return r.Verdict
}

// jaegerRefusals pins the outcomes a user meets: an empty window and a
// wrong service exit 3 and say why, naming the services the backend
// knows with the nearest one first; a backend that is down, or that
// never answers, exits 2 within the request timeout, naming the URL.
func jaegerRefusals(t *testing.T, j *jaegertest.Jaeger) {
	silent := silentServer(t)
	tests := []struct {
		name string
		args []string
		code int
		says []string
	}{
		{"an empty window", []string{"--jaeger", j.QueryURL(), "--service", demoService, "--start", "2020-01-01T00:00:00Z", "--end", "2020-01-02T00:00:00Z"},
			3, []string{"no traces", demoService, "2020-01-01T00:00:00Z"}},
		{"a service the backend does not know", []string{"--jaeger", j.QueryURL(), "--service", "mcptrace-demo-poled", "--since", "1h"},
			3, []string{`no service "mcptrace-demo-poled"`, `did you mean "` + demoService + `"`}},
		{"a backend that is down", []string{"--jaeger", closedPortURL(t), "--service", demoService, "--since", "1h"},
			2, []string{"connection refused"}},
		{"a backend that never answers", []string{"--jaeger", silent, "--service", demoService, "--since", "1h", "--backend-timeout", "300ms"},
			2, []string{silent, "Timeout"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", append([]string{"analyze"}, tc.args...)...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s", code, tc.code, stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
		})
	}
}

// silentServer is a backend on 127.0.0.1 that takes every request and
// never answers it until the client gives up.
func silentServer(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// jaegerInterrupted interrupts analyze while it waits on a page: a proxy
// in front of Jaeger passes the services list and holds every traces
// request. The command exits 130, says so, and leaves no -o file.
func jaegerInterrupted(t *testing.T, j *jaegertest.Jaeger) {
	target, err := url.Parse(j.QueryURL())
	if err != nil {
		t.Fatal(err)
	}
	asked := make(chan struct{}, 1)
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/traces" {
			select {
			case asked <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "report.json")
	cmd, lines, seen := startHelper(t, "", phaseRead, nil, "analyze", "--format", "json", "-o", out,
		"--jaeger", srv.URL, "--service", demoService, "--since", "1h")
	bound, stop := testbound.Context(t)
	defer stop()
	select {
	case <-asked:
	case <-bound.Done():
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no page was asked for; stderr:\n%s", seen.String())
	}
	signalAndJudge(t, cmd, lines, seen, syscall.SIGINT, " mid-fetch")
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-o %s after an interrupt: %v, want no file", out, err)
	}
}

// diffRows is a diff's rows, without the sides' names.
func diffRows(t *testing.T, out string) string {
	t.Helper()
	var d struct {
		Rows json.RawMessage `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil || len(d.Rows) == 0 {
		t.Fatalf("diff's JSON: %v\n%s", err, out)
	}
	return string(d.Rows)
}

// TestJaegerFlagMistakesAreUsageErrors pins the refusals made before any
// request: each exits 2 naming what to give, and a password in the URL is
// never echoed.
func TestJaegerFlagMistakesAreUsageErrors(t *testing.T) {
	const u = "http://127.0.0.1:9"
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"a backend flag without --jaeger", []string{"analyze", "--service", "gw", "dump.jsonl"}, "give --jaeger URL too"},
		{"a path beside --jaeger", []string{"analyze", "--jaeger", u, "--service", "gw", "--since", "1h", "dump.jsonl"}, "give no PATH"},
		{"no service", []string{"analyze", "--jaeger", u, "--since", "1h"}, "needs --service"},
		{"no window", []string{"analyze", "--jaeger", u, "--service", "gw"}, "needs a window"},
		{"--since and --start", []string{"check", "--jaeger", u, "--service", "gw", "--since", "1h", "--start", "2026-12-01T00:00:00Z"}, "give one"},
		{"a start that is no time", []string{"whatif", "--jaeger", u, "--service", "gw", "--start", "yesterday"}, "want RFC 3339"},
		{"a start after the end", []string{"analyze", "--jaeger", u, "--service", "gw", "--start", "2026-12-02T00:00:00Z", "--end", "2026-12-01T00:00:00Z"}, "is empty"},
		{"a start equal to the end", []string{"analyze", "--jaeger", u, "--service", "gw", "--start", "2026-12-01T00:00:00Z", "--end", "2026-12-01T00:00:00Z"}, "is empty"},
		{"a password in the URL", []string{"analyze", "--jaeger", "http://me:hunter22@127.0.0.1:9", "--service", "gw", "--since", "1h"}, "credentials in a URL"},
		{"--split-by with --jaeger", []string{"analyze", "--split-by", "run", "--jaeger", u, "--service", "gw", "--since", "1h"}, "does not apply to --jaeger"},
		{"diff with two sides and --jaeger", []string{"diff", "--jaeger", u, "--service", "gw", "--since", "1h", "a.json", "b.json"}, "exactly one argument"},
		{"no page", []string{"analyze", "--jaeger", u, "--service", "gw", "--since", "1h", "--page-traces", "0"}, "--page-traces"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, want 2 saying %q:\n%s", code, tc.says, stderr)
			}
			if strings.Contains(stderr, "hunter22") {
				t.Errorf("the password reached stderr:\n%s", stderr)
			}
		})
	}
}

// cutBackend is a loopback backend answering /api/v3 as Jaeger's memory
// storage does, holding the pooled dump's three traces moved to start in
// the same nanosecond: with pages of two traces the page holding that
// instant is full however narrow, so the window is cut. It returns the
// backend's URL and the instant.
func cutBackend(t *testing.T) (string, time.Time) {
	t.Helper()
	line, err := os.ReadFile(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 4, 30, 9, 0, 0, 0, time.UTC)
	first := map[pcommon.TraceID]pcommon.Timestamp{}
	eachTraceSpan(td, func(s ptrace.Span) {
		if f, ok := first[s.TraceID()]; !ok || s.StartTimestamp() < f {
			first[s.TraceID()] = s.StartTimestamp()
		}
	})
	eachTraceSpan(td, func(s ptrace.Span) { // each trace moved to start at at
		shift := pcommon.NewTimestampFromTime(at) - first[s.TraceID()]
		s.SetStartTimestamp(s.StartTimestamp() + shift)
		s.SetEndTimestamp(s.EndTimestamp() + shift)
	})
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		lo, _ := time.Parse(time.RFC3339Nano, q.Get("query.start_time_min"))
		hi, _ := time.Parse(time.RFC3339Nano, q.Get("query.start_time_max"))
		switch {
		case r.URL.Path == "/api/v3/services":
			_, _ = w.Write([]byte(`{"services":["mcp-gateway"]}`))
		case r.URL.Path == "/api/v3/traces" && !at.Before(lo) && !at.After(hi):
			_, _ = w.Write([]byte(`{"result":` + string(body) + `}`)) // all three: more than asked, as a storage past its limit never is
		case r.URL.Path == "/api/v3/traces":
			http.Error(w, `{"error":{"httpCode":404,"message":"No traces found"}}`, http.StatusNotFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, at
}

// eachTraceSpan calls fn with every span of td.
func eachTraceSpan(td ptrace.Traces, fn func(ptrace.Span)) {
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				fn(s)
			}
		}
	}
}

// TestACutWindowExits3UnlessAllowed pins the partial run: a window cut by
// the page size is analyzed, checked and replayed with a warning and exit
// 3, or exit 0 with --allow-partial; the report says the window was cut.
func TestACutWindowExits3UnlessAllowed(t *testing.T) {
	url, at := cutBackend(t)
	window := []string{"--jaeger", url, "--service", "mcp-gateway", "--start", at.Add(-time.Minute).Format(time.RFC3339),
		"--end", at.Add(time.Hour).Format(time.RFC3339), "--page-traces", "2"}
	for _, cmd := range [][]string{{"analyze", "--format", "json"}, {"check"}, {"whatif"}} {
		for _, allow := range []bool{false, true} {
			args := append(slices.Clone(cmd), window...)
			if allow {
				args = append(args, "--allow-partial")
			}
			code, out, stderr := runCLI(t, "", args...)
			if wantCode := map[bool]int{false: 3, true: 0}[allow]; code != wantCode || !strings.Contains(stderr, "the window was cut") {
				t.Errorf("%s, --allow-partial %v: exit %d, want %d with the cut said:\n%s", cmd[0], allow, code, wantCode, stderr)
			}
			if cmd[0] == "analyze" {
				r := decodeReport(t, out)
				if b := r.Inputs[0].Backend; !r.Partial || b == nil || !b.Cut || b.Traces != 3 {
					t.Errorf("analyze of the cut window, --allow-partial %v: partial %v, backend %+v: want partial, cut, 3 traces", allow, r.Partial, b)
				}
			}
		}
	}
}
