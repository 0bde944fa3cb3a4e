package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans"
)

// execute runs the CLI in-process and returns stdout, stderr and the error.
func execute(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestDemoPooledKeepsOneSessionPerExecutionAndPerCallDoesNot(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dump := filepath.Join(t.TempDir(), "demo.jsonl")
	out, _, err := execute(t, "demo", "--format", "json", "--out", dump, "--scopes", "2", "--executions", "3")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema   string        `json:"schema"`
		Modes    []demo.Result `json:"modes"`
		Analysis struct {
			Pool struct {
				Acquires    int            `json:"acquires"`
				Hits        int            `json:"hits"`
				MissReasons map[string]int `json:"miss_reasons"`
			} `json:"pool"`
			Executions struct {
				Count        int `json:"count"`
				MultiSession int `json:"multi_session"`
			} `json:"executions"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("demo JSON: %v\n%s", err, out)
	}
	if got.Schema != "mcptrace.demo/v1" || len(got.Modes) != 2 {
		t.Fatalf("demo JSON = %+v", got)
	}
	pooled, perCall := got.Modes[0], got.Modes[1]
	if pooled.Mode != demo.ModePooled || pooled.Executions != 6 || pooled.Calls != 12 || pooled.SessionsOpened != 2 ||
		pooled.MultiSession != 0 || pooled.StateLost != 0 || pooled.Errors != 0 {
		t.Errorf("pooled = %+v, want 6 executions on 2 sessions (one per scope), no state lost", pooled)
	}
	if want := 10.0 / 12; pooled.HitRate < want-1e-9 || pooled.HitRate > want+1e-9 {
		t.Errorf("pooled hit rate = %v, want %v", pooled.HitRate, want)
	}
	if perCall.Mode != demo.ModePerCall || perCall.SessionsOpened != 12 || perCall.MultiSession != 6 || perCall.StateLost != 6 || perCall.HitRate != 0 {
		t.Errorf("per-call = %+v, want every call on its own session", perCall)
	}

	// The analyzer reads the same story back from the dump: the per-call
	// misses beyond the 2 cold ones are unexplained, and its 6 executions
	// each spread over two sessions.
	a := got.Analysis
	if a.Pool.Acquires != 24 || a.Pool.Hits != 10 || a.Pool.MissReasons[spans.MissCold] != 4 || a.Pool.MissReasons[spans.MissUnexplained] != 10 {
		t.Errorf("analysis pool = %+v, want 24 acquires, 10 hits, 4 cold and 10 unexplained misses", a.Pool)
	}
	if a.Executions.Count != 12 || a.Executions.MultiSession != 6 {
		t.Errorf("analysis executions = %+v, want 12 with 6 on several sessions", a.Executions)
	}

	counts := map[string]int{}
	f, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("dump line does not parse as OTLP JSON: %v", err)
		}
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			svc, _ := rs.Resource().Attributes().Get(spans.ResourceServiceName)
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					counts[svc.Str()+" "+ss.At(k).Name()]++
				}
			}
		}
	}
	want := map[string]int{
		"mcptrace-demo-pooled " + demo.SpanExecution:    6,
		"mcptrace-demo-pooled " + spans.SpanInvoke:      12,
		"mcptrace-demo-pooled " + spans.SpanAcquire:     12,
		"mcptrace-demo-pooled " + spans.SpanHandshake:   2,
		"mcptrace-demo-pooled " + spans.SpanCallTool:    12,
		"mcptrace-demo-per-call " + spans.SpanHandshake: 12,
	}
	for k, v := range want {
		if counts[k] != v {
			t.Errorf("dump has %d %q spans, want %d (all: %v)", counts[k], k, v, counts)
		}
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	cases := map[string][]string{
		"unknown mode":     {"demo", "--mode", "sideways", "--out", ""},
		"unknown format":   {"demo", "--format", "xml", "--out", ""},
		"zero executions":  {"demo", "--executions", "0", "--out", ""},
		"negative latency": {"demo", "--latency", "-1s", "--out", ""},
		"unwritable out":   {"demo", "--out", "/nonexistent-dir/demo.jsonl"},
		"unwritable live":  {"demo", "--mode", "live", "--duration", "1h", "--out", "/nonexistent-dir/demo.jsonl"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := execute(t, args...)
			var ee *exitError
			if err == nil || !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("err = %v, want a usage error with exit code 2", err)
			}
			if !strings.Contains(err.Error(), "--") {
				t.Errorf("error %q does not name the flag", err)
			}
		})
	}
}
