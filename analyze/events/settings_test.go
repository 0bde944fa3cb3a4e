package events

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// recorded is a full set of settings as the pool writes them, with edits.
func recorded(edit func(PoolSettings)) PoolSettings {
	ps := PoolSettings{
		spans.AttrPoolIdleTTL:       "0.25",
		spans.AttrPoolMaxIdlePerKey: "3",
		spans.AttrPoolIdleSizing:    spans.IdleSizingPeak,
		spans.AttrPoolMaxIdle:       "40",
		spans.AttrPoolSweepInterval: "2",
	}
	if edit != nil {
		edit(ps)
	}
	return ps
}

// TestIdleReadsTheSettingsAsThePoolWroteThem pins the one reading of a
// scope's recorded settings: each attribute into its field, the sweep
// interval's default when absent and -1 kept, and every value the pool
// could not have written refused with the attribute named.
func TestIdleReadsTheSettingsAsThePoolWroteThem(t *testing.T) {
	want := idle.Settings{TTL: 250 * time.Millisecond, MaxIdlePerKey: 3, MaxIdle: 40, SweepInterval: 2 * time.Second}
	for _, tc := range []struct {
		name    string
		ps      PoolSettings
		want    idle.Settings
		wantErr string // a part of the error; "" none
	}{
		{"every attribute read into its field", recorded(nil), want, ""},
		{"fixed sizing", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleSizing] = spans.IdleSizingFixed }),
			func() idle.Settings { w := want; w.FixedPerKey = true; return w }(), ""},
		{"no sweep interval: the default", recorded(func(ps PoolSettings) { delete(ps, spans.AttrPoolSweepInterval) }),
			func() idle.Settings { w := want; w.SweepInterval = idle.DefaultSweepInterval; return w }(), ""},
		{"sweep -1: on acquire only", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "-1" }),
			func() idle.Settings { w := want; w.SweepInterval = -time.Second; return w }(), ""},
		{"a per-key minimum of 0", recorded(func(ps PoolSettings) { ps[spans.AttrPoolMaxIdlePerKey] = "0" }),
			func() idle.Settings { w := want; w.MaxIdlePerKey = 0; return w }(), ""},
		{"a TTL of 2.5 ns rounds to 3", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "2.5e-9" }),
			func() idle.Settings { w := want; w.TTL = 3; return w }(), ""},
		{"a sweep of 2.5 ns rounds to 3", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "2.5e-9" }),
			func() idle.Settings { w := want; w.SweepInterval = 3; return w }(), ""},
		{"a TTL just under a duration's range", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "9223372036.8547" }),
			func() idle.Settings { w := want; w.TTL = 9223372036854700032; return w }(), ""},
		{"a TTL at a duration's range, which would overflow", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "9223372036.854775807" }), want, spans.AttrPoolIdleTTL},
		{"a sweep at a duration's range, which would overflow", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "9223372036.854775807" }), want, spans.AttrPoolSweepInterval},
		{"a global cap past an int", recorded(func(ps PoolSettings) { ps[spans.AttrPoolMaxIdle] = "99999999999999999999" }), want, spans.AttrPoolMaxIdle},
		{"a TTL past a float", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "1e400" }), want, spans.AttrPoolIdleTTL},
		{"no TTL", recorded(func(ps PoolSettings) { delete(ps, spans.AttrPoolIdleTTL) }), want, "no " + spans.AttrPoolIdleTTL},
		{"a TTL of 0", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "0" }), want, spans.AttrPoolIdleTTL},
		{"a negative TTL", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "-1" }), want, spans.AttrPoolIdleTTL},
		{"a TTL of NaN", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "NaN" }), want, spans.AttrPoolIdleTTL},
		{"a TTL no duration holds", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "1e10" }), want, spans.AttrPoolIdleTTL},
		{"no per-key minimum", recorded(func(ps PoolSettings) { delete(ps, spans.AttrPoolMaxIdlePerKey) }), want, "no " + spans.AttrPoolMaxIdlePerKey},
		{"a per-key minimum not an integer", recorded(func(ps PoolSettings) { ps[spans.AttrPoolMaxIdlePerKey] = "2.5" }), want, spans.AttrPoolMaxIdlePerKey},
		{"no sizing", recorded(func(ps PoolSettings) { delete(ps, spans.AttrPoolIdleSizing) }), want, "no " + spans.AttrPoolIdleSizing},
		{"an unknown sizing", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleSizing] = "PEAK" }), want, spans.AttrPoolIdleSizing},
		{"no global cap", recorded(func(ps PoolSettings) { delete(ps, spans.AttrPoolMaxIdle) }), want, "no " + spans.AttrPoolMaxIdle},
		{"a global cap of 0", recorded(func(ps PoolSettings) { ps[spans.AttrPoolMaxIdle] = "0" }), want, spans.AttrPoolMaxIdle},
		{"a sweep below -1", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "-1.5" }), want, spans.AttrPoolSweepInterval},
		{"a sweep no duration holds", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "1e10" }), want, spans.AttrPoolSweepInterval},
		{"a TTL of half a nanosecond rounds to 1 ns", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "5e-10" }),
			func() idle.Settings { w := want; w.TTL = 1; return w }(), ""},
		{"a TTL just under half a nanosecond, which rounds to 0", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "4.9e-10" }), want, spans.AttrPoolIdleTTL},
		{"a TTL of 1e-12, which rounds to 0", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "1e-12" }), want, spans.AttrPoolIdleTTL},
		{"a TTL of Inf", recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = "Inf" }), want, spans.AttrPoolIdleTTL},
		{"a sweep of NaN", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "NaN" }), want, spans.AttrPoolSweepInterval},
		{"a sweep of Inf", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "Inf" }), want, spans.AttrPoolSweepInterval},
		{"a sweep of -Inf", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "-Inf" }), want, spans.AttrPoolSweepInterval},
		{"a sweep not a number", recorded(func(ps PoolSettings) { ps[spans.AttrPoolSweepInterval] = "soon" }), want, spans.AttrPoolSweepInterval},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.ps.Idle()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Idle() error = %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Idle() = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// TestCheckIdleTTLIsTheFlagsRuleAndTheRecordedOne pins the one rule for an
// idle TTL that the flags and the recorded settings share: positive, so 1
// ns is a TTL and 0 or less is not.
func TestCheckIdleTTLIsTheFlagsRuleAndTheRecordedOne(t *testing.T) {
	for _, tc := range []struct {
		ttl time.Duration
		ok  bool
	}{{1, true}, {5 * time.Minute, true}, {0, false}, {-1, false}} {
		if err := CheckIdleTTL(tc.ttl); (err == nil) != tc.ok {
			t.Errorf("CheckIdleTTL(%v) = %v, want ok %v", tc.ttl, err, tc.ok)
		}
		_, err := recorded(func(ps PoolSettings) { ps[spans.AttrPoolIdleTTL] = strconv.FormatFloat(tc.ttl.Seconds(), 'g', -1, 64) }).Idle()
		if (err == nil) != tc.ok {
			t.Errorf("recorded TTL %v: Idle() error %v, want ok %v as the flags' rule", tc.ttl, err, tc.ok)
		}
	}
}
