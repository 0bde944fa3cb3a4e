package whatif

import (
	"fmt"
	"strings"

	"github.com/mcptrace/mcptrace/analyze/events"
)

// scopeRecord is what one pool scope recorded of its settings.
type scopeRecord struct {
	name     string
	settings events.PoolSettings // nil: none (or mixed)
	mixed    bool
}

// maxNamed bounds how many scopes or settings a note names.
const maxNamed = 3

// RecordedSettings returns the settings the dump's pool scopes recorded on
// their acquire spans (spans.PoolSettingsAttrs), ok when every scope
// recorded the same readable ones: the replay at them is the run as
// recorded, not as assumed. Prewarm is PrewarmAsRecorded in it (the
// pre-warm dials the dump holds, whatever chose them) and the sweep
// interval, which each scope's replay reads for itself, is not compared. When not ok, note says why for a person ("" when
// no scope recorded any: a dump of another pool, whose settings the user
// passes); the caller then assumes.
func (w *Workload) RecordedSettings() (s Settings, note string, ok bool) {
	var none, mixed []string
	distinct := map[Settings][]string{} // settings → the scopes that recorded them
	var order []Settings
	for _, sc := range w.scopeRecs {
		switch {
		case sc.mixed:
			mixed = append(mixed, sc.name)
			continue
		case sc.settings == nil:
			none = append(none, sc.name)
			continue
		}
		set, err := parseRecorded(sc.settings)
		if err != nil {
			return Settings{}, fmt.Sprintf("pool scope %.64q recorded unreadable settings: %v", sc.name, err), false
		}
		if _, seen := distinct[set]; !seen {
			order = append(order, set)
		}
		distinct[set] = append(distinct[set], sc.name)
	}
	switch {
	case len(order) == 0 && len(mixed) == 0:
		return Settings{}, "", false
	case len(mixed) > 0:
		return Settings{}, fmt.Sprintf("%d pool scope(s) recorded different settings on their own acquire spans (%s)", len(mixed), names(mixed)), false
	case len(none) > 0:
		return Settings{}, fmt.Sprintf("%d of %d pool scopes recorded no settings (%s)", len(none), len(w.scopeRecs), names(none)), false
	case len(order) > 1:
		parts := make([]string, 0, maxNamed)
		for _, set := range order[:min(len(order), maxNamed)] {
			parts = append(parts, fmt.Sprintf("%s by %s", set, names(distinct[set])))
		}
		return Settings{}, fmt.Sprintf("the pool scopes recorded %d different settings: %s", len(order), strings.Join(parts, "; ")), false
	}
	s = order[0]
	s.Prewarm = PrewarmAsRecorded
	return s, "", true
}

// names lists scope names for a note, quoted, clipped and at most maxNamed.
func names(scopes []string) string {
	parts := make([]string, 0, maxNamed+1)
	for _, n := range scopes[:min(len(scopes), maxNamed)] {
		parts = append(parts, fmt.Sprintf("%.64q", n))
	}
	if len(scopes) > maxNamed {
		parts = append(parts, fmt.Sprintf("and %d more", len(scopes)-maxNamed))
	}
	return strings.Join(parts, ", ")
}

// parseRecorded reads one scope's recorded settings as the analyzer's
// miss attribution reads them (events.PoolSettings.Idle): the one reading.
func parseRecorded(ps events.PoolSettings) (Settings, error) {
	s, err := ps.Idle()
	if err != nil {
		return Settings{}, err
	}
	return Settings{IdleTTL: s.TTL, IdlePerKey: s.MaxIdlePerKey, Peak: !s.FixedPerKey, MaxIdle: s.MaxIdle}, nil
}
