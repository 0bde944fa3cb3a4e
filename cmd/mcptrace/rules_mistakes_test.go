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
