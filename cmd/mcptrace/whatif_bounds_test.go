package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/whatif"
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
	rows, err := replayRows(ctx, w, set, []whatif.Settings{set})
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitInterrupted || !errors.Is(err, context.Canceled) || rows != nil {
		t.Errorf("rows %v, error %v: want exit %d wrapping context.Canceled", rows, err, exitInterrupted)
	}
}
