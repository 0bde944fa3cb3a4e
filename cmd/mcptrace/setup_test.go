package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/gate"
)

// lastLine is the last non-empty line of s: the error the CLI printed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// TestAnalyzeCheckAndDiffResolveTheirSetupAlike: the three commands resolve
// flags, the configuration file and the profile through one function, so
// the same mistake is the same usage error (exit 2) whichever runs it.
func TestAnalyzeCheckAndDiffResolveTheirSetupAlike(t *testing.T) {
	dir := t.TempDir()
	badRule := filepath.Join(dir, "bad-rule.yaml")
	if err := os.WriteFile(badRule, []byte("rules:\n  - id: r\n    expect: {of: nope, op: \"==\", than: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	badTol := filepath.Join(dir, "bad-tolerance.yaml")
	if err := os.WriteFile(badTol, []byte("regressions:\n  hit_rate_drop: 7\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := traces + "pooled.otlp.json"
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"profile", []string{"--profile", "nope"}, "--profile: "},
		{"idle ttl", []string{"--idle-ttl", "-1s"}, "--idle-ttl -1s: want a positive duration"},
		{"execution root", []string{"--execution-root", "{name: [}"}, "--execution-root: "},
		{"input format", []string{"--input-format", "csv"}, "--input-format: "},
		{"missing config", []string{"--config", filepath.Join(dir, "none.yaml")}, "--config: read config: "},
		{"a rule's unknown measure", []string{"--config", badRule}, `unknown measure "nope"`},
		{"a tolerance out of range", []string{"--config", badTol}, "hit_rate_drop must be between 0 and 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var first string
			for _, cmd := range [][]string{{"analyze"}, {"check"}, {"diff", dump}} {
				args := append(append(append([]string{}, cmd...), c.args...), dump)
				code, _, errOut := runCLI(t, "", args...)
				got := lastLine(errOut)
				if code != 2 || !strings.Contains(got, c.want) {
					t.Errorf("%s: exit %d, %q; want exit 2 and %q", cmd[0], code, got, c.want)
				}
				if first == "" {
					first = got
				} else if got != first {
					t.Errorf("%s says %q, analyze said %q", cmd[0], got, first)
				}
			}
		})
	}
}

// TestToleranceFlagsWinOverTheConfigFile: regressions: of --config loosen
// the gate, and a tolerance flag given on the command line wins over it.
func TestToleranceFlagsWinOverTheConfigFile(t *testing.T) {
	loose := filepath.Join(t.TempDir(), "loose.yaml")
	if err := os.WriteFile(loose, []byte("regressions:\n  hit_rate_drop: 0.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base, cur := traces+"pooled.otlp.json", traces+"per-call-dial.otlp.json"
	hitRateRegressed := func(args ...string) bool {
		t.Helper()
		code, out, errOut := runCLI(t, "", append(append([]string{"diff", "--format", "json"}, args...), base, cur)...)
		if code != 0 {
			t.Fatalf("diff %v: exit %d: %s", args, code, errOut)
		}
		var doc struct{ Regressions []gate.Regression }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		for _, r := range doc.Regressions {
			if r.Measure == "hit_rate" {
				return true
			}
		}
		return false
	}
	if !hitRateRegressed() {
		t.Error("the default tolerance lets the per-call dump's hit rate pass")
	}
	if hitRateRegressed("--config", loose) {
		t.Error("regressions: hit_rate_drop 0.9 of --config is not applied")
	}
	if !hitRateRegressed("--config", loose, "--max-hit-rate-drop", "0.02") {
		t.Error("--max-hit-rate-drop does not win over the config file")
	}
}
