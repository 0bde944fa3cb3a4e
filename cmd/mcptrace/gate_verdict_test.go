package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/tracegen"
	"github.com/mcptrace/mcptrace/spans"
)

// httpOnlyDump writes a valid OTLP JSON-lines dump holding one HTTP server
// span and nothing of the pool: what a misconfigured exporter produces.
func httpOnlyDump(t *testing.T) string {
	t.Helper()
	line := `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"web"}}]},"scopeSpans":[{"spans":[` +
		`{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"GET /health","kind":2,"startTimeUnixNano":"1777539600000000000","endTimeUnixNano":"1777539600001000000","status":{}}]}]}]}` + "\n"
	path := filepath.Join(t.TempDir(), "http-only.jsonl")
	if err := os.WriteFile(path, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// cutDump writes the pooled dump followed by the first half of its line, with
// no newline: a Collector still writing when the gate ran.
func cutDump(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(traces + "pooled.otlp.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(path, append(data, data[:len(data)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeRules(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rules.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCheckIsNeverGreenOnMissingOrDamagedData pins the gate's verdict on a
// dump with no pool spans and on a cut dump: incomplete (exit 3) naming why,
// unless a rule allows an empty dump or --allow-partial accepts the damage.
func TestCheckIsNeverGreenOnMissingOrDamagedData(t *testing.T) {
	empty := httpOnlyDump(t)
	cut := cutDump(t)
	allowEmpty := writeRules(t, "rules:\n  - id: pool-optional\n    scope: dump\n    allow_empty: true\n    expect: {of: unexplained_misses, op: \"==\", than: 0}\n")
	strictEmpty := writeRules(t, "rules:\n  - id: pool-required\n    scope: dump\n    expect: {of: unexplained_misses, op: \"==\", than: 0}\n")
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{"no pool spans is incomplete", []string{"check", empty}, gate.ExitIncomplete,
			[]string{"INCOMPLETE one-session-per-execution", "nothing to judge: no pool spans in the dump", "verdict: INCOMPLETE (0 passed, 6 incomplete)"},
			[]string{"check incomplete: no span recognised", `"GET /health" (1)`, "no pool spans found: looked for spans named " + spans.SpanInvoke + ", " + spans.SpanAcquire, "(profile auto)"}},
		{"the semconv profile names its span names", []string{"check", "--profile", "semconv", empty}, gate.ExitIncomplete, nil,
			[]string{"looked for spans named tools/call <tool>", "(profile semconv)"}},
		{"a rule without allow_empty is incomplete", []string{"check", "--config", strictEmpty, empty}, gate.ExitIncomplete,
			[]string{"INCOMPLETE pool-required"}, []string{"no pool spans found"}},
		{"allow_empty lets a rule pass on an empty dump", []string{"check", "--format", "markdown", "--config", allowEmpty, empty}, gate.ExitPass,
			[]string{"nothing to judge: no pool spans in the dump (allowed: allow_empty)", "verdict: PASS (1 passed)"}, nil},
		{"a cut dump is incomplete", []string{"check", cut}, gate.ExitIncomplete,
			[]string{"INCOMPLETE: " + cut + " is partial", "--allow-partial"}, []string{"check incomplete: " + cut + " is partial"}},
		{"--allow-partial lets a cut dump pass", []string{"check", "--allow-partial", cut}, gate.ExitPass,
			[]string{"PARTIAL", "verdict: PASS (6 passed)"}, []string{"warning: " + cut}},
		{"--strict still refuses a cut dump", []string{"check", "--strict", cut}, gate.ExitUsage, nil, []string{cut}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, "", c.args...)
			wantOutcome(t, code, out, errOut, c.code, c.stdout, c.stderr)
		})
	}
}

// junitDoc is what the tests read back of a JUnit file.
type junitDoc struct {
	Errors int `xml:"errors,attr"`
	Suite  []struct {
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			File      string `xml:"file,attr"`
			Error     *struct {
				Message string `xml:"message,attr"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit file: %v", err)
	}
	var d junitDoc
	if err := xml.Unmarshal(data, &d); err != nil || len(d.Suite) != 1 {
		t.Fatalf("JUnit is not one suite (%v):\n%s", err, data)
	}
	return d
}

// TestCheckJUnitOnEveryOutcome pins --junit: written on an input error as an
// errored testcase naming the file and place, on an incomplete verdict with
// the reason, and an unwritable path fails before any input is read.
func TestCheckJUnitOnEveryOutcome(t *testing.T) {
	dir := t.TempDir()
	t.Run("input error", func(t *testing.T) {
		junit := filepath.Join(dir, "err.xml")
		bad := "../../testdata/malformed/bad-hex-trace-id.jsonl"
		code, _, errOut := runCLI(t, "", "check", "--strict", "--junit", junit, bad)
		if code != gate.ExitUsage {
			t.Fatalf("exit %d, want 2: %s", code, errOut)
		}
		d := readJUnit(t, junit)
		c := d.Suite[0].Cases
		if d.Errors != 1 || len(c) != 1 || c[0].Error == nil || c[0].File != bad || !malformedPlace(bad).MatchString(c[0].Error.Message) {
			t.Fatalf("JUnit = %+v, want one errored testcase naming %s and the place", d, bad)
		}
	})
	t.Run("no pool spans", func(t *testing.T) {
		junit := filepath.Join(dir, "empty.xml")
		if code, _, errOut := runCLI(t, "", "check", "--junit", junit, httpOnlyDump(t)); code != gate.ExitIncomplete {
			t.Fatalf("exit %d, want 3: %s", code, errOut)
		}
		found := false
		for _, c := range readJUnit(t, junit).Suite[0].Cases {
			found = found || c.Classname == "mcptrace.input" && c.Skipped != nil && strings.Contains(c.Skipped.Message, "no pool spans found")
		}
		if !found {
			t.Error("JUnit has no skipped mcptrace.input testcase saying no pool spans were found")
		}
	})
	for _, c := range []struct{ flag, path string }{
		{"--junit", filepath.Join(dir, "missing-dir", "check.xml")},
		{"--summary", filepath.Join(dir, "missing-dir", "summary.md")},
		{"--junit", dir},
		{"--html", filepath.Join(dir, "missing-dir", "report.html")},
	} {
		t.Run("unwritable "+c.flag, func(t *testing.T) {
			// The input does not exist either: the output path is tried first.
			code, _, errOut := runCLI(t, "", "check", c.flag, c.path, filepath.Join(dir, "no-such-dump.jsonl"))
			if code != gate.ExitUsage || !strings.Contains(errOut, c.flag+": ") || strings.Contains(errOut, "no-such-dump") {
				t.Fatalf("exit %d, want 2 with a %s error before any input is read:\n%s", code, c.flag, errOut)
			}
			if _, err := os.Stat(filepath.Join(dir, "missing-dir")); err == nil {
				t.Error("the check created the missing directory")
			}
		})
	}
}

// TestAnalyzeOutputTriedBeforeReading: analyze -o to an unwritable path is a
// usage error before any input is read.
func TestAnalyzeOutputTriedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "", "analyze", "--format", "html", "-o", filepath.Join(dir, "missing-dir", "r.html"), filepath.Join(dir, "no-such-dump.jsonl"))
	if code != gate.ExitUsage || !strings.Contains(errOut, "--output: ") || strings.Contains(errOut, "no-such-dump") {
		t.Fatalf("exit %d, want 2 with an --output error before any input is read:\n%s", code, errOut)
	}
}

// TestAnalyzeWarnsWhenNoPoolSpansWereFound: analyze still reports but,
// when no span at all was recognised, exits 3 naming what it saw; a dump
// with spans it reads and no pool span among them is a warning.
func TestAnalyzeWarnsWhenNoPoolSpansWereFound(t *testing.T) {
	code, out, errOut := runCLI(t, "", "analyze", httpOnlyDump(t))
	if code != 3 || !strings.Contains(errOut, "mcptrace: no span recognised") || !strings.Contains(out, "DUMP") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestCheckSkipsSessionlessExecutionsFromAFile runs the sessionless scenario
// through the reader the CLI uses (the fast OTLP JSON-lines path must keep
// mcp.protocol.version): the session rule judges the stateful executions
// only, and analyze groups the figures by revision.
func TestCheckSkipsSessionlessExecutionsFromAFile(t *testing.T) {
	var buf bytes.Buffer
	if err := tracegen.WriteOTLPJSONLines(&buf, tracegen.Sessionless()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sessionless.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "", "check", "--format", "json", path)
	var doc gate.CheckReport
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("exit %d, not JSON (%v): %s", code, err, errOut)
	}
	for _, r := range doc.Rules {
		if r.ID == rulefmt.RuleOneSessionPerExecution && (r.Scopes != 3 || r.Failed != 1 || r.NotApplicable != 3) {
			t.Errorf("%s: scopes %d failed %d not applicable %d, want 3, 1, 3", r.ID, r.Scopes, r.Failed, r.NotApplicable)
		}
	}
	code, out, errOut = runCLI(t, "", "analyze", "--format", "json", path)
	if r := decodeReport(t, out); code != 0 || len(r.ByProtocol) != 2 || !r.ByProtocol[1].Sessionless {
		t.Errorf("analyze: exit %d (%s), by_protocol %+v", code, errOut, r.ByProtocol)
	}
}
