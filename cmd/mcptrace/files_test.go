package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/internal/hostile"
)

// copyInto copies src into dir as name and returns its path.
func copyInto(t *testing.T, src, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every command that writes refuses, before any work, an output that is
// one of its inputs (by the same path, a symbolic link, a hard link, a
// file under an input directory, the --config or the --baseline) or that
// is another output: exit 2 naming both, every input byte for byte as it
// was.
func TestAnOutputThatIsAnInputIsRefusedBeforeAnyWork(t *testing.T) {
	cases := []struct {
		name string
		args func(in, cfg, base, dir string) []string
		want []string // what the message names
	}{
		{"analyze -o IN IN", func(in, _, _, _ string) []string { return []string{"analyze", "-o", in, in} }, []string{"-o/--output", "input"}},
		{"analyze -o through a symbolic link to IN", func(in, _, _, dir string) []string {
			return []string{"analyze", "-o", link(t, in, filepath.Join(dir, "sym")), in}
		}, []string{"-o/--output", "input"}},
		{"analyze -o a hard link to IN", func(in, _, _, dir string) []string {
			return []string{"analyze", "--format", "json", "-o", hardLink(t, in, filepath.Join(dir, "hard")), in}
		}, []string{"-o/--output", "input"}},
		{"analyze -o a file of the input directory", func(in, _, _, dir string) []string { return []string{"analyze", "-o", in, dir} }, []string{"-o/--output", "input"}},
		{"analyze -o a glob's match", func(in, _, _, dir string) []string {
			return []string{"analyze", "-o", in, filepath.Join(dir, "*.jsonl")}
		}, []string{"-o/--output", "input"}},
		{"check -o IN", func(in, _, _, _ string) []string { return []string{"check", "-o", in, in} }, []string{"-o/--output", "input"}},
		{"check --junit IN", func(in, _, _, _ string) []string { return []string{"check", "--junit", in, in} }, []string{"--junit", "input"}},
		{"check --html IN", func(in, _, _, _ string) []string { return []string{"check", "--html", in, in} }, []string{"--html", "input"}},
		{"check --summary IN", func(in, _, _, _ string) []string { return []string{"check", "--summary", in, in} }, []string{"--summary", "input"}},
		{"check --junit the --config", func(in, cfg, _, _ string) []string {
			return []string{"check", "--config", cfg, "--junit", cfg, in}
		}, []string{"--junit", "--config"}},
		{"check --summary the --baseline", func(in, _, base, _ string) []string {
			return []string{"check", "--baseline", base, "--summary", base, in}
		}, []string{"--summary", "--baseline"}},
		{"diff -o its baseline", func(in, _, base, _ string) []string { return []string{"diff", "-o", base, base, in} }, []string{"-o/--output", "input"}},
		{"whatif -o IN IN", func(in, _, _, _ string) []string { return []string{"whatif", "-o", in, in} }, []string{"-o/--output", "input"}},
		{"check --junit and --summary the same file", func(in, _, _, dir string) []string {
			out := filepath.Join(dir, "out.xml")
			return []string{"check", "--junit", out, "--summary", out, in}
		}, []string{"--junit", "--summary", "same file"}},
		{"check -o and --html the same file through a link", func(in, _, _, dir string) []string {
			out := filepath.Join(dir, "report")
			os.WriteFile(out, []byte("old"), 0o644)
			return []string{"check", "-o", out, "--html", link(t, out, filepath.Join(dir, "report-link")), in}
		}, []string{"-o/--output", "--html", "same file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			in := copyInto(t, traces+"pooled.otlp.jsonl", dir, "in.jsonl")
			cfgDir, baseDir := t.TempDir(), t.TempDir()
			cfg := copyInto(t, "../../testdata/rules/pool.yaml", cfgDir, "rules.yaml")
			base := copyInto(t, traces+"pooled.otlp.jsonl.golden.json", baseDir, "base.json")
			before := map[string][]byte{}
			for _, p := range []string{in, cfg, base} {
				before[p], _ = os.ReadFile(p)
			}
			args := tc.args(in, cfg, base, dir)
			code, out, errOut := runCLI(t, "", args...)
			if code != 2 || out != "" {
				t.Errorf("%v: exit %d, stdout %.80q; want 2 and nothing on stdout", args, code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not name %q", errOut, w)
				}
			}
			for p, data := range before {
				if got, _ := os.ReadFile(p); !bytes.Equal(got, data) {
					t.Errorf("%s changed (%d bytes, was %d)", p, len(got), len(data))
				}
			}
		})
	}
}

// $GITHUB_STEP_SUMMARY, which check appends to, is an output like the
// others: it may not be an input.
func TestTheStepSummaryMayNotBeAnInput(t *testing.T) {
	in := copyInto(t, traces+"pooled.otlp.jsonl", t.TempDir(), "in.jsonl")
	before, _ := os.ReadFile(in)
	t.Setenv("GITHUB_STEP_SUMMARY", in)
	code, _, errOut := runCLI(t, "", "check", in)
	if code != 2 || !strings.Contains(errOut, "$GITHUB_STEP_SUMMARY") {
		t.Errorf("exit %d, stderr %q; want 2 naming $GITHUB_STEP_SUMMARY", code, errOut)
	}
	if after, _ := os.ReadFile(in); !bytes.Equal(after, before) {
		t.Errorf("the input changed: %d bytes, was %d", len(after), len(before))
	}
}

func link(t *testing.T, target, name string) string {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
	return name
}

func hardLink(t *testing.T, target, name string) string {
	t.Helper()
	if err := os.Link(target, name); err != nil {
		t.Fatal(err)
	}
	return name
}

// paddedBaseline writes the pooled dump's baseline, made under the
// default configuration as check reads it, padded with spaces (JSON's own
// whitespace) to exactly size bytes.
func paddedBaseline(t *testing.T, size int) string {
	t.Helper()
	code, out, errOut := runCLI(t, "", "analyze", "--format", "json", traces+"pooled.otlp.jsonl")
	if code != 0 {
		t.Fatalf("analyze for the baseline: exit %d: %s", code, errOut)
	}
	data := []byte(out)
	if len(data) > size {
		t.Fatalf("baseline is %d bytes already", len(data))
	}
	data = append(data, bytes.Repeat([]byte(" "), size-len(data))...)
	return writeTemp(t, "base.json", string(data))
}

// A baseline may take a quarter of --max-memory: exactly that is read,
// one byte more is refused before it is read, exit 2 naming the file and
// the limit; through a pipe (standard input) the same, as soon as the
// read passes it.
func TestABaselineIsBoundedByTheMemoryBudget(t *testing.T) {
	const limit = 4 << 20 // a quarter of --max-memory 16MiB
	// --max-memory sets the runtime's memory limit, process-wide: the
	// tests after this one get theirs back.
	limitBefore := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limitBefore) })
	in := traces + "pooled.otlp.jsonl"
	for _, tc := range []struct {
		name  string
		size  int
		stdin bool
		code  int
	}{
		{"exactly a quarter of the budget", limit, false, 0},
		{"one byte over", limit + 1, false, 2},
		{"exactly a quarter, on stdin", limit, true, 0},
		{"one byte over, on stdin", limit + 1, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := paddedBaseline(t, tc.size)
			args := []string{"check", "--max-memory", "16MiB", "--baseline", base, in}
			stdin := ""
			if tc.stdin {
				data, _ := os.ReadFile(base)
				stdin, args[4] = string(data), "-"
			}
			code, _, errOut := runCLI(t, stdin, args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			if code == 2 && (!strings.Contains(errOut, args[4]) || !strings.Contains(errOut, "--max-memory") || !strings.Contains(errOut, humanBytes(limit))) {
				t.Errorf("stderr %q does not name the baseline, --max-memory and the limit %s", errOut, humanBytes(limit))
			}
		})
	}
}

// A baseline on standard input (or any pipe) is read once, its first
// bytes sniffed through the same buffer: the same verdict and figures as
// from the file.
func TestABaselineThroughAPipeReadsAsFromTheFile(t *testing.T) {
	base := traces + "per-call-dial.otlp.jsonl.golden.json"
	cur := traces + "pooled.otlp.jsonl"
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	codeFile, outFile, errFile := runCLI(t, "", "diff", "--format", "json", base, cur)
	codePipe, outPipe, errPipe := runCLI(t, string(data), "diff", "--format", "json", "-", cur)
	if codeFile != 0 || codePipe != codeFile {
		t.Fatalf("diff from the file: exit %d (%s); from stdin: exit %d (%s)", codeFile, errFile, codePipe, errPipe)
	}
	type diffDoc struct {
		Rows        json.RawMessage `json:"rows"`
		Regressions json.RawMessage `json:"regressions"`
	}
	var a, b diffDoc
	if err := json.Unmarshal([]byte(outFile), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(outPipe), &b); err != nil {
		t.Fatalf("diff from stdin: %v\n%s", err, outPipe)
	}
	if !bytes.Equal(a.Rows, b.Rows) || !bytes.Equal(a.Regressions, b.Regressions) {
		t.Errorf("diff from stdin differs from the file's:\n%s\nwant\n%s", outPipe, outFile)
	}
}

// lateSpanDump writes executions whose first trace's last span comes at
// the very end, after every other trace: a run that measured the trace at
// its root must read the input again, holding every trace.
func lateSpanDump(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := hostile.Executions(&buf, int64(n)); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	var first map[string]any
	if err := json.Unmarshal(lines[0], &first); err != nil {
		t.Fatal(err)
	}
	scope := first["resourceSpans"].([]any)[0].(map[string]any)["scopeSpans"].([]any)[0].(map[string]any)
	spans := scope["spans"].([]any)
	scope["spans"] = spans[:len(spans)-1]
	head, _ := json.Marshal(first)
	scope["spans"] = spans[len(spans)-1:]
	late, _ := json.Marshal(first)
	out := append(append(head, '\n'), bytes.Join(lines[1:], []byte("\n"))...)
	return append(append(append(out, '\n'), late...), '\n')
}

// Standard input can be read once: naming it twice (a dump and the
// baseline, both sides of a diff, two dumps) is a usage error saying so,
// before any read, not an "empty file" of whichever came second.
func TestStandardInputNamedTwiceIsRefused(t *testing.T) {
	base, err := os.ReadFile(traces + "pooled.otlp.jsonl.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", "--baseline", "-", "-"},
		{"diff", "-", "-"},
		{"analyze", "-", "-"},
		{"whatif", "-", "-"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errOut := runCLI(t, string(base), args...)
			if code != 2 || out != "" || !strings.Contains(errOut, "stdin") || !strings.Contains(errOut, "twice") {
				t.Errorf("exit %d, stdout %.80q, stderr %q; want 2 saying stdin is named twice", code, out, errOut)
			}
		})
	}
}

// check's report is on standard output, so --junit - and --summary -
// would be no file but a file named "-" in the working directory: they
// are refused, naming the flag, and nothing is created.
func TestJUnitOrSummaryNamedDashIsRefused(t *testing.T) {
	dump, err := filepath.Abs(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--junit", "--summary"} {
		t.Run(flag, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			code, _, errOut := runCLI(t, "", "check", flag, "-", dump)
			if code != 2 || !strings.Contains(errOut, flag) {
				t.Errorf("exit %d, stderr %q; want 2 naming %s", code, errOut, flag)
			}
			if names := readDirNames(t, dir); len(names) != 0 {
				t.Errorf("the working directory now holds %v", names)
			}
		})
	}
}

func readDirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}
