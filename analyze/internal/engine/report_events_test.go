package engine_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcptrace/mcptrace/analyze/ingest"
	analyze "github.com/mcptrace/mcptrace/analyze/internal/engine"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestReportEventsHandEveryAcquireAsReadAcquiresDoes pins that the HTML
// report's what-if section replays what `mcptrace whatif` replays: the
// acquires ReportEvents.EachAcquire hands out from one index equal, one for
// one and in order, those ReadAcquires reads from the same dump through
// the engine (causes, keys, attempts, failures, health checks and the
// scope's recorded settings, mixed ones included), on every vocabulary's
// scenario dump.
func TestReportEventsHandEveryAcquireAsReadAcquiresDoes(t *testing.T) {
	set := map[string]string{spans.AttrPoolIdleTTL: "0.1", spans.AttrPoolMaxIdlePerKey: "2", spans.AttrPoolIdleSizing: spans.IdleSizingFixed,
		spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: "60"}
	other := map[string]string{spans.AttrPoolIdleTTL: "300"}
	dumps := map[string]string{
		"settings recorded": dumptest.PooledWithSettings(t, pooledDir, func(int) map[string]string { return set }),
		"settings mixed": dumptest.PooledWithSettings(t, pooledDir, func(n int) map[string]string {
			if n == 2 {
				return other
			}
			return set
		}),
	}
	for _, sc := range []string{"pooled", "ttl-and-redial", "concurrent", "acquire-on-miss", "semconv", "per-call-dial", "double-acquire"} {
		dumps[sc] = filepath.Join("../../../testdata/traces", sc+".otlp.jsonl")
	}
	for name, path := range dumps {
		t.Run(name, func(t *testing.T) {
			cfg := rulefmt.Config{Profile: rulefmt.ProfileAuto}
			var want []analyze.Acquire
			if _, err := analyze.ReadAcquires(context.Background(), ingest.Files{path}, cfg, analyze.LoadOptions{}, func(a *analyze.Acquire) { want = append(want, *a) }); err != nil {
				t.Fatal(err)
			}
			if len(want) == 0 {
				t.Fatalf("%s: no acquire read: the comparison would be empty", path)
			}
			if name == "settings recorded" && want[0].Settings == nil || name == "settings mixed" && !want[0].SettingsMixed {
				t.Fatalf("%s: ReadAcquires reads settings %v (mixed %v): the dump does not pin them", name, want[0].Settings, want[0].SettingsMixed)
			}
			idx, _, err := analyze.Load(context.Background(), []string{path}, analyze.LoadOptions{Index: cfg.IndexOptions()})
			if err != nil {
				t.Fatal(err)
			}
			ev, err := analyze.NewReportEvents(idx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []analyze.Acquire
			ev.EachAcquire(func(a *analyze.Acquire) { got = append(got, *a) })
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("EachAcquire differs from ReadAcquires (-want +got):\n%s", d)
			}
			if ev.NumAcquires() != len(got) {
				t.Errorf("%d acquire events drawn, %d handed to the replay", ev.NumAcquires(), len(got))
			}
		})
	}
}
