package engine

import (
	"context"
	"errors"
	"math"
	"slices"

	evdata "github.com/mcptrace/mcptrace/analyze/events"
	"github.com/mcptrace/mcptrace/analyze/ingest"

	"github.com/mcptrace/mcptrace/analyze/internal/record"
	"github.com/mcptrace/mcptrace/analyze/report"
	"github.com/mcptrace/mcptrace/analyze/rulefmt"
	"github.com/mcptrace/mcptrace/spans"
)

// Acquire is one acquire as a replay of the pool reads it: see
// [evdata.Acquire].
type Acquire = evdata.Acquire

// ReadAcquires reads src as `mcptrace analyze` does (the engine's load
// path, its vocabularies, profile auto included) and hands every acquire,
// its cause attributed, to fn, scope by scope in time order, and every
// pre-warm dial the attribution replayed (Acquire.Prewarm). The
// memory is the engine's batch memory: the open traces and the acquires,
// never every span. It returns what was read from each input; on a read
// error, a *ReadError and no acquire.
func ReadAcquires(ctx context.Context, src ingest.Source, cfg rulefmt.Config, lopts LoadOptions, fn func(*Acquire)) ([]Input, error) {
	inputs, _, err := ReadAcquiresWriter(ctx, src, cfg, lopts, fn)
	return inputs, err
}

// ReadAcquiresWriter is ReadAcquires, and also returns what the writer of
// the spans shows (the report's Writer section, computed as `mcptrace
// analyze` computes it): a replay of the acquires asks it
// (report.Report.LacksWhy) whether the keys it replays apart were told
// apart. The writer is nil on error.
func ReadAcquiresWriter(ctx context.Context, src ingest.Source, cfg rulefmt.Config, lopts LoadOptions, fn func(*Acquire)) ([]Input, *report.WriterReport, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if ChooseEngine(EngineRequest{Config: cfg, Rereadable: src.Rereadable()}).Kind == EngineSpeculative {
		eng, err := newSpeculativeEngine(cfg, EngineOptions{})
		if err != nil {
			return nil, nil, err
		}
		inputs, w, err := acquiresWith(ctx, eng, src, lopts, fn)
		if !errors.Is(err, errSpoiled) {
			return inputs, w, err
		}
		if lopts.Reread != nil {
			lopts.Reread(errSpoiled)
		}
	}
	eng, err := NewEngine(cfg, EngineOptions{})
	if err != nil {
		return nil, nil, err
	}
	return acquiresWith(ctx, eng, src, lopts, fn)
}

// acquiresWith feeds src into eng, attributes its acquires into fn and
// returns what the writer of the spans shows.
func acquiresWith(ctx context.Context, eng *Engine, src ingest.Source, lopts LoadOptions, fn func(*Acquire)) ([]Input, *report.WriterReport, error) {
	eng.mu.Lock()
	eng.agg.settings = map[int32]int32{} // keep the pool's recorded settings by scope
	eng.agg.services = map[int32]int32{} // and each scope's service
	eng.mu.Unlock()
	inputs, err := Feed(ctx, src, lopts, eng)
	if err != nil {
		return inputs, nil, eng.abandon(err)
	}
	if err := eng.Flush(); err != nil {
		return inputs, nil, err
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
	eng.agg.pairs.Each = func(ev *record.Acquire) {
		a = acquireOf(ev, strs, settings, eng.agg.services)
		fn(&a)
	}
	eng.agg.pairs.EachPrewarm = eng.agg.pairs.Each
	eng.agg.pairs.Advance(math.MaxInt64)
	eng.agg.pairs.Each, eng.agg.pairs.EachPrewarm = nil, nil
	return inputs, eng.agg.writer(slices.Clone(eng.inputs)), nil
}

// acquireOf is the Acquire of an attributed acquire event, its strings
// read through strs, its scope's recorded settings through settings and
// its scope's service.name from services (scope id to string id).
func acquireOf(ev *record.Acquire, strs func(int32) (string, bool), settings func(int32) (record.PoolSettings, bool), services map[int32]int32) Acquire {
	// The vocabulary stage ends no lease before its acquire starts.
	a := Acquire{Start: ev.Start, LeaseEnd: ev.LeaseEnd, Hit: ev.Hit, Failed: ev.Failed,
		Attempt: 1, HealthCheck: ev.Health, Prewarm: ev.Prewarm}
	if ev.Redial {
		a.Attempt = 2
	}
	if !ev.Hit && !ev.Prewarm {
		a.Cause = spans.MissReasons[ev.Reason]
	}
	a.Scope, a.HasScope = strs(ev.Scope)
	a.Key, a.HasKey = strs(ev.Key)
	a.Settings, a.SettingsMixed = settings(ev.Scope)
	if svc, ok := services[ev.Scope]; ok {
		a.Service, a.HasService = strs(svc)
	}
	return a
}

// scopeSettings returns the recorded settings of a scope id, from byScope
// (settings ids into strs, or settingsMixed), each distinct set decoded
// once and shared.
func scopeSettings(byScope map[int32]int32, strs []string) func(scope int32) (record.PoolSettings, bool) {
	decoded := map[int32]record.PoolSettings{}
	return func(scope int32) (record.PoolSettings, bool) {
		id, ok := byScope[scope]
		if !ok {
			return nil, false
		}
		if id == record.SettingsMixed {
			return nil, true
		}
		ps, ok := decoded[id]
		if !ok {
			ps, _ = record.ParseSettingsText(strs[id]) // the stage wrote it: it parses
			decoded[id] = ps
		}
		return ps, false
	}
}
