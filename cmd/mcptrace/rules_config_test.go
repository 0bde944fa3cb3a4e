package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyConfigIsOneErrorEverywhere: an empty configuration file is the
// same mistake (exit 2, the same text naming the file) from every command
// that reads one: check never falls back to the built-in rules in
// silence where rules calls it an error. The Collector connector's rules:
// gives the same text (its TestConfigFromYAML).
func TestEmptyConfigIsOneErrorEverywhere(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, []byte("# rules to come\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join("..", "..", "testdata", "traces", "pooled.otlp.json")
	want := empty + ": empty configuration file: it holds none of measures, rules, regressions, builtin, vocabulary (for the built-in rules, give no configuration file)"
	for _, args := range [][]string{
		{"analyze", "--config", empty, dump},
		{"check", "--config", empty, dump},
		{"diff", "--config", empty, dump, dump},
		{"rules", empty},
		{"rules", "--explain", empty},
	} {
		t.Run(strings.ReplaceAll(strings.Join(args, " "), empty, "EMPTY"), func(t *testing.T) {
			code, _, errOut := runCLI(t, "", args...)
			if code != 2 || !strings.Contains(errOut, want) {
				t.Errorf("mcptrace %v: exit %d, stderr:\n%s\nwant exit 2 and\n%s", args, code, errOut, want)
			}
		})
	}
}

// fiveTyposFile is a file of five typos, one of each kind
// of name (a rule key, a scope, a measure, an operator, a selector key);
// analyze/rulefmt's test of the same mistakes reads it too.
func fiveTyposFile(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../analyze/rulefmt/testdata/five-typos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRulesReportsFiveTyposInOneRun pins that one run of mcptrace rules
// lists all five typos of a file, one line each with file:line:column and
// the nearest valid name.
func TestRulesReportsFiveTyposInOneRun(t *testing.T) {
	path := writeRules(t, fiveTyposFile(t))
	code, _, errOut := runCLI(t, "", "rules", path)
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, errOut)
	}
	for _, w := range []string{
		path + `:3:5: unknown key "severty" (did you mean "severity"?)`,
		path + `:4:12: scope "dmp" (did you mean "dump"?)`,
		path + `:5:18: unknown measure "hit_rat" (did you mean "hit_rate"?)`,
		path + `:5:31: unknown operator "=<" (did you mean "<="?)`,
		path + `:7:14: unknown key "nmae" (did you mean "name"?)`,
	} {
		if !strings.Contains(errOut, w) {
			t.Errorf("stderr lacks %s:\n%s", w, errOut)
		}
	}
	if n := strings.Count(errOut, path+":"); n != 5 {
		t.Errorf("%d mistakes named, want 5:\n%s", n, errOut)
	}
}

// TestCIDocShowsTheFiveTyposAsPrinted: docs/ci.md's example of a file with
// five typos is what mcptrace rules prints for it, byte for byte.
func TestCIDocShowsTheFiveTyposAsPrinted(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(doc), "A file with five typos:\n\n```text\n")
	want, _, closed := strings.Cut(after, "```\n")
	if !ok || !closed {
		t.Fatal("docs/ci.md has no text block after \"A file with five typos:\"")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "mcptrace.yaml"), []byte(fiveTyposFile(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, _, errOut := runCLI(t, "", "rules", "mcptrace.yaml")
	if code != 2 || errOut != want {
		t.Errorf("exit %d, stderr:\n%s\ndocs/ci.md shows:\n%s", code, errOut, want)
	}
}
