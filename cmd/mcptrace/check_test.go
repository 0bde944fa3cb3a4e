package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/tracegen"
)

// gateDumps is where the generated dumps live, from this package.
const gateDumps = "../../testdata/traces/"

// gateRules holds the shipped rule files.
const gateRules = "../../testdata/rules/"

// runBinary runs the built mcptrace with args and env additions and returns
// its exit code, stdout and stderr.
func runBinary(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "GITHUB_ACTIONS=", "GITHUB_STEP_SUMMARY=")
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, out.String(), errb.String()
	case errors.As(err, &ee):
		return ee.ExitCode(), out.String(), errb.String()
	}
	t.Fatalf("run %v: %v", args, err)
	return 0, "", ""
}

// onlyIncompleteDump writes the cold-init request whose worker span never
// landed, alone: the cold-init rule can only say incomplete about it.
func onlyIncompleteDump(t *testing.T, dir string) string {
	t.Helper()
	td := tracegen.ColdInitIncomplete()
	keep := map[[16]byte]bool{}
	names := map[[16]byte]map[string]bool{}
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		for j := 0; j < rss.At(i).ScopeSpans().Len(); j++ {
			ss := rss.At(i).ScopeSpans().At(j).Spans()
			for k := 0; k < ss.Len(); k++ {
				id := [16]byte(ss.At(k).TraceID())
				if names[id] == nil {
					names[id] = map[string]bool{}
				}
				names[id][ss.At(k).Name()] = true
			}
		}
	}
	for id, n := range names {
		keep[id] = n["mcp.request"] && !n["worker.fetch"]
	}
	rss.RemoveIf(func(rs ptrace.ResourceSpans) bool {
		rs.ScopeSpans().RemoveIf(func(ss ptrace.ScopeSpans) bool {
			ss.Spans().RemoveIf(func(s ptrace.Span) bool { return !keep[[16]byte(s.TraceID())] })
			return ss.Spans().Len() == 0
		})
		return rs.ScopeSpans().Len() == 0
	})
	var buf bytes.Buffer
	if err := tracegen.WriteOTLPJSONLines(&buf, td); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cold-init-worker-missing.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestGateCommandsThroughTheBinary runs the built mcptrace and checks check,
// diff and rules end to end: every exit code, the JUnit file, the GitHub
// annotations and step summary.
func TestGateCommandsThroughTheBinary(t *testing.T) {
	dir := t.TempDir()
	bin := builtBinary(t)
	baseline := filepath.Join(dir, "baseline.json")
	if code, out, errOut := runBinary(t, bin, nil, "analyze", "--format", "json", gateDumps+"pooled.otlp.jsonl"); code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errOut)
	} else if err := os.WriteFile(baseline, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	incomplete := onlyIncompleteDump(t, dir)
	badRules := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(badRules, []byte("rules:\n  - id: a\n    scope: dump\n    expect: {of: hit_ratio, op: \"==\", than: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	exitCases := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"pooled passes the built-ins", []string{"check", gateDumps + "pooled.otlp.jsonl"}, 0, []string{"verdict: PASS (6 passed)"}, nil},
		{"per-call fails one session per execution", []string{"check", gateDumps + "per-call-dial.otlp.jsonl"}, 1,
			[]string{"FAIL one-session-per-execution", `{ trace:id = "`}, []string{"check fail"}},
		{"cold-init fails its rule", []string{"check", "--config", gateRules + "cold-init.yaml", gateDumps + "cold-init-two-reads.otlp.jsonl"}, 1,
			[]string{"FAIL one-org-read-per-cold-init", "count = 2 in 3 of 3 subtrees"}, nil},
		{"cold-init passes after the fix", []string{"check", "--config", gateRules + "cold-init.yaml", gateDumps + "cold-init-one-read.otlp.jsonl"}, 0, nil, nil},
		{"only incomplete data", []string{"check", "--config", gateRules + "cold-init.yaml", incomplete}, 3,
			[]string{"INCOMPLETE", "verdict: INCOMPLETE"}, nil},
		// Five acquires against six cannot tell 60% from 83%: ~, while the
		// rule on unexplained misses still fails the check.
		{"a few acquires against a baseline are noise", []string{"check", "--baseline", baseline, "--max-latency-ratio", "1000", gateDumps + "unexplained-miss.otlp.jsonl"}, 1,
			[]string{"~ (p=0.242, n=6 vs 5 acquires)", "FAIL no-unexplained-misses", "No regression against"}, nil},
		{"regression against a baseline", []string{"check", "--baseline", baseline, "--max-latency-ratio", "1000", gateDumps + "per-call-dial.otlp.jsonl"}, 1,
			[]string{"REGRESSION hit_rate", "REGRESSION unexplained_misses"}, nil},
		{"no regression against itself", []string{"check", "--baseline", baseline, gateDumps + "pooled.otlp.jsonl"}, 0, []string{"No regression against"}, nil},
		{"unknown measure in the rule file", []string{"check", "--config", badRules, gateDumps + "pooled.otlp.jsonl"}, 2, nil,
			[]string{"bad.yaml:4:18: unknown measure \"hit_ratio\""}},
		{"missing dump", []string{"check", filepath.Join(dir, "nope.jsonl")}, 2, nil, []string{"nope.jsonl"}},
		{"malformed dump", []string{"check", "--strict", "../../testdata/malformed/garbage.bin"}, 2, nil, []string{"garbage.bin"}},
		{"no path", []string{"check"}, 2, nil, []string{"check needs at least one PATH"}},
		{"bad format", []string{"check", "--format", "xml", gateDumps + "pooled.otlp.jsonl"}, 2, nil, []string{"--format \"xml\""}},
		{"bad tolerance", []string{"check", "--max-latency-ratio", "0.5", gateDumps + "pooled.otlp.jsonl"}, 2, nil, []string{"latency ratio"}},
		{"baseline that is not one", []string{"check", "--baseline", badRules, gateDumps + "pooled.otlp.jsonl"}, 2, nil, []string{"bad.yaml"}},
		{"rules --explain", []string{"rules", "--explain", gateRules + "cold-init.yaml"}, 0,
			[]string{"one-org-read-per-cold-init (error, line 25)", "Expects the number of such spans to equal 1."}, nil},
		{"rules --builtin", []string{"rules", "--builtin"}, 0,
			[]string{rulefmt.RuleOneSessionPerExecution, rulefmt.RuleNoUnexplainedMisses, rulefmt.RuleAcquireHasCacheHit, rulefmt.RuleHandshakeOnlyOnMiss, rulefmt.RuleOneAcquirePerInvoke}, nil},
		{"rules validates", []string{"rules", gateRules + "pool.yaml"}, 0, []string{"4 rule(s) OK"}, nil},
		{"rules rejects a bad file", []string{"rules", badRules}, 2, nil, []string{"bad.yaml:4:18"}},
		{"rules without arguments", []string{"rules"}, 2, nil, []string{"rules needs a FILE"}},
		{"diff of a baseline and a dump", []string{"diff", baseline, gateDumps + "per-call-dial.otlp.jsonl"}, 0,
			[]string{"hit_rate", "REGRESSION (p=0.015, n=6 vs 6 acquires)", "0.8333"}, nil},
		{"diff needs two sides", []string{"diff", baseline}, 2, nil, []string{"exactly two arguments"}},
	}
	for _, c := range exitCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel() // independent runs of the binary: overlap their start-up
			code, out, errOut := runBinary(t, bin, nil, c.args...)
			wantOutcome(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}

	t.Run("junit, json, annotations and summaries", func(t *testing.T) {
		junit := filepath.Join(dir, "check.xml")
		summary := filepath.Join(dir, "summary.md")
		stepSummary := filepath.Join(dir, "step-summary.md")
		if err := os.WriteFile(stepSummary, []byte("earlier step\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + stepSummary}
		code, out, errOut := runBinary(t, bin, env, "check", "--format", "json", "--junit", junit, "--summary", summary,
			"--baseline", baseline, "--max-latency-ratio", "1000", gateDumps+"per-call-dial.otlp.jsonl")
		if code != 1 {
			t.Fatalf("exit %d, want 1: %s", code, errOut)
		}
		var doc gate.CheckReport
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Schema != gate.CheckSchema || doc.Verdict != gate.StatusFail {
			t.Fatalf("stdout is not a failing mcptrace.check/v1 report (%v):\n%s", err, out)
		}
		// Each annotation names its file: a built-in rule the dump, a
		// regression the baseline.
		if !strings.Contains(errOut, "::error file="+gateDumps+"per-call-dial.otlp.jsonl,title=mcptrace one-session-per-execution::") ||
			!strings.Contains(errOut, "::error file="+baseline+",title=mcptrace regression hit_rate::") {
			t.Errorf("stderr lacks the annotations, each with its file=:\n%s", errOut)
		}
		data, err := os.ReadFile(junit)
		if err != nil {
			t.Fatal(err)
		}
		var suites struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Suite    []struct {
				Cases []struct {
					Name    string    `xml:"name,attr"`
					Failure *struct{} `xml:"failure"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		if err := xml.Unmarshal(data, &suites); err != nil {
			t.Fatalf("JUnit is not XML: %v\n%s", err, data)
		}
		failed := map[string]bool{}
		for _, c := range suites.Suite[0].Cases {
			failed[c.Name] = c.Failure != nil
		}
		if !failed[rulefmt.RuleOneSessionPerExecution] || !failed[rulefmt.RuleNoUnexplainedMisses] || failed[rulefmt.RuleAcquireHasCacheHit] || !failed["hit_rate"] {
			t.Errorf("JUnit testcases = %v", failed)
		}
		for _, f := range []string{summary, stepSummary} {
			md, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(md), "## mcptrace check: ❌ FAIL") || !strings.Contains(string(md), "| ❌ fail | error | `one-session-per-execution`") {
				t.Errorf("%s lacks the summary:\n%s", f, md)
			}
		}
		if md, _ := os.ReadFile(stepSummary); !strings.HasPrefix(string(md), "earlier step\n") {
			t.Error("GITHUB_STEP_SUMMARY was overwritten, not appended to")
		}
	})
}

// TestDemoDumpPassesTheGateAndPerCallFailsIt dogfoods the gate: the demo's
// pooled workload keeps every built-in invariant, and its per-call mode
// breaks one session per execution (each trace is one demo.execution).
func TestDemoDumpPassesTheGateAndPerCallFailsIt(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, c := range []struct {
		mode   demo.Mode
		failed []string
	}{
		{demo.ModePooled, nil},
		{demo.ModePerCall, []string{rulefmt.RuleOneSessionPerExecution, rulefmt.RuleNoUnexplainedMisses}},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "demo.jsonl")
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = demo.Run(t.Context(), demo.Config{Modes: []demo.Mode{c.mode}, Scopes: 2, Executions: 3, Dump: f})
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			root := rulefmt.Selector{Name: demo.SpanExecution}
			for _, cfg := range []rulefmt.Config{{}, {ExecutionRoot: &root}} {
				rules := rulefmt.BuiltinRules(cfg)
				idx, _, err := analyze.Load(t.Context(), []string{path}, analyze.LoadOptions{Index: rulefmt.MergeIndexOptions(cfg.IndexOptions(), rulefmt.RulesIndexOptions(rules))})
				if err != nil {
					t.Fatal(err)
				}
				a, err := analyze.AnalyzeRules(idx, cfg, rules, analyze.ObserveOptions{})
				if err != nil {
					t.Fatal(err)
				}
				results, err := gate.Evaluate(a, rules)
				if err != nil {
					t.Fatal(err)
				}
				var failed []string
				for _, r := range results {
					if r.Status != gate.StatusPass {
						failed = append(failed, r.ID)
					}
					if r.ID == rulefmt.RuleOneSessionPerExecution && r.Scopes != 6 {
						t.Errorf("%s judged %d executions, want 6", r.ID, r.Scopes)
					}
				}
				if strings.Join(failed, ",") != strings.Join(c.failed, ",") {
					t.Errorf("execution root %v: rules not passing = %v, want %v", cfg.ExecutionRoot, failed, c.failed)
				}
			}
		})
	}
}

// wantOutcome fails t unless a CLI run exited with code and its stdout and
// stderr contain every wanted fragment; it shows both streams on failure.
func wantOutcome(t *testing.T, gotCode int, out, errOut string, code int, stdout, stderr []string) {
	t.Helper()
	if gotCode != code {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", gotCode, code, out, errOut)
	}
	for _, w := range stdout {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	for _, w := range stderr {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %q:\n%s", w, errOut)
		}
	}
}
