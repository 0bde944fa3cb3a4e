package main

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/mcptrace/mcptrace/internal/jaegertest"
)

// TestJaegerReadsOtherWritersTracesAsTheirFiles sends dumps written by
// instrumentation we did not write (the third-party corpus: a client's
// one service, and two services in one trace where a server-side writer
// or Sentry wrote beside the gateway) to a real Jaeger of their own, and
// reads them back: analyze's figures and check's verdict and exit code
// are the file's.
func TestJaegerReadsOtherWritersTracesAsTheirFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real Jaeger per dump: not in -short mode")
	}
	for _, dump := range []string{"openllmetry/per-call.jsonl", "sentry/pooled.jsonl", "shinzo/forget.jsonl"} {
		t.Run(dump, func(t *testing.T) {
			path := filepath.Join(corpusDumps, dump)
			j := jaegertest.Start(t)
			perService := sendDumpLines(t, j, path)
			args := []string{"--jaeger", j.QueryURL(), "--start", "2000-01-01T00:00:00Z", "--end", "2100-01-01T00:00:00Z", "--settle", "0s"}
			for _, svc := range slices.Sorted(maps.Keys(perService)) {
				j.WaitSpans(t, svc, perService[svc])
				args = append(args, "--service", svc)
			}
			code, out, stderr := runCLI(t, "", "analyze", "--format", "json", path)
			want, _ := figures(t, out)
			jCode, jOut, jErr := runCLI(t, "", append([]string{"analyze", "--format", "json"}, args...)...)
			if got, _ := figures(t, jOut); jCode != code || got != want {
				t.Errorf("analyze --jaeger: exit %d (the file's %d), figures\n%s\n%s\n--- the file's\n%s\n%s", jCode, code, got, jErr, want, stderr)
			}
			code, out, _ = runCLI(t, "", "check", "--format", "json", path)
			jCode, jOut, jErr = runCLI(t, "", append([]string{"check", "--format", "json"}, args...)...)
			if jCode != code || checkVerdict(t, jOut) != checkVerdict(t, out) {
				t.Errorf("check --jaeger: %s, exit %d; the file's %s, exit %d\n%s", checkVerdict(t, jOut), jCode, checkVerdict(t, out), code, jErr)
			}
		})
	}
}

// sendDumpLines posts each line of the OTLP JSON-lines dump at path to j,
// as an exporter would a batch, and returns the spans sent per service.
func sendDumpLines(t *testing.T, j *jaegertest.Jaeger, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	perService := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get("service.name")
			for k := range rs.ScopeSpans().Len() {
				perService[svc.Str()] += rs.ScopeSpans().At(k).Spans().Len()
			}
		}
		j.SendOTLPJSON(t, slices.Clone(sc.Bytes()))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return perService
}
