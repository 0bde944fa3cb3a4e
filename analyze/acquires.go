package analyze

import (
	"context"
	"errors"
	"math"

	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Acquire is one acquire as a replay of the pool (analyze/whatif) needs
// it: its pair, when it started and its lease ended, and what the dump says
// of it, its miss cause attributed exactly as `mcptrace analyze` attributes
// it. It holds no span: a replay keeps these, never the traces.
type Acquire struct {
	// Scope is the pool scope and Key the cache key; HasScope and HasKey
	// say whether the span had one.
	Scope, Key       string
	HasScope, HasKey bool
	// Start is when the acquire started and LeaseEnd when its lease ended
	// (Unix nanoseconds, LeaseEnd >= Start).
	Start, LeaseEnd int64
	// Hit says it reused an idle session; Cause is a miss's cause (a
	// spans.Miss* value), "" on a hit.
	Hit   bool
	Cause string
	// Failed says the lease ended in a failure that drops the session.
	Failed bool
	// Attempt is 1, or 2 on the transparent redial after an expired
	// session.
	Attempt int
	// HealthCheck says the pool recorded health_check as the miss reason.
	HealthCheck bool
	// Prewarm marks no acquire but a pre-warm dial of the key before any
	// acquire asked (Options.Prewarm): its session idle from LeaseEnd.
	// Hit, Cause and Attempt say nothing then.
	Prewarm bool
	// Settings is what the acquire's pool scope recorded of its settings
	// on its acquire spans (spans.PoolSettingsAttrs), shared by all the
	// scope's acquires; nil when none of them recorded any, or when they
	// recorded different ones (SettingsMixed). A replay at these settings
	// is the run as recorded, not as assumed.
	Settings PoolSettings
	// SettingsMixed says the scope's acquire spans recorded different
	// settings: no one set is the scope's.
	SettingsMixed bool
	// Service is the service.name of the scope's acquires (HasService: it
	// had one): a replay's pre-warm ranks the keys of the same service's
	// earlier scopes.
	Service    string
	HasService bool
}

// ReadAcquires reads paths as `mcptrace analyze` does (the engine's load
// path, its vocabularies, profile auto included) and hands every acquire,
// its cause attributed, to fn, scope by scope in time order, and every
// pre-warm dial the attribution replayed (Acquire.Prewarm). The
// memory is the engine's batch memory: the open traces and the acquires,
// never every span. It returns what was read from each input; on a read
// error, a *ReadError and no acquire.
func ReadAcquires(ctx context.Context, paths []string, cfg rulefmt.Config, lopts LoadOptions, fn func(*Acquire)) ([]Input, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if ChooseEngine(EngineRequest{Config: cfg, Rereadable: rereadable(paths)}).Kind == EngineSpeculative {
		eng, err := newSpeculativeEngine(cfg, EngineOptions{})
		if err != nil {
			return nil, err
		}
		inputs, err := acquiresWith(ctx, eng, paths, lopts, fn)
		if !errors.Is(err, errSpoiled) {
			return inputs, err
		}
		if lopts.Reread != nil {
			lopts.Reread(errSpoiled)
		}
	}
	eng, err := NewEngine(cfg, EngineOptions{})
	if err != nil {
		return nil, err
	}
	return acquiresWith(ctx, eng, paths, lopts, fn)
}

// acquiresWith feeds paths into eng and attributes its acquires into fn.
func acquiresWith(ctx context.Context, eng *Engine, paths []string, lopts LoadOptions, fn func(*Acquire)) ([]Input, error) {
	eng.mu.Lock()
	eng.agg.settings = map[int32]int32{} // keep the pool's recorded settings by scope
	eng.agg.services = map[int32]int32{} // and each scope's service
	eng.mu.Unlock()
	inputs, err := Feed(ctx, paths, lopts, eng)
	if err != nil {
		eng.Close()
		return inputs, err
	}
	if err := eng.Flush(); err != nil {
		return inputs, err
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	strs := func(id int32) (string, bool) {
		if id < 0 {
			return "", false
		}
		return eng.agg.strs[id], true
	}
	settings := scopeSettings(eng.agg.settings, eng.agg.strs)
	var a Acquire
	eng.agg.pairs.each = func(ev *acquireEvent) {
		a = acquireOf(ev, strs, settings, eng.agg.services)
		fn(&a)
	}
	eng.agg.pairs.eachPrewarm = eng.agg.pairs.each
	eng.agg.pairs.advance(math.MaxInt64)
	eng.agg.pairs.each, eng.agg.pairs.eachPrewarm = nil, nil
	return inputs, nil
}

// acquireOf is the Acquire of an attributed acquire event, its strings
// read through strs, its scope's recorded settings through settings and
// its scope's service.name from services (scope id to string id).
func acquireOf(ev *acquireEvent, strs func(int32) (string, bool), settings func(int32) (PoolSettings, bool), services map[int32]int32) Acquire {
	a := Acquire{Start: ev.start, LeaseEnd: max(ev.leaseEnd, ev.start), Hit: ev.hit, Failed: ev.failed,
		Attempt: 1, HealthCheck: ev.health, Prewarm: ev.prewarm}
	if ev.redial {
		a.Attempt = 2
	}
	if !ev.hit && !ev.prewarm {
		a.Cause = spans.MissReasons[ev.reason]
	}
	a.Scope, a.HasScope = strs(ev.scope)
	a.Key, a.HasKey = strs(ev.key)
	a.Settings, a.SettingsMixed = settings(ev.scope)
	if svc, ok := services[ev.scope]; ok {
		a.Service, a.HasService = strs(svc)
	}
	return a
}

// scopeSettings returns the recorded settings of a scope id, from byScope
// (settings ids into strs, or settingsMixed), each distinct set decoded
// once and shared.
func scopeSettings(byScope map[int32]int32, strs []string) func(scope int32) (PoolSettings, bool) {
	decoded := map[int32]PoolSettings{}
	return func(scope int32) (PoolSettings, bool) {
		id, ok := byScope[scope]
		if !ok {
			return nil, false
		}
		if id == settingsMixed {
			return nil, true
		}
		ps, ok := decoded[id]
		if !ok {
			ps, _ = parseSettingsText(strs[id]) // the stage wrote it: it parses
			decoded[id] = ps
		}
		return ps, false
	}
}
