package events

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mcptrace/mcptrace/pool/idle"
	"github.com/mcptrace/mcptrace/spans"
)

// PoolSettings is what a pool scope recorded of its settings on its acquire
// spans: each spans.PoolSettingsAttrs attribute present, by key, as the
// index's text of its value ("0.1", "peak", "-1"). One value is shared by
// every Acquire of its scope: read it, never modify it.
type PoolSettings map[string]string

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

// idleTTL reads the idle TTL into s: a number of seconds that, rounded to
// the nanosecond, CheckIdleTTL takes.
func (ps PoolSettings) idleTTL(s *idle.Settings) error {
	v, err := ps.get(spans.AttrPoolIdleTTL)
	if err != nil {
		return err
	}
	d, ok := secondsDuration(v)
	if !ok || CheckIdleTTL(d) != nil {
		return fmt.Errorf("%s %.32q: expected a positive number of seconds, at least a nanosecond", spans.AttrPoolIdleTTL, v)
	}
	s.TTL = d
	return nil
}

// CheckIdleTTL says why ttl cannot be a pool's idle TTL, nil when it can:
// the one rule for a TTL whether a flag gives it (--idle-ttl,
// --recorded-idle-ttl) or a pool recorded it. It must be positive: at 0 a
// session would expire the moment it is released, which no pool runs with
// and which would attribute every miss to the TTL.
func CheckIdleTTL(ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("idle TTL %s: expected a positive duration", ttl)
	}
	return nil
}

// secondsDuration reads a recorded number of seconds as a duration rounded
// to the nanosecond; false when v is no number, NaN, infinite, or past
// what a time.Duration holds.
func secondsDuration(v string) (time.Duration, bool) {
	sec, err := strconv.ParseFloat(v, 64)
	const limit = math.MaxInt64 / float64(time.Second)
	if err != nil || math.IsNaN(sec) || sec >= limit || sec <= -limit {
		return 0, false
	}
	return time.Duration(math.Round(sec * float64(time.Second))), true
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
		d, ok := secondsDuration(v)
		if !ok || d < -time.Second {
			return fmt.Errorf("%s %.32q: expected seconds, or -1", spans.AttrPoolSweepInterval, v)
		}
		s.SweepInterval = d
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
