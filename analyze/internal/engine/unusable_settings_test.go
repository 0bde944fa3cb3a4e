package engine

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/internal/dumptest"
	"github.com/mcptrace/mcptrace/spans"
)

// TestRecordedSettingsThatCannotBeUsedAreWarnedOf pins what a report says
// of a pool scope whose recorded idle settings the replay cannot use: an
// idle TTL that is no positive number, or different settings on two
// acquire spans. Its misses are attributed under the assumed settings, as
// for a scope that recorded none, and one warning names the scope and
// why, so "assumed" does not read as "recorded nothing". Settings that
// parse are used and warned of by nobody (the control).
func TestRecordedSettingsThatCannotBeUsedAreWarnedOf(t *testing.T) {
	for _, tc := range []struct {
		name       string
		ttls       [2]string
		settings   string
		warnSubstr string // "" for no warning
	}{
		{"usable", [2]string{"10", "10"}, report.SettingsRecorded, ""},
		{"no positive number", [2]string{"-5", "-5"}, report.SettingsAssumed, `"gw-1": ` + spans.AttrPoolIdleTTL},
		{"different on two spans", [2]string{"10", "20"}, report.SettingsAssumed, `"gw-1": its acquire spans recorded different settings`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := dumptest.New()
			ss := b.Resource(spans.ResourceServiceName, "agent", spans.ResourceServiceInstanceID, "gw-1")
			for i := range 2 {
				at := time.Duration(i) * 20 * time.Second
				attrs := []any{spans.AttrCacheKey, "k", spans.AttrCacheHit, false,
					spans.AttrPoolIdleTTL, tc.ttls[i], spans.AttrPoolMaxIdlePerKey, "1", spans.AttrPoolIdleSizing, spans.IdleSizingFixed,
					spans.AttrPoolMaxIdle, "64", spans.AttrPoolSweepInterval, "60"}
				b.Add(ss, dumptest.Span{Trace: uint64(i + 1), Name: spans.SpanAcquire, Start: at, End: at + time.Millisecond, Attrs: attrs})
			}
			d := NewDump(rulefmt.Config{}.IndexOptions())
			d.Add(b.Traces())
			r, err := Analyze(d, rulefmt.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Settings.PoolSettings != tc.settings {
				t.Errorf("pool_settings %q, want %q", r.Settings.PoolSettings, tc.settings)
			}
			var warned []string
			for _, w := range r.Warnings {
				if strings.Contains(w, "cannot be replayed under") {
					warned = append(warned, w)
				}
			}
			switch {
			case tc.warnSubstr == "" && len(warned) > 0:
				t.Errorf("warned %q of usable settings", warned)
			case tc.warnSubstr != "" && (len(warned) != 1 || !strings.Contains(warned[0], "1 pool scope(s)") || !strings.Contains(warned[0], tc.warnSubstr)):
				t.Errorf("warnings %q: want one naming 1 scope and %q", r.Warnings, tc.warnSubstr)
			}
		})
	}
}
