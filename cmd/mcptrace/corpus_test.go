package main

import (
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
)

// corpusDumps is the third-party corpus (docs/corpus.md): dumps written by
// the npm MCP instrumentations, each with a golden from the server's
// ledgers. The expectations are the goldens'.
const corpusDumps = "../../testdata/traces/corpus/"

// corpusGoldenCLI is the part of a corpus golden the CLI tests read.
type corpusGoldenCLI struct {
	Structure struct {
		SpanNames map[string]int `json:"span_names"`
	} `json:"structure"`
	Expect struct {
		Recognised           bool   `json:"recognised"`
		ExecutionsMeasurable bool   `json:"executions_measurable"`
		WhyNot               string `json:"why_not"`
	} `json:"expect"`
}

// corpusGoldensCLI returns every corpus golden by its dump's path.
func corpusGoldensCLI(t *testing.T) map[string]corpusGoldenCLI {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDumps, "*", "*.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no goldens under %s: regenerate with scripts/corpus.sh", corpusDumps)
	}
	out := map[string]corpusGoldenCLI{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var g corpusGoldenCLI
		if err := json.Unmarshal(data, &g); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[strings.TrimSuffix(p, ".golden.json")+".jsonl"] = g
	}
	return out
}

// topNames returns up to n span names, most frequent first (ties by name).
func topNames(counts map[string]int, n int) []string {
	names := make([]string, 0, len(counts))
	for k := range counts {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), cmp.Compare(a, b)) })
	return names[:min(n, len(names))]
}

// TestCheckOnAnUnrecognisedCorpusDumpExits3NamingItsSpans: a dump whose
// writer left no MCP span (OpenInference only propagates context) is
// incomplete, exit 3, and the message names the most frequent span names
// seen (up to ten) and the flag or config that would read them, never a
// silent empty report.
func TestCheckOnAnUnrecognisedCorpusDumpExits3NamingItsSpans(t *testing.T) {
	n := 0
	for dump, g := range corpusGoldensCLI(t) {
		if g.Expect.Recognised {
			continue
		}
		n++
		t.Run(filepath.Base(filepath.Dir(dump))+"/"+filepath.Base(dump), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "check", dump)
			if code != 3 {
				t.Errorf("check exit %d, want 3 (nothing recognised)\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			all := stdout + stderr
			for _, name := range topNames(g.Structure.SpanNames, 10) {
				if !strings.Contains(all, name) {
					t.Errorf("the output does not name span %q, one of the ten most frequent seen; stderr:\n%s", name, stderr)
				}
			}
			if !strings.Contains(all, "--profile") && !strings.Contains(all, "vocabulary") {
				t.Errorf("the output names neither --profile nor a vocabulary config that would read the spans; stderr:\n%s", stderr)
			}
		})
	}
	if n == 0 {
		t.Fatal("no corpus golden expects an unrecognised dump: the OpenInference dumps are missing")
	}
}

// TestCheckNeverPassesSessionRulesOnUnmeasurableCorpusExecutions: where
// the spans cannot tie calls to their executions (a server-side writer's
// root spans, a session span that outlives its execution), the session
// rules are not applicable, with the reason, never a pass on zero; and
// check exits 0 only when another error-severity rule applied and held.
func TestCheckNeverPassesSessionRulesOnUnmeasurableCorpusExecutions(t *testing.T) {
	sessionRules := []string{rulefmt.RuleOneSessionPerExecution, rulefmt.RuleServerKeptSessions}
	n := 0
	for dump, g := range corpusGoldensCLI(t) {
		if g.Expect.ExecutionsMeasurable {
			continue
		}
		n++
		t.Run(filepath.Base(filepath.Dir(dump))+"/"+filepath.Base(dump), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", "check", "--format", "json", dump)
			var rep struct {
				Rules []struct {
					ID       string `json:"id"`
					Status   string `json:"status"`
					Severity string `json:"severity"`
					Found    string `json:"found"`
				} `json:"rules"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("check --format json: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
			}
			seen, applied := 0, 0
			for _, r := range rep.Rules {
				if !slices.Contains(sessionRules, r.ID) {
					if r.Severity == "error" && r.Status != "not_applicable" {
						applied++
					}
					continue
				}
				seen++
				if !g.Expect.Recognised && r.Status == "incomplete" {
					continue // nothing recognised: nothing to judge, said as such
				}
				if r.Status != "not_applicable" || !strings.Contains(r.Found, "executions not measurable") {
					t.Errorf("rule %s: %s %q, want not_applicable because executions are not measurable: %s", r.ID, r.Status, r.Found, g.Expect.WhyNot)
				}
			}
			if code == 0 && (applied == 0 || !g.Expect.Recognised) {
				t.Errorf("check exit 0 with no error-severity rule applied (%s)", g.Expect.WhyNot)
			}
			if seen != len(sessionRules) {
				t.Errorf("the report holds %d of the session rules %v", seen, sessionRules)
			}
		})
	}
	if n == 0 {
		t.Fatal("no corpus golden expects unmeasurable executions")
	}
}
