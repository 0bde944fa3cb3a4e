package fuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Limits are the bounds every run is held to.
type Limits struct {
	// Budget is the --max-memory every run is given.
	Budget string
	// MaxRSS is the peak resident set size past which a run is a finding
	// (the child's own high-water mark: see childPeak).
	MaxRSS int64
	// Wall is how long a run may take; it is killed then.
	Wall time.Duration
	// MaxOutput caps what is read of a run's stdout and stderr; a run
	// writing more is killed and is a finding.
	MaxOutput int64
	// Interrupt, when positive, also runs check once with SIGINT sent this
	// long after the start, which must end it within InterruptGrace.
	Interrupt      time.Duration
	InterruptGrace time.Duration
}

// DefaultLimits are the bounds CI states: --max-memory 64MiB, 512 MiB of
// RSS, 30 s of wall time per run, 64 MiB of output.
func DefaultLimits() Limits {
	return Limits{Budget: "64MiB", MaxRSS: 512 << 20, Wall: 30 * time.Second, MaxOutput: 64 << 20,
		Interrupt: 300 * time.Millisecond, InterruptGrace: 5 * time.Second}
}

// Finding is one broken promise.
type Finding struct {
	// Kind is crash, rss, wall, output-size, escape, markup, annotation,
	// bad-json, bad-xml, green-on-broken, exit-code or interrupt.
	Kind string
	// Run names the run: check-table, check-json, check-markdown,
	// analyze-table, analyze-json, analyze-markdown, analyze-html,
	// check-interrupt.
	Run string
	// Where names the output (stdout, stderr, a file) and Detail says what
	// was seen there.
	Where, Detail string
}

// RunsOf returns the runs the signatures name (family/kind/run), so a
// reproducer replays only what it was minimized for.
func RunsOf(sigs []string) []string {
	var runs []string
	for _, s := range sigs {
		r := s[strings.LastIndexByte(s, '/')+1:]
		if indexOf(runs, r) < 0 {
			runs = append(runs, r)
		}
	}
	return runs
}

// Signature is what two findings of the same cause share: the case's
// family, the kind and the run.
func (f Finding) Signature(family string) string { return family + "/" + f.Kind + "/" + f.Run }

func (f Finding) String() string {
	return fmt.Sprintf("%s in %s (%s): %s", f.Kind, f.Run, f.Where, f.Detail)
}

// result is what one run left behind.
type result struct {
	code       int
	signaled   string
	killed     bool
	overflow   bool
	wall       time.Duration
	rss        int64
	stdout     []byte
	stderr     []byte
	files      map[string][]byte // output files, by name
	interruptd bool
}

// RunStat is one run's exit code, wall time and peak RSS, for reports.
type RunStat struct {
	Run  string
	Code int
	Wall time.Duration
	RSS  int64
}

// run is one invocation of the binary: a name, the arguments, the output
// files it writes and the format of its stdout.
type run struct {
	name   string
	args   []string
	stdout string // table, json, markdown
	files  map[string]string
	env    []string
}

// plan lists the runs of a case in dir: check in each format (the JSON one
// also writing JUnit, HTML and the Markdown summary, with GitHub
// annotations on), analyze in each format.
func plan(c *Case, dir, out string, lim Limits) []run {
	var base []string
	if b := budgetOf(c, lim); b != "default" {
		base = []string{"--max-memory", b}
	}
	base = append(base, c.Args...)
	inputs := make([]string, len(c.Inputs))
	for i, p := range c.Inputs {
		inputs[i] = filepath.Join(dir, p)
	}
	var cfg []string
	if c.Config != "" {
		cfg = []string{"--config", filepath.Join(dir, c.Config)}
	}
	check := func(format string, extra ...string) []string {
		a := append([]string{"check", "--format", format}, base...)
		a = append(append(a, cfg...), extra...)
		return append(append(a, "--"), inputs...)
	}
	analyzeArgs := func(format string, extra ...string) []string {
		a := append([]string{"analyze", "--format", format}, base...)
		if i := indexOf(a, "--builtin"); i >= 0 { // a check flag only
			a = append(a[:i:i], a[i+1:]...)
		}
		return append(append(append(a, extra...), "--"), inputs...)
	}
	f := func(name string) string { return filepath.Join(out, name) }
	return []run{
		{name: "check-table", args: check("table"), stdout: "table"},
		{name: "check-json", stdout: "json",
			args:  check("json", "--junit", f("junit.xml"), "--html", f("check.html"), "--summary", f("summary.md")),
			files: map[string]string{"junit.xml": "junit", "check.html": "html", "summary.md": "markdown", "step-summary.md": "markdown"},
			env:   []string{"GITHUB_ACTIONS=true", "GITHUB_STEP_SUMMARY=" + f("step-summary.md")}},
		{name: "check-markdown", args: check("markdown"), stdout: "markdown"},
		{name: "analyze-table", args: analyzeArgs("table"), stdout: "table"},
		{name: "analyze-json", args: analyzeArgs("json"), stdout: "json"},
		{name: "analyze-markdown", args: analyzeArgs("markdown"), stdout: "markdown"},
		{name: "analyze-html", args: analyzeArgs("html", "-o", f("analyze.html")), stdout: "table",
			files: map[string]string{"analyze.html": "html"}},
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// budgetOf is the --max-memory a case runs with.
func budgetOf(c *Case, lim Limits) string {
	if c.Budget != "" {
		return c.Budget
	}
	return lim.Budget
}

// maxRSSOf is the peak RSS a case may reach: three times its budget (the
// budget caps what the reads hold; the analysis and the garbage collector's
// headroom come on top) plus 128 MiB for the runtime, the binary and the
// output, and never more than lim.MaxRSS (which also bounds a run on
// mcptrace's default budget).
func maxRSSOf(c *Case, lim Limits) int64 {
	b := budgetOf(c, lim)
	var n int64
	var unit string
	if _, err := fmt.Sscanf(b, "%d%s", &n, &unit); err == nil {
		switch unit {
		case "MiB":
			return min(lim.MaxRSS, 3*n<<20+128<<20)
		case "GiB":
			return min(lim.MaxRSS, 3*n<<30+128<<20)
		}
	}
	return lim.MaxRSS
}

// Judge materializes c under a new directory of tmp, runs bin on it as
// plan says, and returns every finding and each run's figures. With only
// given, just the runs it names are made.
func Judge(ctx context.Context, bin, tmp string, c *Case, lim Limits, only ...string) ([]Finding, []RunStat, error) {
	want := func(name string) bool { return len(only) == 0 || indexOf(only, name) >= 0 }
	dir, err := os.MkdirTemp(tmp, "case-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	if err := os.Mkdir(in, 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		return nil, nil, err
	}
	if err := c.Materialize(in, false); err != nil {
		return nil, nil, err
	}
	var fs []Finding
	var stats []RunStat
	for _, r := range plan(c, in, out, lim) {
		if ctx.Err() != nil {
			return fs, stats, ctx.Err()
		}
		if !want(r.name) {
			continue
		}
		res := execute(ctx, bin, r, out, lim, 0)
		if ctx.Err() != nil { // killed for the caller's deadline: no verdict
			return fs, stats, ctx.Err()
		}
		stats = append(stats, RunStat{r.name, res.code, res.wall, res.rss})
		fs = append(fs, judgeRun(c, r, res, lim)...)
	}
	if lim.Interrupt > 0 && want("check-interrupt") && ctx.Err() == nil {
		r := run{name: "check-interrupt", args: plan(c, in, out, lim)[0].args, stdout: "table"}
		res := execute(ctx, bin, r, out, lim, lim.Interrupt)
		if ctx.Err() != nil {
			return fs, stats, ctx.Err()
		}
		stats = append(stats, RunStat{r.name, res.code, res.wall, res.rss})
		fs = append(fs, judgeRun(c, r, res, lim)...)
	}
	return fs, stats, nil
}

// capped keeps the first n bytes written and notes an overflow.
type capped struct {
	buf      bytes.Buffer
	n        int64
	overflow chan struct{}
	over     bool
}

func (w *capped) Write(p []byte) (int, error) {
	if int64(w.buf.Len()+len(p)) > w.n {
		if !w.over {
			w.over = true
			close(w.overflow)
		}
		return len(p), nil
	}
	return w.buf.Write(p)
}

// execute runs r, killing it past the wall bound or the output cap, and
// sending SIGINT after interrupt when positive.
func execute(ctx context.Context, bin string, r run, out string, lim Limits, interrupt time.Duration) result {
	for name := range r.files {
		os.Remove(filepath.Join(out, name))
	}
	cmd := exec.Command(bin, r.args...)
	cmd.Env = append(append(os.Environ(), "GITHUB_ACTIONS=", "GITHUB_STEP_SUMMARY="), r.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout := &capped{n: lim.MaxOutput, overflow: make(chan struct{})}
	stderr := &capped{n: lim.MaxOutput, overflow: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var res result
	parentHWM := vmHWMOf("self")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		res.code, res.signaled = -1, "start: "+err.Error()
		return res
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// ru_maxrss of a child started by vfork counts the parent's memory at
	// the fork (Linux keeps the old mm's high-water mark across exec), so
	// the child's own high-water mark is polled from /proc instead.
	poll := time.NewTicker(10 * time.Millisecond)
	defer poll.Stop()
	hwm := vmHWM(cmd.Process.Pid)
	kill := func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	wall := time.NewTimer(lim.Wall)
	defer wall.Stop()
	var intr <-chan time.Time
	if interrupt > 0 {
		t := time.NewTimer(interrupt)
		defer t.Stop()
		intr = t.C
	}
	var intrAt time.Time
	var err error
wait:
	for {
		select {
		case err = <-done:
			break wait
		case <-poll.C:
			hwm = max(hwm, vmHWM(cmd.Process.Pid))
		case <-wall.C:
			res.killed = true
			kill()
		case <-stdout.overflow:
			res.overflow = true
			kill()
		case <-stderr.overflow:
			res.overflow = true
			kill()
		case <-intr:
			intrAt = time.Now()
			res.interruptd = true
			syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
			wall.Reset(lim.InterruptGrace)
		case <-ctx.Done():
			kill()
		}
	}
	res.wall = time.Since(start)
	if !intrAt.IsZero() {
		res.wall = time.Since(intrAt)
	}
	res.stdout, res.stderr = stdout.buf.Bytes(), stderr.buf.Bytes()
	if ps := cmd.ProcessState; ps != nil {
		res.rss = hwm
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			res.rss = childPeak(hwm, ru.Maxrss*1024, parentHWM)
		}
		res.code = ps.ExitCode()
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.signaled = ws.Signal().String()
		}
	} else if err != nil {
		res.code, res.signaled = -1, err.Error()
	}
	res.files = map[string][]byte{}
	for name := range r.files {
		if b, err := readCapped(filepath.Join(out, name), lim.MaxOutput); err == nil {
			res.files[name] = b
		}
	}
	return res
}

// vmHWM returns the peak resident set size of process pid, from the
// VmHWM line of /proc/pid/status, or 0 if it cannot be read. A poll may
// come after the child was reaped and its pid given to another process:
// only a process whose parent is this one counts.
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	_, pp, _ := bytes.Cut(b, []byte("\nPPid:"))
	pp, _, _ = bytes.Cut(pp, []byte("\n"))
	if strings.TrimSpace(string(pp)) != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return statusHWM(b)
}

// vmHWMOf is the high-water mark of /proc/NAME ("self"), 0 when unknown.
func vmHWMOf(name string) int64 {
	b, err := os.ReadFile("/proc/" + name + "/status")
	if err != nil {
		return 0
	}
	return statusHWM(b)
}

// childPeak is a finished child's peak RSS: its own high-water mark when a
// poll saw one; else its ru_maxrss, which Linux takes at exec as the
// larger of the child's own peak and the high-water mark of the mm it left
// (a vfork child's is the parent's), so it says something of the child only
// past the parent's high-water mark; 0 (unknown) otherwise. A child that
// exits before the first poll on a loaded machine is then never charged
// the fuzzer's own memory.
func childPeak(hwm, maxrss, parentHWM int64) int64 {
	if hwm > 0 {
		return hwm
	}
	if maxrss > parentHWM {
		return maxrss
	}
	return 0
}

// statusHWM reads VmHWM from a /proc status file, in bytes; 0 when absent.
func statusHWM(b []byte) int64 {
	_, rest, ok := bytes.Cut(b, []byte("\nVmHWM:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(string(line)), " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// readCapped reads at most n+1 bytes of a file.
func readCapped(path string, n int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n+1))
}

// crashText matches what the Go runtime prints when it dies.
var crashText = regexp.MustCompile(`(?m)^(panic: |fatal error: |runtime: |goroutine \d+ \[|SIGSEGV|unexpected fault address)`)

// judgeRun applies the oracle to one run.
func judgeRun(c *Case, r run, res result, lim Limits) []Finding {
	var fs []Finding
	add := func(kind, where, format string, a ...any) {
		fs = append(fs, Finding{Kind: kind, Run: r.name, Where: where, Detail: fmt.Sprintf(format, a...)})
	}
	switch {
	case res.killed && res.interruptd:
		add("interrupt", "process", "still running %s after SIGINT; killed", lim.InterruptGrace)
	case res.killed:
		add("wall", "process", "still running after %s; killed", lim.Wall)
	case res.overflow:
		add("output-size", "stdout/stderr", "wrote more than %d bytes; killed", lim.MaxOutput)
	case res.signaled != "":
		add("crash", "process", "died of %s", res.signaled)
	}
	for where, b := range map[string][]byte{"stdout": res.stdout, "stderr": res.stderr} {
		if m := crashText.Find(b); m != nil {
			add("crash", where, "the runtime's %q", strings.TrimSpace(string(m)))
		}
	}
	if res.killed || res.overflow || res.signaled != "" {
		return fs
	}
	if bound := maxRSSOf(c, lim); res.rss > bound {
		add("rss", "process", "peak RSS %d MiB, over %d MiB (--max-memory %s)", res.rss>>20, bound>>20, budgetOf(c, lim))
	}
	okCodes := map[int]bool{0: true, 1: true, 2: true, 3: true}
	if res.interruptd {
		okCodes[130] = true
	}
	if !okCodes[res.code] {
		add("exit-code", "process", "exit %d", res.code)
	}
	bound := OutputBound(c)
	outputs := map[string]struct {
		b      []byte
		format string
	}{"stdout": {res.stdout, r.stdout}, "stderr": {res.stderr, "stderr"}}
	for name, format := range r.files {
		outputs[name] = struct {
			b      []byte
			format string
		}{res.files[name], format}
	}
	for where, o := range outputs {
		if int64(len(o.b)) > bound {
			add("output-size", where, "%d bytes for %d bytes of input (bound %d)", len(o.b), c.RawBytes, bound)
		}
		for _, p := range scanOutput(o.format, o.b) {
			add(p.kind, where, "%s", p.detail)
		}
	}
	if c.Broken {
		switch {
		case strings.HasPrefix(r.name, "check-") && r.name != "check-interrupt" && res.code == 0:
			add("green-on-broken", "process", "check exit 0 on a dump marked broken (%s)", c.What)
		case r.name == "analyze-json" && res.code == 0 && !partialJSON(res.stdout):
			add("green-on-broken", "stdout", "analyze exit 0 without \"partial\": true on a dump marked broken (%s)", c.What)
		}
	}
	return fs
}

// OutputBound is the largest output a case may produce: 4 MiB plus 64
// times its decompressed input. Output that grows faster than the input
// (padding every row to the widest cell) passes it.
func OutputBound(c *Case) int64 { return 4<<20 + 64*c.RawBytes }

// partialJSON says whether an analyze JSON report marks itself partial.
func partialJSON(b []byte) bool {
	var v struct {
		Partial bool `json:"partial"`
	}
	return json.Unmarshal(b, &v) == nil && v.Partial
}

// problem is one thing scanOutput saw.
type problem struct{ kind, detail string }

// scanOutput looks in one output of a format (table, json, markdown, html,
// junit, stderr) for escape bytes, live markup and injected annotations.
func scanOutput(format string, b []byte) []problem {
	var ps []problem
	if len(b) == 0 {
		return nil
	}
	switch format {
	case "json":
		if !json.Valid(b) {
			ps = append(ps, problem{"bad-json", "not valid JSON: " + snippet(b, 0)})
		}
		// A JSON encoder escapes C0 controls; bidi and zero-width runes
		// are legal JSON for a machine to read.
		if i := bytes.IndexFunc(b, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' && r != '\r' }); i >= 0 {
			ps = append(ps, problem{"escape", "raw control byte in JSON: " + snippet(b, i)})
		}
		return ps
	case "junit":
		if err := wellFormedXML(b); err != nil {
			ps = append(ps, problem{"bad-xml", err.Error()})
		}
	}
	if p, ok := escapeProblem(b); ok {
		ps = append(ps, p)
	}
	switch format {
	case "markdown":
		ps = append(ps, liveMarkdown(b)...)
		ps = append(ps, liveHTML(b, false)...)
	case "html":
		ps = append(ps, liveHTML(b, true)...)
	case "stderr":
		if m := injectedAnnotation.Find(b); m != nil {
			ps = append(ps, problem{"annotation", "a workflow command from the dump: " + snippet(b, bytes.Index(b, m))})
		}
	}
	return ps
}

// injectedAnnotation is the workflow command the hostile strings carry,
// at the start of a line: GitHub would run it.
var injectedAnnotation = regexp.MustCompile(`(?m)^::[a-z-]+ title=fuzzinj::`)

// escapeProblem finds the first byte that moves a terminal or hides text:
// invalid UTF-8, C0 controls other than tab and newline, DEL, C1 controls,
// bidi controls, zero-width characters, line and paragraph separators.
func escapeProblem(b []byte) (problem, bool) {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return problem{"escape", fmt.Sprintf("invalid UTF-8 byte 0x%02x: %s", b[i], snippet(b, i))}, true
		}
		if bad(r) {
			return problem{"escape", fmt.Sprintf("U+%04X: %s", r, snippet(b, i))}, true
		}
		i += n
	}
	return problem{}, false
}

// bad says whether r must never reach a terminal or a page raw.
func bad(r rune) bool {
	switch {
	case r == '\t' || r == '\n':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r >= 0x200b && r <= 0x200d, r == 0x2060, r == 0xfeff, r == 0x2028, r == 0x2029:
		return true
	}
	return false
}

// Live Markdown from the dump: a link or image whose target is the
// hostile host, an autolink to it, a reference definition. Each match is
// live unless a backslash escapes its bracket or it sits in a code span.
var (
	mdLink     = regexp.MustCompile(`\]\(https://fuzz\.invalid`)
	mdAutolink = regexp.MustCompile(`<https://fuzz\.invalid`)
	mdRefDef   = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]*\]: *https://fuzz\.invalid`)
)

func liveMarkdown(b []byte) []problem {
	var ps []problem
	for _, re := range []*regexp.Regexp{mdLink, mdAutolink, mdRefDef} {
		for _, loc := range re.FindAllIndex(b, -1) {
			at := loc[0]
			if re == mdRefDef {
				at = bytes.IndexByte(b[loc[0]:], '[') + loc[0]
			}
			if escaped(b, at) || inCodeSpan(b, at) {
				continue
			}
			ps = append(ps, problem{"markup", "live Markdown from the dump: " + snippet(b, loc[0])})
			break
		}
	}
	return ps
}

// Live HTML from the dump: the tags the hostile strings carry, unescaped,
// and (in a page) their attribute, unescaped inside a tag.
var (
	htmlTag  = regexp.MustCompile(`<img src=x onerror|<b data-fuzz=|<a href="https://fuzz\.invalid`)
	htmlAttr = regexp.MustCompile(`" onfuzz="`)
)

func liveHTML(b []byte, page bool) []problem {
	for _, loc := range htmlTag.FindAllIndex(b, -1) {
		if !page && inCodeSpan(b, loc[0]) {
			continue
		}
		return []problem{{"markup", "live HTML from the dump: " + snippet(b, loc[0])}}
	}
	if !page {
		return nil
	}
	for _, loc := range htmlAttr.FindAllIndex(b, -1) {
		// Inside a tag: the last '<' before it is later than the last '>'.
		if bytes.LastIndexByte(b[:loc[0]], '<') > bytes.LastIndexByte(b[:loc[0]], '>') {
			return []problem{{"markup", "an attribute from the dump breaks out of its quotes: " + snippet(b, loc[0])}}
		}
	}
	return nil
}

// escaped says whether the byte at i is preceded by an odd number of
// backslashes.
func escaped(b []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && b[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// inCodeSpan says whether position i of b lies inside a Markdown code
// span on its line (an odd number of unescaped backtick runs before it).
func inCodeSpan(b []byte, i int) bool {
	start := bytes.LastIndexByte(b[:i], '\n') + 1
	line := b[start:i]
	runs := 0
	for j := 0; j < len(line); j++ {
		if line[j] == '`' && !escaped(line, j) {
			runs++
			for j+1 < len(line) && line[j+1] == '`' {
				j++
			}
		}
	}
	return runs%2 == 1
}

// wellFormedXML parses b to the end.
func wellFormedXML(b []byte) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("JUnit XML does not parse: %w", err)
		}
	}
}

// snippet quotes up to 60 bytes of b around i.
func snippet(b []byte, i int) string {
	lo, hi := max(i-20, 0), min(i+40, len(b))
	return fmt.Sprintf("%q", b[lo:hi])
}
