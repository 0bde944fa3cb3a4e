package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcptrace/mcptrace/analyze"
	"github.com/mcptrace/mcptrace/analyze/backend"
	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/internal/testbound"
)

// TestVersionFlagAndCommandAgree: both forms print the build's version.
func TestVersionFlagAndCommandAgree(t *testing.T) {
	want := "mcptrace " + version() + "\n"
	for _, args := range [][]string{{"--version"}, {"version"}} {
		code, out, errOut := runCLI(t, "", args...)
		if code != 0 || out != want {
			t.Errorf("mcptrace %v: exit %d, stdout %q (stderr %q), want %q", args, code, out, errOut, want)
		}
	}
	if code, _, _ := runCLI(t, "", "version", "extra"); code != 2 {
		t.Errorf("version extra: exit %d, want 2", code)
	}
}

// TestUsageErrorsPointAtHelpAndExit2 pins the ending of a flag mistake on
// every command.
func TestUsageErrorsPointAtHelpAndExit2(t *testing.T) {
	for _, cmd := range [][]string{{"analyze"}, {"check"}, {"diff"}, {"rules"}, {"demo"}, {"fixture", "list"}, {"version"}} {
		args := append(append([]string{}, cmd...), "--no-such-flag")
		code, _, errOut := runCLI(t, "", args...)
		want := "see `mcptrace " + strings.Join(cmd, " ") + " --help`"
		if code != 2 || !strings.Contains(errOut, "unknown flag: --no-such-flag") || !strings.HasSuffix(strings.TrimSpace(errOut), want) {
			t.Errorf("mcptrace %v: exit %d, stderr %q, want exit 2 ending %q", args, code, errOut, want)
		}
	}
}

// TestRulesReportsEveryMistakeWithItsPlace: one run names all of them.
func TestRulesReportsEveryMistakeWithItsPlace(t *testing.T) {
	path := writeRules(t, "rules:\n  - id: a\n    scope: dump\n    expect: {of: hit_ratio, op: \"==\", than: 1}\n  - id: b\n    select: x\n    expect: {of: count, op: \"=<\", than: 1}\n")
	code, _, errOut := runCLI(t, "", "rules", path)
	if code != 2 || !strings.Contains(errOut, path+":4:18: unknown measure") || !strings.Contains(errOut, path+":7:29: unknown operator") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and both mistakes with file:line:column", code, errOut)
	}
}

// TestBuiltinRulesTextNamesNoInternalDocuments: user-facing text speaks for
// itself.
func TestBuiltinRulesTextNamesNoInternalDocuments(t *testing.T) {
	_, out, _ := runCLI(t, "", "rules", "--builtin")
	for _, bad := range []string{"seed", "DESIGN", "../shared"} {
		if strings.Contains(out, bad) {
			t.Errorf("rules --builtin mentions %q:\n%s", bad, out)
		}
	}
}

// TestDiffMarkdownAndJSONSchema pins diff's formats.
func TestDiffMarkdownAndJSONSchema(t *testing.T) {
	code, out, errOut := runCLI(t, "", "diff", "--format", "markdown", traces+"pooled.otlp.jsonl", traces+"per-call-dial.otlp.jsonl")
	if code != 0 || !strings.Contains(out, "## mcptrace diff:") || !strings.Contains(out, "| `hit_rate` | 0.8333 | 0 | -0.8333 | ❌ REGRESSION (p=0.015, n=6 vs 6 acquires) |") {
		t.Errorf("markdown: exit %d (%s):\n%s", code, errOut, out)
	}
	code, out, errOut = runCLI(t, "", "diff", "--format", "json", traces+"pooled.otlp.jsonl", traces+"pooled.otlp.jsonl")
	var doc struct {
		Schema      string            `json:"schema"`
		Regressions []json.RawMessage `json:"regressions"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || doc.Schema != gate.DiffSchema || doc.Regressions == nil {
		t.Errorf("json: exit %d (%s), schema %q, regressions %v: %v", code, errOut, doc.Schema, doc.Regressions, err)
	}
}

// TestGlobMatchingNonDumpsSkipsThemLikeADirectoryWalk: the glob also matches
// the golden reports next to the dumps.
func TestGlobMatchingNonDumpsSkipsThemLikeADirectoryWalk(t *testing.T) {
	code, out, errOut := runCLI(t, "", "analyze", "--format", "json", traces+"pooled.otlp.json*")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "pooled.otlp.json.golden.json: skipped: not a trace dump") {
		t.Errorf("stderr lacks the skip warning:\n%s", errOut)
	}
	if r := decodeReport(t, out); r.Spans == 0 {
		t.Error("the dumps the glob matched were not read")
	}
}

// TestProgressShowsPercentOrBytesOnlyOnATerminal pins the progress line:
// a percentage for a file, a byte count for stdin, nothing off a terminal.
func TestProgressShowsPercentOrBytesOnlyOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	for _, paths := range [][]string{{"-"}, {traces + "pooled.otlp.jsonl"}} {
		if p := newProgressIf(&buf, ingest.Files(paths), false); p.on {
			t.Errorf("progress on off a terminal for %v", paths)
		}
	}
	if p := newProgressIf(&buf, ingest.Files{"-"}, true); !p.on {
		t.Error("no progress for stdin on a terminal")
	}
	code, _, errOut := runCLI(t, "", "check", traces+"pooled.otlp.jsonl")
	if code != 0 || strings.Contains(errOut, "reading") {
		t.Errorf("check wrote progress to a non-terminal stderr: %q", errOut)
	}

	// Read a real file and a real stdin and look at the line each gives.
	lines := map[string]string{}
	for _, c := range []struct {
		name  string
		paths []string
		stdin string
	}{{"file", []string{traces + "pooled.otlp.jsonl"}, ""}, {"stdin", []string{"-"}, "pooled"}} {
		opts := analyze.LoadOptions{Progress: func(in *ingest.Input, n int) { lines[c.name] = progressLine(in, n) }}
		if c.stdin != "" {
			data, err := os.ReadFile(traces + "pooled.otlp.jsonl")
			if err != nil {
				t.Fatal(err)
			}
			opts.Read.Stdin = bytes.NewReader(data)
		}
		if _, _, err := analyze.Load(t.Context(), c.paths, opts); err != nil {
			t.Fatal(err)
		}
	}
	if l := lines["file"]; !strings.HasPrefix(l, "reading pooled.otlp.jsonl: ") || !strings.HasSuffix(l, "%)") {
		t.Errorf("file progress = %q, want spans and a percentage", l)
	}
	if l := lines["stdin"]; !strings.HasPrefix(l, "reading -: ") || !strings.HasSuffix(l, " KiB read") {
		t.Errorf("stdin progress = %q, want spans and the bytes read", l)
	}

	// A backend's query: where, and what was fetched so far.
	jin := &ingest.Input{Path: "http://127.0.0.1:16686", Backend: &ingest.BackendRead{Backend: "jaeger", URL: "http://127.0.0.1:16686", Traces: 340, Pages: 12}}
	if l, want := progressLine(jin, 1_200_000), "reading jaeger http://127.0.0.1:16686: 1.2M spans, 340 traces, 12 pages"; l != want {
		t.Errorf("backend progress = %q, want %q", l, want)
	}
	if p := newProgressIf(&buf, &backend.Query{}, true); !p.on {
		t.Error("no progress for a backend on a terminal")
	}

	// A second read (the speculative run gave up) says so, at once.
	buf.Reset()
	p := newProgressIf(&buf, ingest.Files{"-"}, true)
	in := &ingest.Input{Path: "dump.jsonl"}
	p.update(in, 1000)
	p.reread(nil)
	p.update(in, 10)
	if l := buf.String(); !strings.Contains(l, "second read, holding every trace") || !strings.HasSuffix(l, "reading dump.jsonl: 10 spans") {
		t.Errorf("progress after a reread = %q, want the second read named, with its own count", l)
	}
}

// TestREADMEFixtureRecipeReturns runs the README's background recipe with
// the built binary under bash: it must hand over the URL and stop on kill,
// where the old `url=$(mcptrace fixture serve | head -n1)` never returned.
func TestREADMEFixtureRecipeReturns(t *testing.T) {
	bound, stopBound := testbound.Context(t)
	defer stopBound()
	bin := builtBinary(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	script := `set -eu
mcptrace fixture serve --url-file fixture.url & pid=$!
until [ -s fixture.url ]; do sleep 0.1; done; url=$(cat fixture.url)
curl_ok=$(printf '%s' "$url")
kill $pid; wait $pid || true
printf '%s\n' "$curl_ok"
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a hang is ended with its background server
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("recipe failed: %v\n%s", err, errb.String())
		}
	case <-bound.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		t.Fatalf("the recipe did not return: a hang\n%s", errb.String())
	}
	url := strings.TrimSpace(out.String())
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Errorf("recipe printed %q, want the fixture's MCP URL", url)
	}
	if _, err := os.Stat(filepath.Join(dir, "fixture.url")); !os.IsNotExist(err) {
		t.Errorf("the URL file outlived the server: %v", err)
	}
}
