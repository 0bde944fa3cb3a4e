package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRulesConfigMistakesExitTwoNamingTheFile: a configuration file with a
// second YAML document, a non-finite tolerance, or regexes over the file's
// budget is refused by check (exit 2) before any dump is read, the message
// naming the file and the line; the same file without the mistake checks.
func TestRulesConfigMistakesExitTwoNamingTheFile(t *testing.T) {
	const rule = "rules:\n  - id: a\n    scope: trace\n    select: request\n    expect: {of: count, op: \">=\", than: 0}\n"
	var many strings.Builder
	many.WriteString("rules:\n")
	for i := range 24 { // 24 regexes of about 950 instructions each
		fmt.Fprintf(&many, "  - id: regex-%d\n    scope: trace\n    select: {name_regex: \"[a-z.0-9]{0,%d}z\"}\n    expect: {of: count, op: \">=\", than: 0}\n", i, 470+i)
	}
	dump := filepath.Join("..", "..", "testdata", "traces", "pooled.otlp.jsonl")
	for _, tc := range []struct {
		name, doc, want string
		code            int
	}{
		{"one document", rule, "", 0},
		{"two documents", rule + "---\nregressions: {hit_rate_drop: 0.5}\n", ":6:1: several YAML documents in one configuration file", 2},
		{"hit_rate_drop .nan", rule + "regressions:\n  hit_rate_drop: .nan\n", ":7:18: hit_rate_drop must be a finite number, not .nan", 2},
		{"24 regexes over the file's budget", many.String(), `:20:13: regex budget of the file exceeded: rule "regex-4"`, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gate.yaml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			code, _, errOut := runCLI(t, "", "check", "--config", path, dump)
			if tc.want == "" {
				if code == 2 {
					t.Fatalf("exit 2: %s", errOut)
				}
				return
			}
			if code != tc.code || !strings.Contains(errOut, path+tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and %q", code, errOut, tc.code, path+tc.want)
			}
		})
	}
}

// TestCheckAgainstABaselineOfAnotherConfigIsIncomplete: a baseline made
// under a configuration whose reads measure has another name leaves that
// measure uncompared, so the check is incomplete (exit 3), naming the
// baseline's measures and the current configuration's; under the same
// configuration the check passes.
func TestCheckAgainstABaselineOfAnotherConfigIsIncomplete(t *testing.T) {
	cfg := filepath.Join("..", "..", "testdata", "rules", "cold-init.yaml")
	dump := filepath.Join("..", "..", "testdata", "traces", "cold-init-one-read.otlp.jsonl")
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	renamed := filepath.Join(t.TempDir(), "renamed.yaml")
	if err := os.WriteFile(renamed, []byte(strings.ReplaceAll(string(orig), "org_reads_per_cold_init", "org_reads")), 0o644); err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "base.json")
	if code, _, errOut := runCLI(t, "", "analyze", "--format", "json", "--config", cfg, "-o", base, dump); code != 0 {
		t.Fatalf("analyze: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name, config, want string
		code               int
	}{
		{"the same configuration", cfg, "", 0},
		{"a measure renamed", renamed, `check incomplete: the baseline was made under another configuration: its reads measures are ["org_reads_per_cold_init"], the current configuration's are ["org_reads"]`, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", "check", "--config", tc.config, "--baseline", base, dump)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d saying %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}
