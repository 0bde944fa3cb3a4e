package record

import (
	"strconv"

	evdata "github.com/mcptrace/mcptrace/analyze/events"

	"github.com/mcptrace/mcptrace/spans"
)

// The settings a pool recorded on its acquire spans (spans.PoolSettingsAttrs)
// travel per pool scope, not per acquire: the stage interns one text per
// distinct set of values and notes it as its scope's (events.settingsByScope),
// observations carry the map, and the aggregate keeps it only when asked
// (ReadAcquires), so an analysis pays nothing for them and acquireEvent does
// not grow.

// PoolSettings is what a pool scope recorded of its settings: see
// [evdata.PoolSettings].
type PoolSettings = evdata.PoolSettings

// SettingsMixed is the settings id of a pool scope whose acquire spans
// recorded different settings.
const SettingsMixed int32 = -2

// NoteSettings records settings id for scope in m: the first a scope
// records, settingsMixed once it records another.
func NoteSettings(m map[int32]int32, scope, id int32) {
	if old, ok := m[scope]; !ok {
		m[scope] = id
	} else if old != id {
		m[scope] = SettingsMixed
	}
}

// SettingsText writes one set of settings values (value ids into strs, -1
// absent) as one text: each present value marked with its attribute's
// place and length-prefixed, so no two sets share a text.
func SettingsText(vals [len(spans.PoolSettingsAttrs)]int32, strs []string) string {
	var b []byte
	for i, val := range vals {
		if val < 0 {
			continue
		}
		b = append(b, byte('0'+i))
		b = strconv.AppendInt(b, int64(len(strs[val])), 10)
		b = append(append(b, ':'), strs[val]...)
	}
	return string(b)
}

// ParseSettingsText is settingsText's inverse; ok is false on a text it
// did not write.
func ParseSettingsText(s string) (PoolSettings, bool) {
	out := PoolSettings{}
	for s != "" {
		i := int(s[0] - '0')
		if i < 0 || i >= len(spans.PoolSettingsAttrs) {
			return nil, false
		}
		s = s[1:]
		colon := 0
		for colon < len(s) && s[colon] != ':' {
			colon++
		}
		n, err := strconv.Atoi(s[:colon])
		if err != nil || colon == len(s) || n < 0 || n > len(s)-colon-1 {
			return nil, false
		}
		out[spans.PoolSettingsAttrs[i]] = s[colon+1 : colon+1+n]
		s = s[colon+1+n:]
	}
	return out, true
}

// RecordedIn returns what scope recorded of its settings in byScope
// (settings ids into strs, or settingsMixed): nil when none, and whether
// it recorded different ones.
func RecordedIn(byScope map[int32]int32, strs []string, scope int32) (PoolSettings, bool) {
	id, ok := byScope[scope]
	switch {
	case !ok:
		return nil, false
	case id == SettingsMixed:
		return nil, true
	}
	ps, _ := ParseSettingsText(strs[id]) // the stage wrote it: it parses
	return ps, false
}
