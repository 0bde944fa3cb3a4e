package whatif_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/whatif"
	"github.com/mcptrace/mcptrace/spans"
)

// TestRecordedSettingsAreTheScopesCommonOnes pins when a workload's
// recorded settings are the as-recorded row's: every scope recorded the
// same readable set (the sweep interval, which the model does not replay,
// may differ); otherwise not, with a note naming why, and no note for a
// dump that records none at all.
func TestRecordedSettingsAreTheScopesCommonOnes(t *testing.T) {
	peak := events.PoolSettings{spans.AttrPoolIdleTTL: "0.1", spans.AttrPoolMaxIdlePerKey: "1", spans.AttrPoolIdleSizing: spans.IdleSizingPeak,
		spans.AttrPoolMaxIdle: "64", spans.AttrPoolSweepInterval: "60"}
	with := func(k, v string) events.PoolSettings {
		s := maps.Clone(peak)
		if v == "" {
			delete(s, k)
		} else {
			s[k] = v
		}
		return s
	}
	want := whatif.Settings{IdleTTL: 100 * time.Millisecond, IdlePerKey: 1, Peak: true, MaxIdle: 64, Prewarm: whatif.PrewarmAsRecorded}
	type scope struct {
		settings events.PoolSettings
		mixed    bool
	}
	for _, tc := range []struct {
		name   string
		scopes []scope
		want   whatif.Settings
		ok     bool
		note   string // a part of the note; "" none
	}{
		{"every scope the same", []scope{{peak, false}, {peak, false}}, want, true, ""},
		{"only the sweep differs", []scope{{peak, false}, {with(spans.AttrPoolSweepInterval, "-1"), false}}, want, true, ""},
		{"fixed sizing, none per key", []scope{{with(spans.AttrPoolIdleSizing, spans.IdleSizingFixed), false}, {with(spans.AttrPoolIdleSizing, spans.IdleSizingFixed), false}},
			whatif.Settings{IdleTTL: 100 * time.Millisecond, IdlePerKey: 1, MaxIdle: 64, Prewarm: whatif.PrewarmAsRecorded}, true, ""},
		{"no scope records any", []scope{{nil, false}, {nil, false}}, whatif.Settings{}, false, ""},
		{"one scope records none", []scope{{peak, false}, {nil, false}}, whatif.Settings{}, false, `1 of 2 pool scopes recorded no settings ("s1")`},
		{"scopes differ", []scope{{peak, false}, {with(spans.AttrPoolIdleTTL, "300"), false}}, whatif.Settings{}, false, "recorded 2 different settings: idle-ttl=100ms"},
		{"a scope's spans differ", []scope{{peak, false}, {nil, true}}, whatif.Settings{}, false, `1 pool scope(s) recorded different settings on their own acquire spans ("s1")`},
		{"an unreadable TTL", []scope{{with(spans.AttrPoolIdleTTL, "soon"), false}}, whatif.Settings{}, false, `idle_ttl_s "soon": expected a positive number`},
		{"a zero TTL", []scope{{with(spans.AttrPoolIdleTTL, "0"), false}}, whatif.Settings{}, false, "expected a positive number"},
		{"an unknown sizing", []scope{{with(spans.AttrPoolIdleSizing, "lru"), false}}, whatif.Settings{}, false, "expected peak or fixed"},
		{"no global cap", []scope{{with(spans.AttrPoolMaxIdle, ""), false}}, whatif.Settings{}, false, "no " + spans.AttrPoolMaxIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := whatif.NewCollector()
			for i, sc := range tc.scopes {
				name := "s" + string(rune('0'+i))
				for k := range 2 { // a scope's acquires share its settings
					c.Add(&events.Acquire{Scope: name, HasScope: true, Key: "k", HasKey: true, Start: int64(k), LeaseEnd: int64(k),
						Attempt: 1, Settings: sc.settings, SettingsMixed: sc.mixed})
				}
			}
			got, note, ok := c.Workload().RecordedSettings()
			if ok != tc.ok || got != tc.want {
				t.Errorf("settings %v ok %v, want %v ok %v (note %q)", got, ok, tc.want, tc.ok, note)
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want one containing %q", note, tc.note)
			}
		})
	}
}
