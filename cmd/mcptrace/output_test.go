package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/internal/demo"
)

// TestOutputFlagWritesEveryFormatOfEveryReportCommand pins the output
// convention: -o FILE takes what standard output would have held, byte for
// byte, in every format of analyze, check and diff, and leaves standard
// output empty; the exit status is the same either way.
func TestOutputFlagWritesEveryFormatOfEveryReportCommand(t *testing.T) {
	pass, fail := traces+"pooled.otlp.jsonl", traces+"per-call-dial.otlp.jsonl"
	for _, tc := range []struct {
		cmd     string
		formats []string
		args    []string
		code    int
	}{
		{"analyze", []string{"table", "json", "markdown"}, []string{fail}, 0},
		{"check", []string{"table", "json", "markdown"}, []string{fail}, 1},
		{"check", []string{"json"}, []string{pass}, 0},
		{"diff", []string{"table", "json", "markdown"}, []string{pass, fail}, 0},
	} {
		for _, format := range tc.formats {
			name := tc.cmd + " --format " + format + " " + filepath.Base(tc.args[len(tc.args)-1])
			t.Run(name, func(t *testing.T) {
				args := append([]string{tc.cmd, "--format", format}, tc.args...)
				code, want, errOut := runCLI(t, "", args...)
				if code != tc.code || want == "" {
					t.Fatalf("without -o: exit %d (want %d), stdout %d bytes: %s", code, tc.code, len(want), errOut)
				}
				file := filepath.Join(t.TempDir(), "report")
				code, out, errOut := runCLI(t, "", append([]string{tc.cmd, "-o", file, "--format", format}, tc.args...)...)
				got, err := os.ReadFile(file)
				if err != nil || code != tc.code || out != "" {
					t.Fatalf("-o %s: exit %d (want %d), stdout %.200q, read: %v; stderr %s", file, code, tc.code, out, err, errOut)
				}
				if string(got) != want {
					t.Errorf("-o file differs from standard output:\n%s\nwant:\n%s", got, want)
				}
			})
		}
	}
	// The HTML page too, by its long name; and - is standard output.
	file := filepath.Join(t.TempDir(), "report.html")
	if code, out, errOut := runCLI(t, "", "analyze", "--format", "html", "--output", file, pass); code != 0 || out != "" {
		t.Fatalf("analyze --format html --output: exit %d, stdout %d bytes: %s", code, len(out), errOut)
	}
	if page, _ := os.ReadFile(file); !bytes.HasPrefix(bytes.ToLower(page), []byte("<!doctype html")) {
		t.Errorf("--output %s holds no HTML page: %.80q", file, page)
	}
	if code, out, _ := runCLI(t, "", "diff", "-o", "-", "--format", "json", pass, fail); code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("diff -o -: exit %d, stdout not the JSON diff: %.80q", code, out)
	}
	// An unwritable -o is a usage error before any input is read.
	for _, cmd := range [][]string{{"analyze", "no-such-dump"}, {"check", "no-such-dump"}, {"diff", "no-such-base", "no-such-dump"}} {
		args := append([]string{cmd[0], "-o", filepath.Join(t.TempDir(), "missing", "report")}, cmd[1:]...)
		if code, _, errOut := runCLI(t, "", args...); code != 2 || !strings.Contains(errOut, "-o/--output") || strings.Contains(errOut, "no-such") {
			t.Errorf("%v: exit %d, stderr %q; want 2 naming -o/--output, before the inputs", args, code, errOut)
		}
	}
}

// TestQuietPrintsNothingButTheError pins --quiet: no report, no warning,
// no notice; the exit status carries the outcome, a failure still says
// why on stderr, and files asked for by name are still written.
func TestQuietPrintsNothingButTheError(t *testing.T) {
	pass, fail := traces+"pooled.otlp.jsonl", traces+"per-call-dial.otlp.jsonl"
	junk := t.TempDir()
	if err := os.WriteFile(filepath.Join(junk, "notes.txt"), []byte("not a dump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "check.xml")
	for _, tc := range []struct {
		args       []string
		code       int
		wantStderr string // "" for none at all
	}{
		{[]string{"analyze", "-q", pass}, 0, ""},
		{[]string{"analyze", "--quiet", "--format", "json", pass}, 0, ""},
		{[]string{"check", "-q", pass}, 0, ""},
		{[]string{"check", "-q", "--junit", junit, fail}, 1, "mcptrace: check fail"},
		{[]string{"diff", "-q", pass, fail}, 0, ""},
		{[]string{"analyze", "-q", junk}, 3, "mcptrace: no spans in the 1 input(s) read"},
	} {
		code, out, errOut := runCLI(t, "", tc.args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		switch {
		case code != tc.code || out != "":
			t.Errorf("%v: exit %d (want %d), stdout %.200q", tc.args, code, tc.code, out)
		case tc.wantStderr == "" && errOut != "":
			t.Errorf("%v: stderr %q, want nothing", tc.args, errOut)
		case tc.wantStderr != "" && (len(lines) != 1 || !strings.HasPrefix(lines[0], tc.wantStderr)):
			t.Errorf("%v: stderr %q, want the one line %q…", tc.args, errOut, tc.wantStderr)
		}
	}
	if data, err := os.ReadFile(junit); err != nil || !bytes.Contains(data, []byte("<testsuite")) {
		t.Errorf("check -q --junit wrote no JUnit file: %v %.80q", err, data)
	}
}

// TestAnalyzeOfInputsWithoutASpanExits3 pins that inputs that held no span
// at all (only files that are not dumps, a request with no resource spans)
// exit 3 as check does, the report still written; one span is enough
// to measure, so a real dump exits 0.
func TestAnalyzeOfInputsWithoutASpanExits3(t *testing.T) {
	junk := t.TempDir()
	for name, body := range map[string]string{"a.txt": "hello\n", "b.json": `{"x": 1}`} {
		if err := os.WriteFile(filepath.Join(junk, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.otlp.json")
	if err := os.WriteFile(empty, []byte(`{"resourceSpans": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		code int
	}{
		{"a directory of junk files", junk, 3},
		{"a request without resource spans", empty, 3},
		{"a real dump", traces + "pooled.otlp.jsonl", 0},
	} {
		for _, cmd := range []string{"analyze", "check"} {
			code, out, errOut := runCLI(t, "", cmd, "--format", "json", tc.path)
			if code != tc.code || !json.Valid([]byte(out)) {
				t.Errorf("%s of %s: exit %d (want %d), stdout valid JSON %v; stderr %s", cmd, tc.name, code, tc.code, json.Valid([]byte(out)), errOut)
			}
		}
	}
}

// TestEnumFlagsCompleteExactlyWhatTheyAccept pins completion of flag
// values: every enum flag completes, through cobra's own __complete, the
// values its validation accepts, each of which it then accepts, and a
// value outside them is refused naming every one (demo --mode's error
// includes live).
func TestEnumFlagsCompleteExactlyWhatTheyAccept(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		enum enumFlag
	}{
		{[]string{"analyze"}, analyzeFormat},
		{[]string{"analyze"}, inputFormatEnum},
		{[]string{"analyze"}, profileEnum},
		{[]string{"check"}, checkFormat},
		{[]string{"check"}, profileEnum},
		{[]string{"diff"}, diffFormat},
		{[]string{"demo"}, demoFormat},
		{[]string{"demo"}, demoMode},
		{[]string{"demo"}, otlpProtocol},
		{[]string{"fixture", "serve"}, enumFlag{"scenario", fixtures.ScenarioNames()}},
	} {
		name := strings.Join(tc.cmd, " ") + " --" + tc.enum.name
		args := append(append([]string{cobra.ShellCompRequestCmd}, tc.cmd...), "--"+tc.enum.name, "")
		_, out, _ := runCLI(t, "", args...)
		got := strings.Split(strings.TrimSpace(out), "\n")
		got = got[:len(got)-1] // the directive line
		if !slices.Equal(got, tc.enum.values) {
			t.Errorf("%s completes %q, want %q", name, got, tc.enum.values)
		}
		if len(got) < 2 {
			t.Errorf("%s completes %q: no values", name, got)
		}
		if tc.cmd[0] == "demo" {
			continue // running each mode is the demo tests' job; the refusal below is checked
		}
		for _, v := range got {
			if err := acceptsValue(tc.cmd, tc.enum.name, v); err != "" {
				t.Errorf("%s completes %q, which it refuses: %s", name, v, err)
			}
		}
	}
	code, _, errOut := runCLI(t, "", "demo", "--mode", "sideways")
	if code != 2 || !strings.Contains(errOut, "want both, pooled, per-call, seeded or live") {
		t.Errorf("demo --mode sideways: exit %d, %q; want exit 2 naming every mode, live included", code, errOut)
	}
	if !slices.Contains(demoMode.values, modeLive) || !slices.Equal(demoMode.values[:len(demo.ModeNames)], demo.ModeNames) {
		t.Errorf("demo --mode values %q: want internal/demo's modes and live", demoMode.values)
	}
}

// acceptsValue runs cmd with --flag value as far as its flag checks go and
// returns the usage error naming the flag, or "".
func acceptsValue(cmd []string, flag, value string) string {
	args := append(append([]string{}, cmd...), "--"+flag, value)
	switch cmd[0] {
	case "analyze", "check":
		args = append(args, traces+"pooled.otlp.jsonl")
	case "diff":
		args = append(args, traces+"pooled.otlp.jsonl", traces+"pooled.otlp.jsonl")
	case "fixture":
		// serve would run until interrupted: the scenario lookup is the check.
		return ""
	}
	root := newRootCmd()
	root.SetArgs(args)
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	if err := root.Execute(); err != nil && strings.Contains(err.Error(), "--"+flag) {
		return err.Error()
	}
	return ""
}

// TestEveryEnumFlagIsValidatedFromItsList pins the other half: a value
// outside an enum is refused by every command that has it, naming the flag
// and every accepted value.
func TestEveryEnumFlagIsValidatedFromItsList(t *testing.T) {
	dump := traces + "pooled.otlp.jsonl"
	for _, tc := range []struct {
		args []string
		enum enumFlag
	}{
		{[]string{"analyze", "--format", "yaml", dump}, analyzeFormat},
		{[]string{"check", "--format", "html", dump}, checkFormat},
		{[]string{"diff", "--format", "html", dump, dump}, diffFormat},
		{[]string{"demo", "--format", "yaml"}, demoFormat},
		{[]string{"demo", "--otlp-protocol", "udp", "--otlp-endpoint", "http://127.0.0.1:1"}, otlpProtocol},
	} {
		code, _, errOut := runCLI(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, "--"+tc.enum.name) || !strings.Contains(errOut, tc.enum.list()) {
			t.Errorf("%v: exit %d, %q; want exit 2 listing %s", tc.args, code, errOut, tc.enum.list())
		}
	}
}

// TestDeprecatedSpellingsStillWorkAndSaySo pins the renames: demo's dump is
// --dump and dashboards' directory --dir, since -o names a report file
// everywhere else; the old -o and --out still work, with a notice on
// stderr that leaves a JSON report on stdout intact.
func TestDeprecatedSpellingsStillWorkAndSaySo(t *testing.T) {
	for _, spelling := range []string{"-o", "--out", "--dump"} {
		dump := filepath.Join(t.TempDir(), "demo.jsonl")
		code, out, errOut := runCLI(t, "", "demo", "--mode", "pooled", "--scopes", "1", "--executions", "1", "--format", "json", spelling, dump)
		deprecated := strings.Contains(errOut, "-o/--out is deprecated and will be removed: use --dump FILE")
		if _, err := os.Stat(dump); code != 0 || err != nil || !json.Valid([]byte(out)) || deprecated != (spelling != "--dump") {
			t.Errorf("demo %s FILE: exit %d, dump %v, JSON %v, deprecation notice %v: %s", spelling, code, err, json.Valid([]byte(out)), deprecated, errOut)
		}
	}
	for _, spelling := range []string{"-o", "--out", "--dir"} {
		dir := t.TempDir()
		code, _, errOut := runCLI(t, "", "dashboards", spelling, dir)
		deprecated := strings.Contains(errOut, "-o/--out is deprecated and will be removed: use --dir DIR")
		if _, err := os.Stat(filepath.Join(dir, "mcp-pool.json")); code != 0 || err != nil || deprecated != (spelling != "--dir") {
			t.Errorf("dashboards %s DIR: exit %d, wrote %v, deprecation notice %v: %s", spelling, code, err, deprecated, errOut)
		}
	}
	// The new names are the ones help shows.
	for _, c := range [][]string{{"demo", "--dump"}, {"dashboards", "--dir"}} {
		_, out, _ := runCLI(t, "", c[0], "--help")
		flags := out[strings.Index(out, "Flags:"):]
		if !strings.Contains(flags, c[1]) || strings.Contains(flags, "--out") {
			t.Errorf("%s --help lists --out or lacks %s:\n%s", c[0], c[1], flags)
		}
	}
}

// TestGitignoreCoversWhatTheDemoWrites pins that a demo run at the
// clone's root (the README's first step) leaves nothing for git to show:
// each mode's dump and its HTML report are ignored.
func TestGitignoreCoversWhatTheDemoWrites(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	modes, err := demo.ParseMode("both")
	if err != nil {
		t.Fatal(err)
	}
	modes = append(modes, demo.ModeSeeded)
	var paths []string
	for _, d := range planDemoDumps(demoFlags{dir: "."}, modes) {
		paths = append(paths, filepath.Base(d.Path), filepath.Base(demoHTMLPath(d.Path)))
	}
	for _, p := range paths {
		cmd := exec.Command("git", "check-ignore", "-q", "--no-index", p)
		cmd.Dir = repoRoot(t)
		if err := cmd.Run(); err != nil {
			t.Errorf("the demo writes %s at the root, which .gitignore does not cover (git check-ignore: %v)", p, err)
		}
	}
}

// TestGitHubAnnotationsNameTheFileTheyAreAbout pins file= on check's
// annotations: a rule of --config points at the config file, a built-in
// rule at the dump, a regression at the baseline; --quiet keeps them
// (the environment asked for them) and drops the rest of stderr.
func TestGitHubAnnotationsNameTheFileTheyAreAbout(t *testing.T) {
	t.Setenv("GITHUB_ACTIONS", "true")
	t.Setenv("GITHUB_STEP_SUMMARY", "")
	config, dump, baseline := "../../testdata/rules/pool.yaml", traces+"per-call-dial.otlp.jsonl", traces+"pooled.otlp.jsonl"
	for _, quiet := range []bool{false, true} {
		args := []string{"check", "--config", config, "--builtin", "--baseline", baseline, dump}
		if quiet {
			args = append([]string{"check", "-q"}, args[1:]...)
		}
		code, _, errOut := runCLI(t, "", args...)
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1: %s", args, code, errOut)
		}
		for _, want := range []string{
			"::error file=" + config + ",title=mcptrace pool-at-its-floor::",
			"::error file=" + dump + ",title=mcptrace one-session-per-execution::",
			"::error file=" + baseline + ",title=mcptrace regression hit_rate::",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("quiet %v: stderr lacks %q:\n%s", quiet, want, errOut)
			}
		}
		for _, line := range strings.Split(strings.TrimSpace(errOut), "\n") {
			if strings.HasPrefix(line, "::") && !strings.Contains(line, " file=") {
				t.Errorf("quiet %v: an annotation names no file: %q", quiet, line)
			}
			if quiet && !strings.HasPrefix(line, "::") && !strings.HasPrefix(line, "mcptrace: check fail") {
				t.Errorf("--quiet let through %q", line)
			}
		}
	}
}
