package analyze

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// The settings a pool recorded on its acquire spans (spans.PoolSettingsAttrs)
// travel per pool scope, not per acquire: the stage interns one text per
// distinct set of values and notes it as its scope's (events.settingsByScope),
// observations carry the map, and the aggregate keeps it only when asked
// (ReadAcquires), so an analysis pays nothing for them and acquireEvent does
// not grow.

// PoolSettings is what a pool scope recorded of its settings on its acquire
// spans: each spans.PoolSettingsAttrs attribute present, by key, as the
// index's text of its value ("0.1", "peak", "-1"). One value is shared by
// every Acquire of its scope: read it, never modify it.
type PoolSettings map[string]string

// settingsMixed is the settings id of a pool scope whose acquire spans
// recorded different settings.
const settingsMixed int32 = -2

// recordSettings notes the settings acquire span a recorded as those of
// its scope: an acquire costs the attributes' lookups and one map probe on
// their value ids, the text is built once per distinct set. A span that
// records none leaves its scope as it was ("any one acquire span of a pool
// scope tells its settings", spans.AttrPoolIdleTTL's comment).
func (v *vocab) recordSettings(e *events, a, scope int32) {
	var vals [len(spans.PoolSettingsAttrs)]int32
	recorded := false
	for i, k := range v.kSettings {
		vals[i] = v.attr(a, k)
		recorded = recorded || vals[i] >= 0
	}
	if !recorded {
		return
	}
	id, ok := e.settingsIDs[vals]
	if !ok {
		id = e.intern(settingsText(vals, e.strs))
		if e.settingsIDs == nil {
			e.settingsIDs = map[[len(spans.PoolSettingsAttrs)]int32]int32{}
		}
		e.settingsIDs[vals] = id
	}
	if e.settingsByScope == nil {
		e.settingsByScope = map[int32]int32{}
	}
	noteSettings(e.settingsByScope, scope, id)
}

// noteSettings records settings id for scope in m: the first a scope
// records, settingsMixed once it records another.
func noteSettings(m map[int32]int32, scope, id int32) {
	if old, ok := m[scope]; !ok {
		m[scope] = id
	} else if old != id {
		m[scope] = settingsMixed
	}
}

// settingsText writes one set of settings values (value ids into strs, -1
// absent) as one text: each present value marked with its attribute's
// place and length-prefixed, so no two sets share a text.
func settingsText(vals [len(spans.PoolSettingsAttrs)]int32, strs []string) string {
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

// parseSettingsText is settingsText's inverse; ok is false on a text it
// did not write.
func parseSettingsText(s string) (PoolSettings, bool) {
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

// Idle reads the settings as the pool wrote them (pool/instrument.go
// settingsAttrs): the TTL in seconds, the per-key minimum with its default
// filled in, the sizing rule, the global cap and the sweep interval (-1:
// on acquire only; absent: the default). The one reading of them: the
// miss attribution and whatif's replay both ask it.
func (ps PoolSettings) Idle() (idle.Settings, error) {
	s := idle.Defaults(0)
	if err := ps.idleTTL(&s); err != nil {
		return s, err
	}
	if err := ps.idlePerKey(&s); err != nil {
		return s, err
	}
	if err := ps.idleGlobal(&s); err != nil {
		return s, err
	}
	return s, nil
}

// idleTTL reads the idle TTL into s: a positive number of seconds that a
// time.Duration can hold.
func (ps PoolSettings) idleTTL(s *idle.Settings) error {
	v, err := ps.get(spans.AttrPoolIdleTTL)
	if err != nil {
		return err
	}
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil || !(sec > 0) || sec > math.MaxInt64/float64(time.Second) {
		return fmt.Errorf("%s %.32q: expected a positive number of seconds", spans.AttrPoolIdleTTL, v)
	}
	s.TTL = time.Duration(math.Round(sec * float64(time.Second)))
	return nil
}

// idlePerKey reads the per-key idle minimum and its sizing rule (peak or
// fixed) into s.
func (ps PoolSettings) idlePerKey(s *idle.Settings) error {
	v, err := ps.get(spans.AttrPoolMaxIdlePerKey)
	if err != nil {
		return err
	}
	if s.MaxIdlePerKey, err = strconv.Atoi(v); err != nil {
		return fmt.Errorf("%s %.32q: expected an integer", spans.AttrPoolMaxIdlePerKey, v)
	}
	if v, err = ps.get(spans.AttrPoolIdleSizing); err != nil {
		return err
	}
	switch v {
	case spans.IdleSizingPeak:
	case spans.IdleSizingFixed:
		s.FixedPerKey = true
	default:
		return fmt.Errorf("%s %.32q: expected %s or %s", spans.AttrPoolIdleSizing, v, spans.IdleSizingPeak, spans.IdleSizingFixed)
	}
	return nil
}

// idleGlobal reads the global idle cap, a positive integer, and the sweep
// interval into s; an absent interval leaves the default.
func (ps PoolSettings) idleGlobal(s *idle.Settings) error {
	v, err := ps.get(spans.AttrPoolMaxIdle)
	if err != nil {
		return err
	}
	if s.MaxIdle, err = strconv.Atoi(v); err != nil || s.MaxIdle <= 0 {
		return fmt.Errorf("%s %.32q: expected a positive integer", spans.AttrPoolMaxIdle, v)
	}
	if v, ok := ps[spans.AttrPoolSweepInterval]; ok {
		sec, err := strconv.ParseFloat(v, 64)
		if err != nil || sec > math.MaxInt64/float64(time.Second) || sec < -1 {
			return fmt.Errorf("%s %.32q: expected seconds, or -1", spans.AttrPoolSweepInterval, v)
		}
		s.SweepInterval = time.Duration(math.Round(sec * float64(time.Second)))
	}
	return nil
}

// get returns the recorded value of key, an error naming it when absent.
func (ps PoolSettings) get(key string) (string, error) {
	v, ok := ps[key]
	if !ok {
		return "", fmt.Errorf("no %s", key)
	}
	return v, nil
}

// recordedIn returns what scope recorded of its settings in byScope
// (settings ids into strs, or settingsMixed): nil when none, and whether
// it recorded different ones.
func recordedIn(byScope map[int32]int32, strs []string, scope int32) (PoolSettings, bool) {
	id, ok := byScope[scope]
	switch {
	case !ok:
		return nil, false
	case id == settingsMixed:
		return nil, true
	}
	ps, _ := parseSettingsText(strs[id]) // the stage wrote it: it parses
	return ps, false
}
