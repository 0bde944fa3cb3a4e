package whatif

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/ingest"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/analyzetest"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestReportGridIsOneLinePerIdlePerKeyAroundTheRecordedTTL pins the grid
// the analysis report replays: each idle-per-key setting (1, 2, peak and
// the recorded one) is one chart line of the same TTLs, a decade around the
// recorded TTL, every setting at the recorded global cap and pre-warm, the
// recorded setting among them, none repeated and no TTL under a second.
func TestReportGridIsOneLinePerIdlePerKeyAroundTheRecordedTTL(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rec     Settings
		lines   int
		ttls    []time.Duration
		wantLen int
	}{
		{"peak, the pool's default", DefaultAssumed, 3,
			[]time.Duration{38 * time.Second, 75 * time.Second, 150 * time.Second, 5 * time.Minute, 10 * time.Minute, 20 * time.Minute, 40 * time.Minute}, 21},
		{"a fixed sizing of its own", Settings{IdleTTL: 80 * time.Second, IdlePerKey: 4, MaxIdle: 8, Prewarm: 1}, 4,
			[]time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, 640 * time.Second}, 28},
		// 1s: an eighth, a quarter and a half all round to one second,
		// which is the recorded TTL itself: four TTLs a line.
		{"a TTL of one second", Settings{IdleTTL: time.Second, IdlePerKey: 2, MaxIdle: 64}, 3,
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}, 12},
	} {
		t.Run(tc.name, func(t *testing.T) {
			grid := ReportGrid(tc.rec)
			if len(grid) != tc.wantLen {
				t.Errorf("%d settings, want %d: %v", len(grid), tc.wantLen, grid)
			}
			lines := map[string][]time.Duration{}
			seen := map[Settings]bool{}
			hasRec := false
			for _, s := range grid {
				if seen[s] {
					t.Errorf("%s repeated", s)
				}
				seen[s] = true
				hasRec = hasRec || s == tc.rec
				if s.MaxIdle != tc.rec.MaxIdle || s.Prewarm != tc.rec.Prewarm || s.IdleTTL < time.Second {
					t.Errorf("%s: not at the recorded cap %d and pre-warm %d, or under a second", s, tc.rec.MaxIdle, tc.rec.Prewarm)
				}
				k := s
				k.IdleTTL = 0
				lines[k.String()] = append(lines[k.String()], s.IdleTTL)
			}
			if !hasRec {
				t.Errorf("the recorded setting %s is not in the grid", tc.rec)
			}
			if len(lines) != tc.lines {
				t.Errorf("%d idle-per-key lines, want %d: %v", len(lines), tc.lines, lines)
			}
			for k, ttls := range lines {
				if !slicesEqual(ttls, tc.ttls) {
					t.Errorf("line %s: TTLs %v, want %v", k, ttls, tc.ttls)
				}
			}
		})
	}
}

func slicesEqual(a, b []time.Duration) bool {
	return len(a) == len(b) && strings.Join(durs(a), ",") == strings.Join(durs(b), ",")
}

func durs(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.String()
	}
	return out
}

// reportEvents analyzes one dump as the CLI does for the HTML report and
// returns its report events and the analysis's hits.
func reportEvents(t *testing.T, path string) (*events.ReportEvents, int) {
	t.Helper()
	r, ev := analyzetest.Analyzed(t, path, rulefmt.Config{Profile: rulefmt.ProfileAuto}, ingest.ReadOptions{})
	return ev, r.Pool.Hits
}

// recRow finds the as-recorded row of a section: its label, acquires and
// hits.
var recRow = regexp.MustCompile(`<tr class="rec"><td><code>([^<]*)</code> \(as recorded, settings (recorded|assumed)\)</td><td class="n">[^<]*</td><td class="n">(\d+)</td><td class="n">(\d+)</td>`)

// anyRow finds every row of a section's table and its setting.
var anyRow = regexp.MustCompile(`<tr(?: class="rec")?><td><code>([^<]*)</code>`)

// TestReportSectionReplaysTheDumpAroundItsSettings pins the what-if section
// of the analysis's HTML report: with acquires, a table and two charts whose
// as-recorded row is at the settings the dump records (labelled recorded)
// or at the assumed ones (labelled assumed, and said why when the scopes
// disagree), one row per setting of the grid, its hits the analysis's own on a dump the model reproduces;
// without an acquire, one sentence saying why there is no replay.
func TestReportSectionReplaysTheDumpAroundItsSettings(t *testing.T) {
	traces := "../../testdata/traces"
	settings := func(ttl string) map[string]string {
		return map[string]string{spans.AttrPoolIdleTTL: ttl, spans.AttrPoolMaxIdlePerKey: "2", spans.AttrPoolIdleSizing: spans.IdleSizingFixed,
			spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: "60"}
	}
	for _, tc := range []struct {
		name, path  string
		wantSetting string // "" when the dump has no acquire
		wantLabel   string
		wantNote    bool
	}{
		{"no settings recorded: assumed", filepath.Join(traces, "ttl-and-redial.otlp.jsonl"), DefaultAssumed.String(), "assumed", false},
		{"settings recorded", dumptest.PooledWithSettings(t, traces, func(int) map[string]string { return settings("300") }),
			"idle-ttl=5m0s idle-per-key=2 max-idle=64 prewarm=as-recorded", "recorded", false},
		{"scopes disagree: assumed, said why", dumptest.PooledWithSettings(t, traces, func(n int) map[string]string {
			if n == 1 {
				return settings("60")
			}
			return settings("300")
		}), DefaultAssumed.String(), "assumed", true},
		{"no acquire", filepath.Join(traces, "cold-init-one-read.otlp.jsonl"), "", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, hits := reportEvents(t, tc.path)
			var b strings.Builder
			if err := WriteReportSection(&b, ev, DefaultAssumed, ""); err != nil {
				t.Fatal(err)
			}
			page := b.String()
			if strings.Count(page, `<section class="whatif" id="whatif">`) != 1 || strings.Contains(page, "<script") {
				t.Fatalf("not one what-if section without script:\n%s", page)
			}
			if tc.wantSetting == "" {
				if !strings.Contains(page, NoAcquires) || strings.Contains(page, "<table") {
					t.Errorf("a dump without acquires: want only %q:\n%s", NoAcquires, page)
				}
				return
			}
			m := recRow.FindStringSubmatch(page)
			if m == nil {
				t.Fatalf("no as-recorded row:\n%s", page)
			}
			if m[1] != tc.wantSetting || m[2] != tc.wantLabel {
				t.Errorf("as-recorded row at %q, settings %s; want %q, %s", m[1], m[2], tc.wantSetting, tc.wantLabel)
			}
			if got, _ := strconv.Atoi(m[4]); got != hits || m[3] != strconv.Itoa(ev.NumAcquires()) {
				t.Errorf("as-recorded row: %s acquires, %s hits; the analysis has %d and %d", m[3], m[4], ev.NumAcquires(), hits)
			}
			rows := anyRow.FindAllStringSubmatch(page, -1)
			seen := map[string]bool{}
			for _, r := range rows {
				if seen[r[1]] {
					t.Errorf("setting %s has two rows", r[1])
				}
				seen[r[1]] = true
			}
			if len(rows) != len(ReportGrid(DefaultAssumed)) && tc.wantSetting == DefaultAssumed.String() {
				t.Errorf("%d rows, want the %d of the grid around the as-recorded setting", len(rows), len(ReportGrid(DefaultAssumed)))
			}
			if n := strings.Count(page, "<svg"); n != 2 {
				t.Errorf("%d charts, want hit rate and idle cost", n)
			}
			if note := strings.Contains(page, `id="whatif-note"`); note != tc.wantNote {
				t.Errorf("note on disagreeing scopes: %v, want %v:\n%s", note, tc.wantNote, page)
			}
		})
	}
}
