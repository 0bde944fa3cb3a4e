package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/internal/demo"
)

// pooledDemoDump runs the pooled demo workload once, small, into a dump in
// dir, and returns its path. The fixture adds latency so that the calls'
// durations vary from run to run as a network's do.
func pooledDemoDump(t *testing.T, dir string, i int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("pooled-%d.jsonl", i))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = demo.Run(t.Context(), demo.Config{Modes: []demo.Mode{demo.ModePooled}, Scopes: 2, Executions: 3, Latency: 10 * time.Millisecond, Dump: f})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// checkJSON is what these tests read of `check --format json`.
type checkJSON struct {
	Verdict     string            `json:"verdict"`
	Regressions []json.RawMessage `json:"regressions"`
	Comparison  []gate.Row        `json:"comparison"`
}

// TestIdenticalPooledRunsNeverRegressAgainstEachOther: ten runs of the same
// pooled workload, each checked against the first as its baseline, differ
// only by chance (a handful of handshakes, a dozen calls): no run may be
// called a regression, however far a percentile of three samples moved.
func TestIdenticalPooledRunsNeverRegressAgainstEachOther(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	base := pooledDemoDump(t, dir, 0)
	for i := 1; i < 10; i++ {
		cur := pooledDemoDump(t, dir, i)
		code, out, errOut := runCLI(t, "", "check", "--format", "json", "--baseline", base, cur)
		var doc checkJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, errOut)
		}
		if code != 0 || len(doc.Regressions) != 0 {
			t.Errorf("run %d against run 0: exit %d, regressions %s\n%s", i, code, doc.Regressions, errOut)
		}
		for _, r := range doc.Comparison {
			if r.Verdict == gate.VerdictRegression {
				t.Errorf("run %d: %s %s", i, r.Measure, verdictOf(r))
			}
		}
	}
}

// verdictOf renders a row's verdict for a test message.
func verdictOf(r gate.Row) string { return string(r.Verdict) + " (" + r.Why + ")" }

// TestDiffAndCheckJudgeEveryRowAlike: diff and check --baseline print the
// same rows with the same verdicts, a measure not measurable on both sides
// included (executions, when no span matches the execution root), and such
// a measure is never a regression.
func TestDiffAndCheckJudgeEveryRowAlike(t *testing.T) {
	base, cur := gateDumps+"pooled.otlp.jsonl", gateDumps+"per-call-dial.otlp.jsonl"
	root := []string{"--execution-root", "no.such.span"}
	code, out, errOut := runCLI(t, "", append([]string{"diff", "--format", "json", base, cur}, root...)...)
	if code != 0 {
		t.Fatalf("diff: exit %d\n%s", code, errOut)
	}
	var diff struct {
		Rows []gate.Row `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &diff); err != nil {
		t.Fatal(err)
	}
	_, out, errOut = runCLI(t, "", append([]string{"check", "--format", "json", "--baseline", base, cur}, root...)...)
	var check checkJSON
	if err := json.Unmarshal([]byte(out), &check); err != nil {
		t.Fatalf("check: %v\n%s", err, errOut)
	}
	if len(diff.Rows) == 0 || len(diff.Rows) != len(check.Comparison) {
		t.Fatalf("diff has %d rows, check %d", len(diff.Rows), len(check.Comparison))
	}
	seen := false
	for i, d := range diff.Rows {
		c := check.Comparison[i]
		if d.Measure != c.Measure || d.Verdict != c.Verdict || d.Why != c.Why {
			t.Errorf("row %d: diff says %s %s, check says %s %s", i, d.Measure, verdictOf(d), c.Measure, verdictOf(c))
		}
		if d.Measure == "multi_session_executions" {
			seen = true
			if d.Verdict != gate.VerdictNotMeasurable || d.Why == "" {
				t.Errorf("multi_session_executions: %s, want not measurable with its reason", verdictOf(d))
			}
		}
	}
	if !seen {
		t.Error("diff hides multi_session_executions")
	}
}

// TestRulesWarnsOfAHitRateHeldAgainstTheFloor: `mcptrace rules` accepts a
// rule comparing the hit rate with the cold-start floor (exit 0) but warns
// that it compares a hit rate with a miss rate, and says what to write.
func TestRulesWarnsOfAHitRateHeldAgainstTheFloor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "floor.yaml")
	rule := "rules:\n  - id: at-the-floor\n    scope: dump\n    expect: {of: hit_rate, op: \">=\", than: cold_start_floor}\n"
	if err := os.WriteFile(path, []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "rules", path)
	wantOutcome(t, code, out, errOut, 0, []string{"1 rule(s) OK"}, []string{"warning:", "floor.yaml:4:13", "a miss rate", `"excess_misses <= 0"`})
}
