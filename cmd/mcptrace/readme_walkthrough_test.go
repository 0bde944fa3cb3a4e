package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/internal/testbound"
)

// walkthroughDocs are the documents whose sh blocks TestREADMEWalkthrough
// runs, in this order, one after the other in one directory: docs/ci.md and
// docs/whatif.md use what the README made.
var walkthroughDocs = []string{"README.md", "docs/ci.md", "docs/whatif.md"}

// shellCommand is one command line of a document's sh block.
type shellCommand struct {
	Line     int    // 1-based line in the document
	Text     string // the command as the shell runs it (continuations joined, the exit echo cut)
	WantExit int    // the exit code the document shows: 0, or N from `; echo "exit $?"   # exit N`
}

// shellBlock is one sh code block of a document.
type shellBlock struct {
	File     string
	Line     int    // the opening fence's line
	NotRun   string // the reason of a `<!-- not run: REASON -->` just above the fence; "" when it runs
	Commands []shellCommand
}

var (
	// shellFence opens a block the walkthrough runs.
	shellFence = regexp.MustCompile("^```(sh|bash|shell)\\s*$")
	// notRunMark, on the last non-blank line above a fence, exempts the block.
	notRunMark = regexp.MustCompile(`^<!--\s*not run:\s*(.*?)\s*-->$`)
	// exitShown is a command that shows its exit code: CMD; echo "exit $?"   # exit N ...
	exitShown = regexp.MustCompile(`^(.*?)\s*;\s*echo "exit \$\?"\s*#\s*exit ([0-9]+)\b`)
	// exitComment is any `# exit N` comment, which must come with the echo.
	exitComment = regexp.MustCompile(`#\s*exit [0-9]`)
)

// parseShellBlocks extracts the sh blocks of a Markdown document. The
// convention it enforces: one command per line (a trailing backslash joins
// lines); a command expected to fail shows its code as
// `CMD; echo "exit $?"   # exit N`, and every other command must exit 0;
// comment lines are skipped; a block that cannot run carries
// `<!-- not run: REASON -->` on the line above its fence, with a reason.
func parseShellBlocks(file, doc string) ([]shellBlock, error) {
	lines := strings.Split(doc, "\n")
	var blocks []shellBlock
	prev := "" // the last non-blank line outside a block
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t\r")
		if !shellFence.MatchString(line) {
			if strings.HasPrefix(line, "```") { // another language's block: skip to its end
				for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
				}
				prev = ""
				continue
			}
			if strings.TrimSpace(line) != "" {
				prev = strings.TrimSpace(line)
			}
			continue
		}
		b := shellBlock{File: file, Line: i + 1}
		if m := notRunMark.FindStringSubmatch(prev); m != nil {
			if m[1] == "" {
				return nil, fmt.Errorf("%s:%d: `<!-- not run: -->` without a reason", file, i)
			}
			b.NotRun = m[1]
		} else if strings.Contains(prev, "not run") && strings.HasPrefix(prev, "<!--") {
			return nil, fmt.Errorf("%s:%d: %q: expected `<!-- not run: REASON -->`", file, i, prev)
		}
		closed := false
		for i++; i < len(lines); i++ {
			text := strings.TrimRight(lines[i], " \t\r")
			if strings.HasPrefix(strings.TrimSpace(text), "```") {
				closed = true
				break
			}
			start := i + 1
			for strings.HasSuffix(text, "\\") && i+1 < len(lines) {
				i++
				text = strings.TrimRight(strings.TrimSuffix(text, "\\"), " \t") + " " + strings.TrimSpace(lines[i])
			}
			trimmed := strings.TrimSpace(text)
			if trimmed == "" || strings.HasPrefix(trimmed, "#") {
				continue
			}
			c := shellCommand{Line: start, Text: trimmed}
			if m := exitShown.FindStringSubmatch(trimmed); m != nil {
				c.Text = m[1]
				c.WantExit, _ = strconv.Atoi(m[2])
			} else if strings.Contains(trimmed, `echo "exit $?"`) || exitComment.MatchString(trimmed) {
				return nil, fmt.Errorf("%s:%d: %q: expected `CMD; echo \"exit $?\"   # exit N`", file, start, trimmed)
			}
			b.Commands = append(b.Commands, c)
		}
		if !closed {
			return nil, fmt.Errorf("%s:%d: sh block never closed", file, b.Line)
		}
		blocks = append(blocks, b)
		prev = ""
	}
	return blocks, nil
}

// walkthroughScript is one bash script running every command of blocks in
// order, each followed by a check of its exit code: the first mismatch
// prints where the document is and exits 97.
func walkthroughScript(blocks []shellBlock) string {
	var sb strings.Builder
	for _, b := range blocks {
		if b.NotRun != "" {
			continue
		}
		for _, c := range b.Commands {
			where := fmt.Sprintf("%s:%d", b.File, c.Line)
			fmt.Fprintf(&sb, "printf '%%s\\n' %s\n", shellQuote("+ "+where+": "+c.Text))
			fmt.Fprintf(&sb, "%s\n__rc=$?\necho \"exit $__rc\"\n", c.Text)
			fmt.Fprintf(&sb, "if [ \"$__rc\" -ne %d ]; then printf '%%s\\n' %s \"exit $__rc\" >&2; exit 97; fi\n",
				c.WantExit, shellQuote(fmt.Sprintf("%s: the document shows exit %d for: %s; it exited:", where, c.WantExit, c.Text)))
		}
	}
	return sb.String()
}

// shellQuote quotes s for bash as one word.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestShellBlocksFollowTheConvention pins the parser's convention, on which
// the walkthrough's verdict rests: the exit code a line shows, a marked
// block, continuations, and the malformed marks it refuses.
func TestShellBlocksFollowTheConvention(t *testing.T) {
	doc := "text\n" +
		"```sh\n" +
		"mcptrace check a.jsonl; echo \"exit $?\"   # exit 1: fails\n" +
		"# a comment\n" +
		"mcptrace analyze \\\n  --format json a.jsonl > b.json   # a comment, exit 0\n" +
		"```\n" +
		"```yaml\nkey: 1\n```\n" +
		"<!-- not run: runs for two minutes -->\n" +
		"```sh\n" +
		"mcptrace demo --duration 2m\n" +
		"```\n"
	blocks, err := parseShellBlocks("X.md", doc)
	if err != nil {
		t.Fatal(err)
	}
	want := []shellBlock{
		{File: "X.md", Line: 2, Commands: []shellCommand{
			{Line: 3, Text: "mcptrace check a.jsonl", WantExit: 1},
			{Line: 5, Text: "mcptrace analyze --format json a.jsonl > b.json   # a comment, exit 0"},
		}},
		{File: "X.md", Line: 12, NotRun: "runs for two minutes", Commands: []shellCommand{{Line: 13, Text: "mcptrace demo --duration 2m"}}},
	}
	if fmt.Sprint(blocks) != fmt.Sprint(want) {
		t.Errorf("blocks =\n%+v\nwant\n%+v", blocks, want)
	}

	for name, bad := range map[string]string{
		"echo without the code":  "```sh\nmcptrace check a; echo \"exit $?\"\n```\n",
		"code without the echo":  "```sh\nmcptrace check a   # exit 1\n```\n",
		"not run without reason": "<!-- not run: -->\n```sh\nmcptrace demo\n```\n",
		"misspelt not run":       "<!-- not run because slow -->\n```sh\nmcptrace demo\n```\n",
		"unclosed block":         "```sh\nmcptrace demo\n",
	} {
		if _, err := parseShellBlocks("X.md", bad); err == nil || !strings.Contains(err.Error(), "X.md:") {
			t.Errorf("%s: err = %v, want an error naming X.md and the line", name, err)
		}
	}
}

// TestREADMEWalkthrough runs every sh block of README.md and docs/ci.md, in
// order, in a fresh copy of the repository (its tracked and unignored files),
// with nothing on PATH named mcptrace but what the README's own install line
// builds, and checks each command's exit code against what the document
// shows. Blocks marked not run are listed with their reasons.
func TestREADMEWalkthrough(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the CLI as the README does: not in -short mode")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("the walkthrough runs under bash: %v", err)
	}
	root := repoRoot(t)
	var blocks []shellBlock
	for _, doc := range walkthroughDocs {
		src, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		bs, err := parseShellBlocks(doc, string(src))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, bs...)
	}
	run := 0
	for _, b := range blocks {
		if b.NotRun != "" {
			t.Logf("not run: %s:%d (%d commands): %s", b.File, b.Line, len(b.Commands), b.NotRun)
			continue
		}
		run += len(b.Commands)
	}
	if run == 0 {
		t.Fatal("no command to run: the documents hold no sh block the walkthrough runs")
	}

	tmp := t.TempDir()
	clone := filepath.Join(tmp, "mcptrace")
	copyRepo(t, root, clone)
	bin := filepath.Join(tmp, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// A hang (a server left in the foreground, a command waiting on stdin)
	// is ended by the binary's own deadline, never by a bound a loaded
	// machine reaches.
	ctx, cancel := testbound.Context(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, "-c", walkthroughScript(blocks))
	cmd.Dir = clone
	cmd.Env = walkthroughEnv(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // a hang is ended with what it left in the background
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // anything a block left running
	}
	if err != nil {
		t.Fatalf("walkthrough: %v (bounded by go test -timeout)\n%s", err, tail(out.String(), 80))
	}
	t.Logf("%d commands ran as the documents show", run)
}

// repoRoot is the repository holding this package.
func repoRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v (the walkthrough copies the repository's files)", err)
	}
	return strings.TrimSpace(string(out))
}

// copyRepo copies the files git would commit (tracked, or new and not
// ignored) from root to dst, as a fresh clone of the working tree.
func copyRepo(t *testing.T, root, dst string) {
	t.Helper()
	ls := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	ls.Dir = root
	list, err := ls.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(list), "\x00"), "\x00") {
		src := filepath.Join(root, name)
		fi, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // deleted in the working tree
		}
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(src, target, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

func copyFile(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// walkthroughEnv is the environment of a newcomer's shell: bin (where the
// README's go install puts the CLI) first on PATH and no other mcptrace on
// it, and none of the variables that would send the commands' output
// elsewhere (OTLP endpoints, GitHub's annotations and step summary).
// GOFLAGS gains -trimpath: without it the build cache keys the module's own
// packages by their directory, so every fresh copy recompiles them (about a
// minute on 2 cores); with it a copy's build is a cache hit once the cache
// holds a -trimpath build (about 2 s; the first, of every dependency too,
// costs about 3 CPU-minutes once per machine).
func walkthroughEnv(bin string) []string {
	env := []string{"GOBIN=" + bin, "NO_COLOR=1", "GOFLAGS=" + strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath")}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "GOBIN" || k == "NO_COLOR" || k == "GOFLAGS",
			strings.HasPrefix(k, "OTEL_"), strings.HasPrefix(k, "GITHUB_"), strings.HasPrefix(k, "MCPTRACE_"):
			continue
		case k == "PATH":
			dirs := []string{bin}
			for _, d := range filepath.SplitList(v) {
				if _, err := os.Stat(filepath.Join(d, "mcptrace")); err != nil {
					dirs = append(dirs, d)
				}
			}
			env = append(env, "PATH="+strings.Join(dirs, string(os.PathListSeparator)))
			continue
		}
		env = append(env, kv)
	}
	return env
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines before]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
