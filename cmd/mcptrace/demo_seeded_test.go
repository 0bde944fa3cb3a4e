package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/goleak"

	"github.com/mcptrace/mcptrace/internal/demo"
	"github.com/mcptrace/mcptrace/spans"
)

// TestDemoSeededDumpAgreesWithThePoolAndRecordsItsSettings runs the seeded
// workload through the CLI at a test's time scale: the pools' own counters
// and what the analyzer reads back in the dump (told the seeded TTL) agree
// miss by miss, none unexplained; and every acquire span carries the
// settings the flags gave. With a pre-warm of the two most recent keys at
// every restart: the first acquire of a key whose pre-warmed session
// expired unused is ttl to the pool (a known key whose session expired)
// and to the analyzer (a pre-warm handshake is its pair's first session),
// not cold.
func TestDemoSeededDumpAgreesWithThePoolAndRecordsItsSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the seeded demo's pool against a fixture, about 4 s")
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dump := filepath.Join(t.TempDir(), "seeded.jsonl")
	out, _, err := execute(t, "demo", "--format", "json", "--dump", dump, "--seed", "3", "--scopes", "3", "--executions", "8",
		"--idle-ttl", "100ms", "--gap", "150ms", "--idle-per-key", "1", "--prewarm", "recent:2")
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Modes    []demo.Result `json:"modes"`
		Analysis struct {
			Pool struct {
				Acquires    int              `json:"acquires"`
				Hits        int              `json:"hits"`
				Handshakes  int              `json:"handshakes"`
				MissReasons map[string]int64 `json:"miss_reasons"`
			} `json:"pool"`
		} `json:"analysis"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("demo JSON: %v\n%s", err, out)
	}
	if len(got.Modes) != 1 || got.Modes[0].Mode != demo.ModeSeeded || got.Modes[0].Seed == nil || *got.Modes[0].Seed != 3 {
		t.Fatalf("modes = %+v, want one seeded run of seed 3", got.Modes)
	}
	r, a := got.Modes[0], got.Analysis.Pool
	if r.Errors != 0 || r.Acquires != int64(r.Calls) || r.MissReasons[spans.MissTTL] == 0 || r.PrewarmDials != 4 {
		t.Errorf("run: %d errors, %d acquires for %d calls, %d ttl misses, %d pre-warm dials; want 0, one per call, some, 4", r.Errors, r.Acquires, r.Calls, r.MissReasons[spans.MissTTL], r.PrewarmDials)
	}
	if int64(a.Acquires) != r.Acquires || int64(a.Hits) != r.Hits || a.Handshakes != r.SessionsOpened {
		t.Errorf("analysis: %d acquires, %d hits, %d handshakes; the run: %d, %d, %d sessions opened", a.Acquires, a.Hits, a.Handshakes, r.Acquires, r.Hits, r.SessionsOpened)
	}
	for _, reason := range spans.MissReasons {
		if a.MissReasons[reason] != r.MissReasons[reason] {
			t.Errorf("%s misses: analysis %d, the pools %d", reason, a.MissReasons[reason], r.MissReasons[reason])
		}
	}
	want := map[string]string{spans.AttrPoolIdleTTL: "0.1", spans.AttrPoolMaxIdlePerKey: "1", spans.AttrPoolIdleSizing: spans.IdleSizingFixed}
	acquires := 0
	eachDumpSpan(t, dump, func(_ pcommon.Resource, s ptrace.Span) {
		if s.Name() != spans.SpanAcquire {
			return
		}
		acquires++
		for k, v := range want {
			if got, _ := s.Attributes().Get(k); got.AsString() != v {
				t.Errorf("acquire span %s = %q, want %q", k, got.AsString(), v)
			}
		}
	})
	if int64(acquires) != r.Acquires {
		t.Errorf("dump: %d acquire spans, want %d", acquires, r.Acquires)
	}
}

// TestDemoSeededRejectsBadSettings: each bad seeded flag is a usage error
// (exit 2) that names the flag and what it accepts.
func TestDemoSeededRejectsBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"idle-per-key zero", []string{"--idle-per-key", "0"}, `--idle-per-key "0": expected peak or a positive number`},
		{"idle-per-key word", []string{"--idle-per-key", "lots"}, `--idle-per-key "lots": expected peak or a positive number`},
		{"prewarm zero", []string{"--prewarm", "recent:0"}, `--prewarm "recent:0": expected none or recent:N`},
		{"prewarm all", []string{"--prewarm", "all"}, `--prewarm "all": expected none or recent:N`},
		{"idle-ttl zero", []string{"--idle-ttl", "0s"}, "--idle-ttl 0s: expected a positive duration"},
		{"gap negative", []string{"--gap", "-1s"}, "--gap -1s: expected a positive duration"},
		{"seed with pooled", []string{"--seed", "2", "--mode", "pooled"}, "--seed: applies to the seeded workload (--mode seeded), not --mode pooled"},
		{"prewarm with live", []string{"--prewarm", "recent:1", "--duration", "1h"}, "--prewarm: applies to the seeded workload (--mode seeded), not --mode live"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := execute(t, append([]string{"demo", "--dump", ""}, tc.args...)...)
			var ee *exitError
			if err == nil || !errors.As(err, &ee) || ee.code != 2 {
				t.Fatalf("err = %v, want a usage error with exit code 2", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
		})
	}
}
