package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/gate"
	"github.com/mcptrace/mcptrace/analyze/htmlreport"
)

// htmlData reads the data embedded in a written report.
func htmlData(t *testing.T, path string) htmlreport.Report {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("report not written: %v", err)
	}
	raw, err := htmlreport.ExtractData(page)
	if err != nil {
		t.Fatal(err)
	}
	var h htmlreport.Report
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatal(err)
	}
	return h
}

// TestHTMLReportFlags pins the commands' HTML outputs: analyze --format
// html -o FILE (no verdict), check --html FILE (its verdict on top, the
// rules' traces linked with --trace-url), and the usage errors.
func TestHTMLReportFlags(t *testing.T) {
	dump := filepath.Join("..", "..", "testdata", "traces", "unexplained-miss.otlp.jsonl")
	dir := t.TempDir()

	page := filepath.Join(dir, "analyze.html")
	if out, _, err := execute(t, "analyze", "--format", "html", "-o", page, dump); err != nil || out != "" {
		t.Fatalf("analyze --format html -o: err %v, stdout %q", err, out)
	}
	if h := htmlData(t, page); h.Verdict != nil || h.Headline.UnexplainedMisses == nil || *h.Headline.UnexplainedMisses != 1 || len(h.Offenders) == 0 {
		t.Errorf("analyze report: verdict %v, unexplained %v, %d offenders", h.Verdict, h.Headline.UnexplainedMisses, len(h.Offenders))
	}

	page = filepath.Join(dir, "check.html")
	_, _, err := execute(t, "check", "--html", page, "--trace-url", "https://tempo.example/{trace_id}", dump)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != gate.ExitFail {
		t.Fatalf("check: %v, want exit 1", err)
	}
	h := htmlData(t, page)
	if h.Verdict == nil || h.Verdict.Verdict != string(gate.StatusFail) || h.Verdict.ExitCode != 1 {
		t.Fatalf("check report verdict = %+v, want fail", h.Verdict)
	}
	linked := 0
	for _, o := range h.Offenders {
		for _, ex := range o.Examples {
			if ex.URL != "https://tempo.example/"+ex.TraceID {
				t.Errorf("%s: link %q", o.ID, ex.URL)
			}
			linked++
		}
	}
	if linked == 0 {
		t.Error("no offending trace linked")
	}

	for name, args := range map[string][]string{
		"script trace url":    {"analyze", "--format", "html", "-o", filepath.Join(dir, "x.html"), "--trace-url", "javascript:alert({trace_id})", dump},
		"no placeholder":      {"check", "--html", filepath.Join(dir, "y.html"), "--trace-url", "https://tempo.example/", dump},
		"-o in no directory":  {"analyze", "-o", filepath.Join(dir, "missing", "z.txt"), dump}, // -o takes every format; an unwritable one is refused first
		"unknown format html": {"analyze", "--format", "htm", dump},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := execute(t, args...)
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != 2 {
				t.Errorf("err = %v, want a usage error (exit 2)", err)
			}
			for _, f := range []string{"x.html", "y.html", "z.txt"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					t.Errorf("%s written despite the usage error", f)
				}
			}
		})
	}
}

// TestDemoWritesItsHTMLReportBesideTheDump pins that the demo's table output
// names the report it wrote next to its dump.
func TestDemoWritesItsHTMLReportBesideTheDump(t *testing.T) {
	dump := filepath.Join(t.TempDir(), "run.jsonl")
	out, _, err := execute(t, "demo", "--dump", dump, "--scopes", "1", "--executions", "2")
	if err != nil {
		t.Fatal(err)
	}
	page := strings.TrimSuffix(dump, ".jsonl") + ".html"
	if !strings.Contains(out, page) {
		t.Errorf("demo output does not name %s:\n%s", page, out)
	}
	if h := htmlData(t, page); h.Headline.Acquires == nil || *h.Headline.Acquires == 0 || len(h.Scopes) == 0 {
		t.Errorf("demo report has %v acquires in %d scopes", h.Headline.Acquires, len(h.Scopes))
	}
}
