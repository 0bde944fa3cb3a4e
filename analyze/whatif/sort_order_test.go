package whatif

import (
	"slices"
	"testing"
	"time"
)

// TestRowsThatTieSortBySettingsValue pins the order of rows equal on every
// figure: by the settings' values, so durations read 38s, 1m15s, 2m30s,
// 10m, 20m (their text would put 10m0s first), fixed idle counts before
// peak-following, and pre-warm as recorded, none, then recent:N.
func TestRowsThatTieSortBySettingsValue(t *testing.T) {
	ttl := func(d string) Settings {
		v, err := time.ParseDuration(d)
		if err != nil {
			t.Fatal(err)
		}
		return Settings{IdleTTL: v, Peak: true, MaxIdle: 64}
	}
	var rows []Row
	for _, d := range []string{"10m", "1m15s", "20m", "2m30s", "38s"} {
		rows = append(rows, Row{Settings: ttl(d)})
	}
	Sort(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Settings.IdleTTL.String())
	}
	if want := []string{"38s", "1m15s", "2m30s", "10m0s", "20m0s"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	base := Settings{IdleTTL: time.Minute, IdlePerKey: 2, MaxIdle: 64}
	with := func(f func(*Settings)) Settings { s := base; f(&s); return s }
	for _, tc := range []struct {
		name        string
		less, great Settings
	}{
		{"a shorter TTL", with(func(s *Settings) { s.IdleTTL = 59 * time.Second }), base},
		{"fixed before peak", base, with(func(s *Settings) { s.Peak = true; s.IdlePerKey = 1 })},
		{"fewer idle per key", with(func(s *Settings) { s.IdlePerKey = 1 }), base},
		{"a smaller cap", with(func(s *Settings) { s.MaxIdle = 8 }), base},
		{"pre-warm as recorded before none", with(func(s *Settings) { s.Prewarm = PrewarmAsRecorded }), base},
		{"none before recent:1", base, with(func(s *Settings) { s.Prewarm = 1 })},
	} {
		if c := tc.less.Compare(tc.great); c >= 0 {
			t.Errorf("%s: Compare = %d, want < 0", tc.name, c)
		}
		if c := tc.great.Compare(tc.less); c <= 0 {
			t.Errorf("%s: reversed Compare = %d, want > 0", tc.name, c)
		}
	}
	if c := base.Compare(base); c != 0 {
		t.Errorf("equal settings: Compare = %d, want 0", c)
	}
}
