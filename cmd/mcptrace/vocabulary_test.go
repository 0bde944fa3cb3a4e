package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptrace/mcptrace/analyze/report"
	"go.uber.org/goleak"
)

// TestCLIReadsAConfigVocabularyAndEveryBuiltinProfile: a --config file's
// vocabulary: block is what analyze reads, --profile takes every built-in
// name, the two together are a usage error, and `rules FILE` validates the
// block, every mistake at once.
func TestCLIReadsAConfigVocabularyAndEveryBuiltinProfile(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The semconv conventions, written out as a user would.
	good := write("vocab.yaml", `vocabulary:
  name: my-semconv
  calls: {name_regex: '^tools/call '}
  session: {attribute: mcp.session.id}
  attributes: {server_address: server.address, server_port: server.port}
`)
	bad := write("bad.yaml", `vocabulary:
  name: my-semconv
  calls: {name_regex: '('}
  sesion: {attribute: mcp.session.id}
`)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		check    func(report.Report) bool // on a JSON report, when set
		inStdout string
		inStderr []string
	}{
		{"the config's vocabulary reads a semconv dump", []string{"analyze", "--format", "json", "--config", good, traces + "semconv.tempo.json"}, 0,
			func(r report.Report) bool {
				return r.Settings.Profile == "my-semconv" && r.Executions.MultiSession == 1 && r.Pool.Handshakes == 3 && r.Pool.Acquires == 4
			}, "", nil},
		{"--profile with a config vocabulary is a usage error", []string{"analyze", "--profile", "semconv", "--config", good, traces + "semconv.tempo.json"}, 2,
			nil, "", []string{"--profile semconv and --config", "vocabulary: my-semconv: give one"}},
		{"--profile mcptrace", []string{"analyze", "--format", "json", "--profile", "mcptrace", traces + "pooled.otlp.jsonl"}, 0,
			func(r report.Report) bool { return r.Pool.Hits == 5 && r.Settings.Profile == "mcptrace" }, "", nil},
		{"--profile openllmetry reads the OpenLLMetry corpus", []string{"analyze", "--format", "json", "--profile", "openllmetry", traces + "corpus/openllmetry/pooled.jsonl"}, 0,
			func(r report.Report) bool {
				// The golden's figures (testdata/traces/corpus): 15 calls on one session.
				return r.Pool.Acquires == 15 && r.Pool.Hits == 14 && r.Pool.Handshakes == 1 && r.Settings.Profile == "openllmetry"
			}, "", nil},
		// Forced onto a dump it cannot read, a vocabulary recognises no
		// span: the report is written, and the exit is 3, not a green 0.
		{"--profile openllmetry", []string{"analyze", "--format", "json", "--profile", "openllmetry", traces + "pooled.otlp.jsonl"}, 3,
			func(r report.Report) bool { return r.Pool.Acquires == 0 && r.Settings.Profile == "openllmetry" }, "", nil},
		{"an unknown profile names the built-ins", []string{"analyze", "--profile", "openllmetri", traces + "pooled.otlp.jsonl"}, 2,
			nil, "", []string{"openllmetry"}},
		{"rules validates a vocabulary-only file", []string{"rules", good}, 0, nil, "vocabulary my-semconv OK", nil},
		{"rules reports every mistake of the block", []string{"rules", bad}, 2, nil, "",
			[]string{"bad.yaml:3:23: name_regex \"(\" is not a valid regular expression", `bad.yaml:4:3: unknown key "sesion" (did you mean "session"?)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(t, "", tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s%s", code, tc.code, out, errs)
			}
			if tc.check != nil && !tc.check(decodeReport(t, out)) {
				t.Errorf("report does not hold:\n%s", out)
			}
			if !strings.Contains(out, tc.inStdout) {
				t.Errorf("stdout lacks %q:\n%s", tc.inStdout, out)
			}
			for _, w := range tc.inStderr {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
		})
	}
}
