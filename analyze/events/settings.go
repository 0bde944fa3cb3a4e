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

// idleTTL reads the idle TTL into s: a positive number of seconds that a
// time.Duration can hold.
func (ps PoolSettings) idleTTL(s *idle.Settings) error {
	v, err := ps.get(spans.AttrPoolIdleTTL)
	if err != nil {
		return err
	}
	sec, err := strconv.ParseFloat(v, 64)
	if err != nil || !(sec > 0) || sec >= math.MaxInt64/float64(time.Second) {
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
		if err != nil || sec >= math.MaxInt64/float64(time.Second) || sec < -1 {
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
