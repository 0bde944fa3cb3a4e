package record

import (
	"maps"
	"testing"

	"github.com/mcptrace/mcptrace/spans"
)

// TestSettingsTextReadsBackOnlyWhatItWrote pins settingsText's inverse:
// each set of settings values reads back as written, and a text it did not
// write (an attribute place past the known ones, or below '0') is refused,
// not read out of range.
func TestSettingsTextReadsBackOnlyWhatItWrote(t *testing.T) {
	strs := []string{"30s", "4", "peak", "", "1m:2"}
	none := [len(spans.PoolSettingsAttrs)]int32{-1, -1, -1, -1, -1}
	for _, tc := range []struct {
		name string
		vals [len(spans.PoolSettingsAttrs)]int32
	}{
		{"none", none},
		{"the first alone", [len(spans.PoolSettingsAttrs)]int32{0, -1, -1, -1, -1}},
		{"the last alone, a colon in its value", [len(spans.PoolSettingsAttrs)]int32{-1, -1, -1, -1, 4}},
		{"every one, an empty value among them", [len(spans.PoolSettingsAttrs)]int32{0, 1, 2, 3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := PoolSettings{}
			for i, v := range tc.vals {
				if v >= 0 {
					want[spans.PoolSettingsAttrs[i]] = strs[v]
				}
			}
			got, ok := ParseSettingsText(SettingsText(tc.vals, strs))
			if !ok || !maps.Equal(got, want) {
				t.Errorf("read back %v (ok %v), want %v", got, ok, want)
			}
		})
	}
	past := string(rune('0' + len(spans.PoolSettingsAttrs)))
	for _, text := range []string{past + "1:x", "/1:x", "01:x" + past + "1:y", "0", "05:x", "0x:y"} {
		if got, ok := ParseSettingsText(text); ok || got != nil {
			t.Errorf("parseSettingsText(%q) = %v, %v; want it refused", text, got, ok)
		}
	}
}
