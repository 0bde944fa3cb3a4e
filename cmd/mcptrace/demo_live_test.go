package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/internal/profiling"
)

func TestDemoLiveRunsForItsDurationServesMetricsAndWritesProfiles(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	profiles := filepath.Join(dir, "profiles")
	dump := filepath.Join(dir, "live.jsonl")
	out, stderr, err := execute(t, "demo", "--duration", "400ms", "--metrics-addr", "127.0.0.1:0",
		"--profile-dir", profiles, "--dump", dump, "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var got struct {
		Schema string          `json:"schema"`
		Dump   string          `json:"dump"`
		Live   demo.LiveResult `json:"live"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("live JSON: %v\n%s", err, out)
	}
	// What the workload does is pinned in internal/demo; here, the wiring.
	if got.Schema != "mcptrace.demo.live/v1" || got.Dump != dump || got.Live.MissReasons == nil {
		t.Errorf("live JSON = %+v", got)
	}
	if !strings.Contains(stderr, "Serving metrics at http://127.0.0.1:") {
		t.Errorf("stderr does not give the metrics URL:\n%s", stderr)
	}
	for _, name := range []string{profiling.CPUFile, profiling.HeapFile} {
		if fi, err := os.Stat(filepath.Join(profiles, name)); err != nil || fi.Size() == 0 {
			t.Errorf("profile %s missing or empty (%v)", name, err)
		}
	}
	data, err := os.ReadFile(dump)
	if err != nil || !strings.Contains(string(data), demo.SpanExecution) {
		t.Errorf("span dump %s has no %s span (err %v)", dump, demo.SpanExecution, err)
	}
}

func TestDemoLiveWritesNoDumpUnlessAsked(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if _, stderr, err := execute(t, "demo", "--mode", "live", "--duration", "50ms"); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("live mode without --dump wrote %v", entries)
	}
}

func TestDemoLiveRejectsBadFlags(t *testing.T) {
	cases := map[string][]string{
		"negative duration":    {"demo", "--duration", "-1s"},
		"mode conflicts":       {"demo", "--mode", "pooled", "--duration", "1s"},
		"bad metrics address":  {"demo", "--metrics-addr", "no-port", "--duration", "1s"},
		"two profile sinks":    {"demo", "--duration", "1s", "--pyroscope-url", "http://127.0.0.1:4040", "--profile-dir", t.TempDir()},
		"bad pyroscope scheme": {"demo", "--duration", "1s", "--pyroscope-url", "ftp://127.0.0.1"},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := execute(t, args...)
			var ee *exitError
			if err == nil || !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("err = %v, want a usage error with exit code 2", err)
			}
			if !strings.Contains(err.Error(), "--") {
				t.Errorf("error %q does not name the flag", err)
			}
		})
	}
}
