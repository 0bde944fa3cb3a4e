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

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze/report"
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
	out, _, err := execute(t, "demo", "--format", "json", "--dump", dump, "--scopes", "2", "--executions", "3")
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
	// misses beyond the 2 cold ones are evicted (its pool keeps no idle
	// session, as the pool itself says), none of them explained, and its 6
	// executions each spread over two sessions.
	a := got.Analysis
	if a.Pool.Acquires != 24 || a.Pool.Hits != 10 || a.Pool.MissReasons[spans.MissCold] != 4 || a.Pool.MissReasons[spans.MissEvicted] != 10 || report.Unexplained(a.Pool.MissReasons) != 10 {
		t.Errorf("analysis pool = %+v, want 24 acquires, 10 hits, 4 cold and 10 evicted misses", a.Pool)
	}
	if a.Executions.Count != 12 || a.Executions.MultiSession != 6 {
		t.Errorf("analysis executions = %+v, want 12 with 6 on several sessions", a.Executions)
	}

	counts := map[string]int{}
	eachDumpSpan(t, dump, func(res pcommon.Resource, s ptrace.Span) {
		svc, _ := res.Attributes().Get(spans.ResourceServiceName)
		counts[svc.Str()+" "+s.Name()]++
	})
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

// TestDemoWritesOneDumpPerMode pins the default: without --dump each mode's
// spans go to a dump of their own in --dir, named for the mode, with its HTML
// report beside, so the pooled dump reads as a pass (every miss a cold
// start) and the per-call dump as the regression, neither mixed with the
// other.
func TestDemoWritesOneDumpPerMode(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := filepath.Join(t.TempDir(), "spans") // created by the demo
	out, _, err := execute(t, "demo", "--format", "json", "--dir", dir, "--scopes", "2", "--executions", "3")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Dumps []struct {
			Modes      []demo.Mode `json:"modes"`
			Dump       string      `json:"dump"`
			HTMLReport string      `json:"html_report"`
			Analysis   struct {
				Spans int `json:"spans"`
				Pool  struct {
					Acquires     int            `json:"acquires"`
					Misses       int            `json:"misses"`
					ExcessMisses int            `json:"excess_misses"`
					MissReasons  map[string]int `json:"miss_reasons"`
				} `json:"pool"`
			} `json:"analysis"`
		} `json:"dumps"`
		Dump *string `json:"dump"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("demo JSON: %v\n%s", err, out)
	}
	if got.Dump != nil {
		t.Errorf("top-level dump = %q with two dumps, want none (it names the single dump of --dump)", *got.Dump)
	}
	if len(got.Dumps) != 2 {
		t.Fatalf("dumps = %+v, want one per mode", got.Dumps)
	}
	for i, mode := range demo.Modes {
		d := got.Dumps[i]
		wantDump, wantHTML := filepath.Join(dir, string(mode)+".jsonl"), filepath.Join(dir, string(mode)+".html")
		if len(d.Modes) != 1 || d.Modes[0] != mode || d.Dump != wantDump || d.HTMLReport != wantHTML {
			t.Errorf("dump %d = modes %v, %s, %s; want %s in %s, report %s", i, d.Modes, d.Dump, d.HTMLReport, mode, wantDump, wantHTML)
		}
		for _, p := range []string{wantDump, wantHTML} {
			if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
				t.Errorf("%s: %v, want a non-empty file", p, err)
			}
		}
		pool := d.Analysis.Pool
		if pool.Acquires != 12 || pool.MissReasons[spans.MissCold] != 2 {
			t.Errorf("%s dump: pool %+v, want its own 12 acquires with 2 cold misses (one per scope)", mode, pool)
		}
		wantUnexplained := map[demo.Mode]int{demo.ModePooled: 0, demo.ModePerCall: 10}[mode]
		if report.Unexplained(pool.MissReasons) != wantUnexplained || pool.MissReasons[spans.MissEvicted] != wantUnexplained || pool.ExcessMisses != wantUnexplained {
			t.Errorf("%s dump: %d unexplained (%d evicted) and %d excess misses, want %d", mode, report.Unexplained(pool.MissReasons), pool.MissReasons[spans.MissEvicted], pool.ExcessMisses, wantUnexplained)
		}
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	notADir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notADir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := map[string][]string{
		"out and dir":      {"demo", "--dump", "", "--dir", t.TempDir()},
		"dir not a dir":    {"demo", "--dir", notADir},
		"dir in live mode": {"demo", "--mode", "live", "--duration", "1h", "--dir", t.TempDir()},
		"unknown mode":     {"demo", "--mode", "sideways", "--dump", ""},
		"unknown format":   {"demo", "--format", "xml", "--dump", ""},
		"zero executions":  {"demo", "--executions", "0", "--dump", ""},
		"negative latency": {"demo", "--latency", "-1s", "--dump", ""},
		"unwritable out":   {"demo", "--dump", "/nonexistent-dir/demo.jsonl"},
		"unwritable live":  {"demo", "--mode", "live", "--duration", "1h", "--dump", "/nonexistent-dir/demo.jsonl"},
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

// eachDumpSpan hands every span of an OTLP JSON-lines dump, with its
// resource, to f; a line that does not parse fails the test.
func eachDumpSpan(t *testing.T, dump string, f func(res pcommon.Resource, s ptrace.Span)) {
	t.Helper()
	file, err := os.Open(dump)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var u ptrace.JSONUnmarshaler
	for sc.Scan() {
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("dump line does not parse as OTLP JSON: %v", err)
		}
		for i := range td.ResourceSpans().Len() {
			rs := td.ResourceSpans().At(i)
			for j := range rs.ScopeSpans().Len() {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := range ss.Len() {
					f(rs.Resource(), ss.At(k))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
