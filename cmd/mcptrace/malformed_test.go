package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/internal/testbound"
	"go.uber.org/goleak"
)

// The malformed corpus (testdata/malformed, see analyze/internal/engine/malformed_test.go)
// run through the real binary: what a user or a CI job sees. A file's name
// says what it must give: partial-* a report marked partial, with a warning
// naming the file and the place, and exit 0; cut-* a whole report with one
// warning naming the value cut, exit 0 under --strict too; readable-* a clean report and
// exit 0; anything else exit 2 with an error naming the file. Nothing may
// panic, hang or print a goroutine dump.

const malformedCorpus = "../../testdata/malformed/"

// buildForMalformed returns the binary the package's tests share.
func buildForMalformed(t *testing.T) string {
	t.Helper()
	return builtBinary(t)
}

// malformedRaceBuild reports whether this test binary was built with -race.
func malformedRaceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range bi.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// malformedRun is one run of the binary.
type malformedRun struct {
	code           int
	stdout, stderr string
}

// runForMalformed runs bin with args (and stdin, if not nil), failing the test if
// it does not exit before the test binary's deadline (a hang) or prints a
// panic.
func runForMalformed(t *testing.T, bin string, stdin []byte, args ...string) malformedRun {
	t.Helper()
	ctx, cancel := testbound.Context(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mcptrace %s did not exit before the test binary's deadline: a hang", strings.Join(args, " "))
	}
	r := malformedRun{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	default:
		t.Fatalf("run mcptrace: %v", err)
	}
	for _, bad := range []string{"panic", "goroutine ", "fatal error"} {
		if strings.Contains(r.stderr, bad) || strings.Contains(r.stdout, bad) {
			t.Fatalf("mcptrace %s printed %q:\n%s%s", strings.Join(args, " "), bad, r.stderr, r.stdout)
		}
	}
	return r
}

// malformedPlace matches a file named with a place: path:line and/or (byte N).
func malformedPlace(path string) *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(path) + `(:\d+)?( \(byte \d+\))?: expected `)
}

// TestAnalyzeHostileInput builds the binary once and runs it over the
// corpus and over partial dumps on stdin.
func TestAnalyzeHostileInput(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	bin := buildForMalformed(t)
	t.Run("corpus", func(t *testing.T) { testMalformedCorpus(t, bin) })
	t.Run("partial stdin", func(t *testing.T) { testPartialDumpFromStdin(t, bin) })
}

// testMalformedCorpus runs `mcptrace analyze --format json` on every corpus
// file.
func testMalformedCorpus(t *testing.T, bin string) {
	entries, err := os.ReadDir(malformedCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 30 {
		t.Errorf("the corpus holds %d inputs, want at least 30", len(entries))
	}
	for _, e := range entries {
		name := e.Name()
		path := malformedCorpus + name
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each run waits mostly on a process starting
			r := runForMalformed(t, bin, nil, "analyze", "--format", "json", path)
			switch {
			case strings.HasPrefix(name, "partial-"):
				// Exit 3 says no span read was recognised: junk names.
				if r.code != 0 && (r.code != 3 || !strings.Contains(r.stderr, "mcptrace: no span recognised")) {
					t.Fatalf("exit %d, want 0 for a partial dump: %s", r.code, r.stderr)
				}
				if !malformedPlace(path).MatchString(r.stderr) || !strings.Contains(r.stderr, "mcptrace: warning: "+path) {
					t.Errorf("stderr does not warn naming %s and the place:\n%s", path, r.stderr)
				}
				rep := decodeReport(t, r.stdout)
				if !rep.Partial || len(rep.Inputs) != 1 || !rep.Inputs[0].Partial || len(rep.Inputs[0].Warnings) == 0 {
					t.Errorf("report partial %v, inputs %+v: want the report and its input marked partial, with the warning", rep.Partial, rep.Inputs)
				}
				if rep.Spans == 0 || rep.Inputs[0].Spans == 0 {
					t.Errorf("report has %d spans: want the figures of what was read", rep.Spans)
				}
				// --strict refuses the damage.
				s := runForMalformed(t, bin, nil, "analyze", "--strict", path)
				if s.code != 2 || !malformedPlace(path).MatchString(s.stderr) {
					t.Errorf("--strict: exit %d, stderr %q; want 2 naming the file and the place", s.code, s.stderr)
				}
			case strings.HasPrefix(name, "cut-"):
				// A value nested past the depth limit is cut: the dump is
				// read whole, with one warning naming the place, and --strict
				// reads it too (nothing was lost but the cut value).
				if r.code != 0 {
					t.Fatalf("exit %d, want 0 for a dump with one value cut: %s", r.code, r.stderr)
				}
				if !malformedPlace(path).MatchString(r.stderr) || strings.Count(r.stderr, "cut there") != 1 {
					t.Errorf("stderr does not warn once naming %s and the place of the cut:\n%s", path, r.stderr)
				}
				rep := decodeReport(t, r.stdout)
				if rep.Partial || rep.Spans == 0 {
					t.Errorf("report partial %v, spans %d: want a whole report with the span kept", rep.Partial, rep.Spans)
				}
				if s := runForMalformed(t, bin, nil, "analyze", "--strict", path); s.code != 0 {
					t.Errorf("--strict: exit %d, stderr %q; want 0: a cut value is no damage", s.code, s.stderr)
				}
			case strings.HasPrefix(name, "readable-"):
				if r.code != 0 {
					t.Fatalf("exit %d, want 0 for a well-formed dump: %s", r.code, r.stderr)
				}
				if strings.Contains(r.stderr, "warning") {
					t.Errorf("a well-formed dump gives a warning:\n%s", r.stderr)
				}
				rep := decodeReport(t, r.stdout)
				if rep.Partial || rep.Spans == 0 {
					t.Errorf("report partial %v, spans %d: want a whole report", rep.Partial, rep.Spans)
				}
			default:
				if r.code != 2 {
					t.Fatalf("exit %d, want 2 (nothing usable was read); stderr:\n%s", r.code, r.stderr)
				}
				if !malformedPlace(path).MatchString(r.stderr) {
					t.Errorf("stderr does not name %s, the place and what was expected:\n%s", path, r.stderr)
				}
				if r.stdout != "" {
					t.Errorf("a failed analysis printed a report:\n%s", r.stdout)
				}
			}
		})
	}
}

// testPartialDumpFromStdin pipes dumps cut short into `mcptrace analyze
// -`: the figures of what was read, a warning naming stdin and the place,
// a JSON report marked partial, exit 0.
func testPartialDumpFromStdin(t *testing.T, bin string) {
	whole, err := os.ReadFile(traces + "prod-cold-starts.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	wholeProto, err := os.ReadFile(traces + "prod-cold-starts.otlp.pb")
	if err != nil {
		t.Fatal(err)
	}
	full := runForMalformed(t, bin, whole, "analyze", "--format", "json", "-")
	if full.code != 0 {
		t.Fatalf("the whole dump: exit %d: %s", full.code, full.stderr)
	}
	all := decodeReport(t, full.stdout)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"json lines with the last line cut", whole[:len(whole)-len(whole)/7]},
		{"proto cut mid-record", wholeProto[:len(wholeProto)-len(wholeProto)/5]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runForMalformed(t, bin, tc.data, "analyze", "--format", "json", "-")
			if r.code != 0 {
				t.Fatalf("exit %d, want 0: %s", r.code, r.stderr)
			}
			if !malformedPlace("-").MatchString(r.stderr) || !strings.Contains(r.stderr, "report marked partial") {
				t.Errorf("stderr does not warn naming stdin and the place:\n%s", r.stderr)
			}
			rep := decodeReport(t, r.stdout)
			if !rep.Partial || !rep.Inputs[0].Partial || rep.Inputs[0].Path != "-" {
				t.Errorf("report partial %v, inputs %+v: want partial, naming -", rep.Partial, rep.Inputs)
			}
			if rep.Spans == 0 || rep.Spans >= all.Spans || rep.Pool.Acquires == 0 || rep.Pool.Acquires >= all.Pool.Acquires {
				t.Errorf("partial report: %d spans, %d acquires; the whole dump has %d and %d: want some but not all",
					rep.Spans, rep.Pool.Acquires, all.Spans, all.Pool.Acquires)
			}
			// The JSON contract says so in its own words.
			var raw map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil || raw["partial"] != true || raw["schema"] != report.Schema {
				t.Errorf("JSON report: partial %v, schema %v (%v)", raw["partial"], raw["schema"], err)
			}
		})
	}
}
