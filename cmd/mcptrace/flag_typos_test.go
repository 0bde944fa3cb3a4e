package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMistypedFlagsAreSuggested pins what a typo in a flag's name gets:
// exit 2 naming the nearest flag of that command (the suggestion rules
// and configurations get), and no guess when nothing is near.
func TestMistypedFlagsAreSuggested(t *testing.T) {
	dump := traces + "pooled.otlp.jsonl"
	for _, tc := range []struct {
		args []string
		want string // "" when no flag is near
	}{
		{[]string{"analyze", "--fromat", "json", dump}, "--format"},
		{[]string{"check", "--basline", "b.json", dump}, "--baseline"},
		{[]string{"whatif", "--fromat", "json", dump}, "--format"},
		{[]string{"demo", "--mdoe", "pooled"}, "--mode"},
		{[]string{"diff", "--outptu", "x", dump, dump}, "--output"},
		{[]string{"analyze", "--zzzzzz", dump}, ""},
	} {
		t.Run(strings.Join(tc.args[:2], " "), func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != 2 || !strings.Contains(errOut, "unknown flag: "+tc.args[1]) {
				t.Fatalf("exit %d, stderr %q; want exit 2 naming %s", code, errOut, tc.args[1])
			}
			if got := strings.Contains(errOut, "did you mean"); got != (tc.want != "") {
				t.Fatalf("stderr %q: suggestion %v, want %q", errOut, got, tc.want)
			}
			if tc.want != "" && !strings.Contains(errOut, "(did you mean "+tc.want+"?)") {
				t.Errorf("stderr %q, want it to suggest %s", errOut, tc.want)
			}
		})
	}
}

// TestEnumFlagValuesIgnoreCase pins that a value of a fixed list is taken
// in any case and read as the list spells it (--format JSON writes JSON),
// and that a mistyped one names the nearest value.
func TestEnumFlagValuesIgnoreCase(t *testing.T) {
	dump := traces + "pooled.otlp.jsonl"
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string // in stdout when code is 0, in stderr otherwise
	}{
		{"analyze json", []string{"analyze", "--format", "JSON", dump}, 0, `"schema": "mcptrace.analysis/v2"`},
		{"whatif json", []string{"whatif", "--format", "Json", dump}, 0, `"schema": "mcptrace.whatif/v1"`},
		{"diff markdown", []string{"diff", "--format", "MarkDown", dump, dump}, 0, "## mcptrace diff"},
		{"profile", []string{"analyze", "--format", "json", "--profile", "AUTO", dump}, 0, `"schema"`},
		{"a typo", []string{"analyze", "--format", "jsno", dump}, 2, `--format "jsno" (did you mean json?)`},
		{"a profile typo", []string{"analyze", "--profile", "atuo", dump}, 2, `(did you mean "auto"?)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", tc.args...)
			where := out
			if tc.code != 0 {
				where = errOut
			}
			if code != tc.code || !strings.Contains(where, tc.out) {
				t.Fatalf("exit %d (want %d); stdout %.200q; stderr %q; want %q", code, tc.code, out, errOut, tc.out)
			}
		})
	}
}

// TestABaselineThatCannotBeReadNamesTheFlag pins that every error of the
// baseline names --baseline, and that an HTML report given for a dump or a
// baseline is called one, with what to give instead.
func TestABaselineThatCannotBeReadNamesTheFlag(t *testing.T) {
	dump := traces + "pooled.otlp.jsonl"
	page := t.TempDir() + "/report.html"
	if code, _, errOut := runCLI(t, "", "analyze", "--format", "html", "-o", page, dump); code != 0 {
		t.Fatalf("analyze --format html: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing", []string{"check", "--baseline", "no-such.json", dump}, []string{"--baseline: no-such.json"}},
		{"an HTML report", []string{"check", "--baseline", page, dump}, []string{"--baseline: ", "an HTML page: give the dump it was drawn from"}},
		{"an HTML report to diff", []string{"diff", page, dump}, []string{"an HTML page: give the dump it was drawn from"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(t, "", tc.args...)
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q, want %q", errOut, w)
				}
			}
		})
	}
}

// TestADirectoryOfNoDumpPrintsNoEmptyTables pins what analyze says of a
// directory holding no trace dump: no table of zeros on stdout, each
// skipped file warned of once, and exit 3; the JSON is still written, for
// a script that reads its inputs.
func TestADirectoryOfNoDumpPrintsNoEmptyTables(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"notes.md", "list.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("# not spans\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runCLI(t, "", "analyze", dir)
	if code != 3 || out != "" {
		t.Fatalf("exit %d, stdout %q; want exit 3 and nothing on stdout", code, out)
	}
	for _, name := range []string{"notes.md", "list.json"} {
		if n := strings.Count(errOut, name); n != 1 {
			t.Errorf("%s named %d times in stderr %q, want once", name, n, errOut)
		}
	}
	if !strings.Contains(errOut, "no spans in the 2 input(s) read") {
		t.Errorf("stderr %q, want the no-spans error", errOut)
	}
	code, out, _ = runCLI(t, "", "analyze", "--format", "json", dir)
	if code != 3 || !strings.Contains(out, `"schema": "mcptrace.analysis/v2"`) {
		t.Errorf("--format json: exit %d, stdout %.100q; want exit 3 and the JSON", code, out)
	}
}
