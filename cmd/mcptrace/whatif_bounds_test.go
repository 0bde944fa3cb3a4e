package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/internal/hostile"
)

// list returns n comma-separated values made by f.
func list(n int, f func(i int) string) string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = f(i)
	}
	return strings.Join(vs, ",")
}

// TestWhatifGridOverTheCapIsAUsageError pins whatif.MaxGrid at the
// command: a grid of exactly the cap replays a row per combination, one
// combination more is refused with exit 2 before the dump is read (the
// dump argument does not exist), the message naming the lists, the
// product and the limit.
func TestWhatifGridOverTheCapIsAUsageError(t *testing.T) {
	dump := "../../testdata/traces/ttl-and-redial.otlp.jsonl"
	ttls := list(100, func(i int) string { return fmt.Sprintf("%ds", i+1) })
	perKeys := list(100, func(i int) string { return fmt.Sprint(i + 1) })
	for _, tc := range []struct {
		name     string
		args     []string
		wantRows int
		want     string
	}{
		{"exactly the cap", []string{"--idle-ttl", ttls, "--idle-per-key", perKeys, dump}, whatif.MaxGrid, ""},
		{"one combination over", []string{"--idle-ttl", ttls, "--idle-per-key", perKeys + ",peak", "missing.jsonl"}, 0,
			"100 --idle-ttl values × 101 --idle-per-key values × 1 --max-idle values × 1 --prewarm values make 10,100 settings combinations, over the limit of 10,000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := execute(t, append([]string{"whatif", "--format", "json", "--recorded-idle-ttl", "1s", "--recorded-idle-per-key", "1"}, tc.args...)...)
			if tc.want != "" {
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want exit 2 saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Rows []json.RawMessage `json:"rows"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			if len(got.Rows) != tc.wantRows {
				t.Errorf("%d rows, want %d", len(got.Rows), tc.wantRows)
			}
		})
	}
}

// TestWhatifReplayCanceledExits130 pins that a replay stopped by Ctrl-C
// (its context canceled) is the CLI's interruption, exit 130, and that it
// stops before replaying anything when canceled before it starts.
func TestWhatifReplayCanceledExits130(t *testing.T) {
	c := whatif.NewCollector()
	w := c.Workload()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	set := whatif.Settings{IdleTTL: time.Minute, IdlePerKey: 1, MaxIdle: 64}
	rows, err := replayRows(ctx, w, set, []whatif.Settings{set}, whatif.Marks{})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitInterrupted || !errors.Is(err, context.Canceled) || rows != nil {
		t.Errorf("rows %v, error %v: want exit %d wrapping context.Canceled", rows, err, exitInterrupted)
	}
}

// TestWhatifReplayWorkOverTheBudgetIsAUsageError pins
// whatif.MaxReplayedAcquires at the command: a grid within MaxGrid whose
// combinations times the dump's acquires pass the budget is refused with
// exit 2 once the dump is read, before any replay; the same grid on a
// small dump is replayed.
func TestWhatifReplayWorkOverTheBudgetIsAUsageError(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.jsonl")
	var b bytes.Buffer
	if err := hostile.Executions(&b, 3_000); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(big, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ttls := list(100, func(i int) string { return fmt.Sprintf("%ds", i+1) })
	perKeys := list(100, func(i int) string { return fmt.Sprint(i + 1) })
	for _, tc := range []struct{ name, dump, want string }{
		{"a small dump", "../../testdata/traces/ttl-and-redial.otlp.jsonl", ""},
		{"a dump of 3,000 acquires", big, "10,000 settings combinations × 3,000 acquires make 30,000,000 acquire replays, over the limit of 10,000,000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := execute(t, "whatif", "--format", "json", "--idle-ttl", ttls, "--idle-per-key", perKeys, tc.dump)
			var ee *exitError
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (!errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want exit 2 saying %q", err, tc.want)
			}
		})
	}
}
