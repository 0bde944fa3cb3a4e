package fuzz

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

// The oracle flags each thing a report must never carry from the dump, in
// the formats where it matters, and lets its inert forms through.
func TestScanOutputFlagsLiveMarkupAndEscapesButNotTheirInertForms(t *testing.T) {
	cases := []struct {
		name, format, out, want string // want: a problem kind, "" for none
	}{
		{"raw ESC in a table", "table", "scope \x1b[31mred", "escape"},
		{"ESC shown as text", "table", `scope \x1b[31mred`, ""},
		{"bidi override", "table", "safe\u202eexe.txt", "escape"},
		{"bidi isolate", "markdown", "a\u2066b", "escape"},
		{"zero-width space", "html", "pa\u200bss", "escape"},
		{"byte order mark inside", "table", "x\ufeffy", "escape"},
		{"line separator", "table", "one\u2028two", "escape"},
		{"paragraph separator", "junit", "<a>one\u2029two</a>", "escape"},
		{"C1 control", "stderr", "x\u0085y", "escape"},
		{"carriage return", "stderr", "progress\rover", "escape"},
		{"invalid UTF-8", "stderr", "byte 12: \xff", "escape"},
		{"plain text and box drawing", "table", "│ ok … ✅ │\n\ttab", ""},
		{"Markdown link", "markdown", "| s [click me](https://fuzz.invalid/a) |", "markup"},
		{"Markdown image", "markdown", "![pixel](https://fuzz.invalid/p.png)", "markup"},
		{"Markdown link, brackets escaped", "markdown", `\[click me\]\(https://fuzz.invalid/a\)`, ""},
		{"Markdown link, closing bracket escaped", "markdown", `[click me\](https://fuzz.invalid/a)`, ""},
		{"Markdown link in a code span", "markdown", "| `[click me](https://fuzz.invalid/a)` |", ""},
		{"autolink", "markdown", "<https://fuzz.invalid/auto>", "markup"},
		{"autolink escaped", "markdown", "&lt;https://fuzz.invalid/auto>", ""},
		{"reference definition", "markdown", "x\n[1]: https://fuzz.invalid/r\n", "markup"},
		{"HTML tag in Markdown", "markdown", "<img src=x onerror=alert(1) data-fuzz=1>", "markup"},
		{"HTML tag escaped in Markdown", "markdown", "&lt;img src=x onerror=alert(1) data-fuzz=1>", ""},
		{"HTML tag in a page", "html", `<td>"><b data-fuzz=2>x</b></td>`, "markup"},
		{"HTML tag escaped in a page", "html", `<td>&#34;&gt;&lt;b data-fuzz=2&gt;</td>`, ""},
		{"attribute breaking out of its quotes", "html", `<td title="x" onfuzz="1">`, "markup"},
		{"the attribute's text outside any tag", "html", `<td>x" onfuzz="1</td>`, ""},
		{"the attribute's text JSON-escaped in a script", "html", `<script>{"a":"x\" onfuzz=\"1"}</script>`, ""},
		{"JSON that does not parse", "json", `{"a":`, "bad-json"},
		{"raw control byte in JSON", "json", "{\"a\":\"\x01\"}", "escape"},
		{"bidi in JSON is data", "json", `{"a":"safe` + "\u202e" + `exe"}`, ""},
		{"JUnit that does not parse", "junit", `<testsuite><testcase></testsuite>`, "bad-xml"},
		{"injected workflow command", "stderr", "warning: x\n::warning title=fuzzinj::injected\n", "annotation"},
		{"workflow command escaped", "stderr", "::error file=x::x%0A::warning title=fuzzinj::injected\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var kinds []string
			for _, p := range scanOutput(c.format, []byte(c.out)) {
				kinds = append(kinds, p.kind)
			}
			switch {
			case c.want == "" && len(kinds) > 0:
				t.Errorf("flagged %v, want nothing", kinds)
			case c.want != "" && !contains(kinds, c.want):
				t.Errorf("flagged %v, want %s", kinds, c.want)
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// judgeRun turns each broken promise of a run into its finding kind, and a
// clean run into none.
func TestJudgeRunNamesEachBrokenPromise(t *testing.T) {
	lim := DefaultLimits()
	good := &Case{Family: "markup", RawBytes: 1000, Budget: "64MiB"}
	broken := &Case{Family: "sources", RawBytes: 1000, Broken: true, Budget: "64MiB"}
	check := run{name: "check-table", stdout: "table"}
	analyzeJSON := run{name: "analyze-json", stdout: "json"}
	cases := []struct {
		name string
		c    *Case
		r    run
		res  result
		want string // "" for no finding
	}{
		{"a clean pass", good, check, result{code: 0, rss: 30 << 20, stdout: []byte("ok\n")}, ""},
		{"a clean failure", good, check, result{code: 1, rss: 30 << 20}, ""},
		{"a Go panic", good, check, result{code: 2, stderr: []byte("panic: runtime error: index out of range\n\ngoroutine 1 [running]:\n")}, "crash"},
		{"a stack overflow", good, check, result{code: 2, stderr: []byte("runtime: goroutine stack exceeds 1000000000-byte limit\nfatal error: stack overflow\n")}, "crash"},
		{"killed by a signal", good, check, result{code: -1, signaled: "killed"}, "crash"},
		{"past the wall bound", good, check, result{code: -1, killed: true}, "wall"},
		{"not done after SIGINT", good, run{name: "check-interrupt"}, result{code: -1, killed: true, interruptd: true}, "interrupt"},
		{"exit 130 after SIGINT", good, run{name: "check-interrupt"}, result{code: 130, interruptd: true}, ""},
		{"exit 130 without a signal", good, check, result{code: 130}, "exit-code"},
		{"RSS past three times the budget plus 128 MiB", good, check, result{code: 0, rss: 320<<20 + 1}, "rss"},
		{"RSS at three times the budget plus 128 MiB", good, check, result{code: 0, rss: 320 << 20}, ""},
		{"output past its bound", good, check, result{code: 0, stdout: make([]byte, OutputBound(good)+1)}, "output-size"},
		{"output killed past the cap", good, check, result{code: -1, overflow: true}, "output-size"},
		{"check exit 0 on a broken dump", broken, check, result{code: 0}, "green-on-broken"},
		{"check exit 3 on a broken dump", broken, check, result{code: 3}, ""},
		{"check exit 2 on a broken dump", broken, check, result{code: 2}, ""},
		{"analyze exit 0 not partial on a broken dump", broken, analyzeJSON, result{code: 0, stdout: []byte(`{"partial":false}`)}, "green-on-broken"},
		{"analyze exit 0 partial on a broken dump", broken, analyzeJSON, result{code: 0, stdout: []byte(`{"partial":true}`)}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fs := judgeRun(c.c, c.r, c.res, lim)
			var kinds []string
			for _, f := range fs {
				kinds = append(kinds, f.Kind)
			}
			switch {
			case c.want == "" && len(fs) > 0:
				t.Errorf("findings %v, want none", fs)
			case c.want != "" && !contains(kinds, c.want):
				t.Errorf("findings %v, want a %s", fs, c.want)
			}
		})
	}
}

// The RSS bound follows the case's budget and never passes the limit's.
func TestMaxRSSFollowsTheBudget(t *testing.T) {
	lim := DefaultLimits()
	for _, c := range []struct {
		budget string
		want   int64
	}{{"64MiB", 320 << 20}, {"100MiB", 428 << 20}, {"192MiB", 512 << 20}, {"1GiB", 512 << 20}, {"default", 512 << 20}, {"", 320 << 20}} {
		if got := maxRSSOf(&Case{Budget: c.budget}, lim); got != c.want {
			t.Errorf("budget %q: bound %d MiB, want %d MiB", c.budget, got>>20, c.want>>20)
		}
	}
}

// One family, seed, size and mask: one set of bytes; another seed, other
// bytes (for the families that draw from it).
func TestGenerateIsAFunctionOfItsFourArguments(t *testing.T) {
	digest := func(c *Case) string {
		names := make([]string, 0, len(c.Files))
		for n := range c.Files {
			names = append(names, n)
		}
		sort.Strings(names)
		h := sha256.New()
		for _, n := range names {
			fmt.Fprintf(h, "%s\x00%x\x00", n, sha256.Sum256(c.Files[n]))
		}
		fmt.Fprintf(h, "%v %v %v %s %v", c.Inputs, c.Special, c.Broken, c.Config, c.Args)
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	for _, f := range Families() {
		t.Run(f.Name, func(t *testing.T) {
			size := min(f.MaxSize, 300)
			all := uint64(1)<<uint(f.Parts) - 1
			a, err := Generate(f.Name, 7, size, all)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := Generate(f.Name, 7, size, all)
			if digest(a) != digest(b) {
				t.Fatal("the same four arguments gave two cases")
			}
			if len(a.Inputs) == 0 || a.What == "" || a.RawBytes == 0 {
				t.Errorf("case without inputs, description or size: %+v", a)
			}
			for _, in := range a.Inputs {
				if _, ok := a.Files[in]; !ok && !strings.Contains(in, "/") && in != "dumps" {
					t.Errorf("input %s is not among the files", in)
				}
			}
		})
	}
	if _, err := Generate("nope", 1, 1, 1); err == nil {
		t.Error("Generate(nope) succeeded")
	}
}

// A part that says data is missing marks the case broken; a part that
// does not leaves it unmarked.
func TestGenerateMarksWhatASourceSaidIsMissing(t *testing.T) {
	for _, c := range []struct {
		family string
		mask   uint64
		broken bool
	}{
		{"sources", 1 << 0, true},  // Jaeger errors
		{"sources", 1 << 1, false}, // Jaeger errors: []
		{"sources", 1 << 2, true},  // Tempo bad base64
		{"sources", 1 << 3, true},  // Tempo raw 0xff
		{"special-files", 1 << 0, true},
		{"special-files", 1 << 1, true},
		{"special-files", 1 << 3, false}, // a FIFO: no promise but an answer
		{"encodings", 1 << 0, true},
		{"encodings", 1 << 3, false},
		{"markup", 1, false},
	} {
		got, err := Generate(c.family, 3, 64, c.mask)
		if err != nil {
			t.Fatal(err)
		}
		if got.Broken != c.broken {
			t.Errorf("%s mask %b (%s): broken %v, want %v", c.family, c.mask, got.What, got.Broken, c.broken)
		}
	}
}

// The Jaeger errors the sources family promises are in the answer it
// writes (a replace that matched nothing would make a case that says
// nothing is missing, marked broken).
func TestSourcesWriteTheErrorsTheyPromise(t *testing.T) {
	for _, mask := range []uint64{1 << 0, 1 << 4} {
		c, err := Generate("sources", 5, 4, mask)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(c.Files["jaeger.json"]), `"msg":"trace not found`); n != 3 {
			t.Errorf("mask %b: %d errors in the answer, want 3 of 4 traces:\n%s", mask, n, c.Files["jaeger.json"])
		}
	}
	// The bad base64 is in the Tempo answer (indented JSON: a run found
	// the case unbroken, the id never damaged).
	c, err := Generate("sources", 5, 4, 1<<2)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(c.Files["tempo.json"]), "!!not*base64") {
		t.Errorf("no damaged span id in the Tempo answer:\n%.400s", c.Files["tempo.json"])
	}
}

// Pick spreads seeds over every family, sizes within each family's bound.
func TestPickCoversEveryFamilyWithinItsBounds(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		name, size, mask := Pick(seed)
		f, err := FamilyByName(name)
		if err != nil {
			t.Fatal(err)
		}
		seen[name] = true
		if size < 1 || size > f.MaxSize || mask == 0 || mask >= 1<<uint(f.Parts) {
			t.Errorf("seed %d: %s size %d mask %b out of bounds", seed, name, size, mask)
		}
	}
	if len(seen) != len(Families()) {
		t.Errorf("200 seeds tried %d of %d families", len(seen), len(Families()))
	}
}

// Every family generates for any seed and mask the driver may pick (sizes
// capped to keep the test short): a generator panic is a fuzzer bug.
func TestEveryPickGenerates(t *testing.T) {
	for seed := uint64(1); seed <= 90; seed++ {
		family, size, mask := Pick(seed)
		if _, err := Generate(family, seed, min(size, 2000), mask); err != nil {
			t.Error(err)
		}
	}
	// The damaged zstd record of every scenario, one resource or many
	// (seed 1145 of a run found a scenario of one).
	for seed := uint64(1); seed <= 30; seed++ {
		if _, err := Generate("encodings", seed, 1, 1<<2); err != nil {
			t.Error(err)
		}
	}
}

// The polled peak RSS is a child's only: this process's own status (its
// parent is not itself) and a pid that is gone read as nothing, so a pid
// reused after the child was reaped never lends its memory to a run.
func TestVmHWMCountsOnlyAChildOfThisProcess(t *testing.T) {
	if got := vmHWM(os.Getpid()); got != 0 {
		t.Errorf("vmHWM(own pid) = %d, want 0: not a child", got)
	}
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if got := vmHWM(cmd.Process.Pid); got <= 0 {
		t.Errorf("vmHWM(child) = %d, want its peak RSS", got)
	}
}
