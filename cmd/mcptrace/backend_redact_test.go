package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secretOutputs are each command's formats and the files it may write
// beside its standard output and error.
var secretOutputs = []struct {
	cmd     string
	formats []string
	files   []string // flags naming files
}{
	{"analyze", []string{"table", "json", "markdown", "html"}, []string{"-o"}},
	{"check", []string{"table", "json", "markdown"}, []string{"-o", "--junit", "--summary", "--html"}},
	{"whatif", []string{"table", "json", "markdown", "html"}, []string{"-o"}},
	{"diff", []string{"table", "json", "markdown"}, []string{"-o"}},
}

// runShowingBackend runs cmd in format against the backend at raw, with
// every file flag of files given a path under dir, and returns the
// exit code, and all it wrote: standard output, standard error, and
// each file.
func runShowingBackend(t *testing.T, raw, cmd, format string, files []string, window []string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	args := append([]string{cmd, "--format", format, "--jaeger", raw}, window...)
	if cmd != "diff" {
		args = append(args, "--allow-partial") // a cut window exits 0 (diff takes no such flag)
	}
	for _, fl := range files {
		args = append(args, fl, filepath.Join(dir, strings.TrimLeft(fl, "-")))
	}
	if cmd == "diff" {
		args = append(args, traces+"pooled.otlp.jsonl.golden.json")
	}
	code, stdout, stderr := runCLI(t, "", args...)
	all := stdout + stderr
	for _, fl := range files {
		b, _ := os.ReadFile(filepath.Join(dir, strings.TrimLeft(fl, "-")))
		all += string(b)
	}
	return code, all
}

// A backend URL carrying a secret (user information, a query, a
// fragment, a password that breaks the URL's parse, a redirect to
// another origin with a token) never reaches standard output, standard
// error, the -o report, the JUnit XML, the summary or the HTML page, in
// any command and any format; a URL without one is shown in the report.
func TestABackendURLsSecretIsWrittenNowhere(t *testing.T) {
	good, at := cutBackend(t)
	host := strings.TrimPrefix(good, "http://")
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/login?access_token=SECRET#tok=SECRET", http.StatusFound)
	}))
	t.Cleanup(elsewhere.Close)
	window := []string{"--service", "mcp-gateway", "--start", at.Add(-time.Minute).Format(time.RFC3339),
		"--end", at.Add(time.Hour).Format(time.RFC3339), "--backend-timeout", "5s"}
	shapes := []struct{ name, raw string }{
		{"user and password", "http://user:SECRET@" + host},
		{"a token in the query", good + "/?access_token=SECRET"},
		{"a token in the fragment", good + "/#tok=SECRET"},
		{"a password that breaks the parse", "http://user:SECRET/x@" + host},
		{"a redirect elsewhere with a token", elsewhere.URL},
	}
	for _, sh := range shapes {
		for _, c := range secretOutputs {
			for _, format := range c.formats {
				t.Run(sh.name+"/"+c.cmd+"/"+format, func(t *testing.T) {
					code, all := runShowingBackend(t, sh.raw, c.cmd, format, c.files, window)
					if code == 0 || strings.Contains(all, "SECRET") {
						t.Errorf("exit %d, want a refusal, and the secret nowhere; wrote:\n%s", code, all)
					}
				})
			}
		}
	}
	for _, c := range secretOutputs {
		code, all := runShowingBackend(t, good, c.cmd, "json", c.files, window)
		if shows := c.cmd != "whatif"; code == 2 || shows && !strings.Contains(all, host) {
			t.Errorf("%s of a URL without a secret: exit %d, want a run, its report naming %s:\n%.2000s", c.cmd, code, host, all)
		}
	}
}
