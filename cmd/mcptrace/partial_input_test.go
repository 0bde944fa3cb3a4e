package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckIsIncompleteWhenTheInputSaysDataIsMissing pins the exit codes
// of a run over inputs that say data is missing: a Jaeger answer whose
// errors say traces were not loaded, a directory where an empty and a
// NUL-filled file (crash leftovers) lie beside a good dump. check exits 3
// (incomplete) naming the file, analyze warns and marks the report
// partial; the good dump alone passes.
func TestCheckIsIncompleteWhenTheInputSaysDataIsMissing(t *testing.T) {
	dir := t.TempDir()
	jaeger, err := os.ReadFile(traces + "acquire-on-miss.jaeger.json")
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.TrimRight(jaeger, "\n")
	withErrors := append(append([]byte{}, body[:len(body)-1]...), `,"errors":[{"code":500,"msg":"trace not found"},{"code":500,"msg":"trace not found"}]}`...)
	jaegerPath := filepath.Join(dir, "answer.jaeger.json")
	if err := os.WriteFile(jaegerPath, withErrors, 0o644); err != nil {
		t.Fatal(err)
	}
	dumps := filepath.Join(dir, "dumps")
	good, err := os.ReadFile(traces + "acquire-on-miss.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"0-good.otlp.jsonl": good, "1-empty.jsonl": nil, "2-nul.jsonl": make([]byte, 512)} {
		if err := os.MkdirAll(dumps, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dumps, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		path string
		says []string
	}{
		{jaegerPath, []string{`answer.jaeger.json (byte `, `"errors" says 2 trace(s) were not loaded`}},
		{dumps, []string{"1-empty.jsonl: skipped: empty file", "2-nul.jsonl: skipped: not a trace dump: NUL bytes only"}},
	} {
		code, _, stderr := runCLI(t, "", "check", tc.path)
		if code != 3 {
			t.Errorf("check %s: exit %d, want 3 (incomplete); stderr %s", tc.path, code, stderr)
		}
		code, out, stderr2 := runCLI(t, "", "analyze", "--format", "json", tc.path)
		if code != 0 || !strings.Contains(out, `"partial": true`) {
			t.Errorf("analyze %s: exit %d, partial in the report %v; want 0 and a partial report", tc.path, code, strings.Contains(out, `"partial": true`))
		}
		for _, s := range tc.says {
			if !strings.Contains(stderr, s) || !strings.Contains(stderr2, s) {
				t.Errorf("%s: check's and analyze's warnings do not say %q:\n%s\n%s", tc.path, s, stderr, stderr2)
			}
		}
	}
	if code, _, stderr := runCLI(t, "", "check", filepath.Join(dumps, "0-good.otlp.jsonl")); code != 0 {
		t.Errorf("check of the good dump alone: exit %d, %s", code, stderr)
	}
}
