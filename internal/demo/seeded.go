package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcptrace/mcptrace/fixtures"
	"github.com/mcptrace/mcptrace/pool"
	"github.com/mcptrace/mcptrace/spans"
)

// ModeSeeded is the seeded workload: pool-scope restarts over one fixture
// and one service, each scope a sequence of single calls and bursts on a
// few keys with idle gaps between them, all drawn from Seeded.Seed, under
// the pool settings of Seeded. It exists so that the pool's idle TTL, its
// idle sizing and pre-warm change the outcome, and so that one seed run at
// two settings gives two dumps of the same calls (mcptrace whatif predicts
// one from the other).
const ModeSeeded Mode = "seeded"

// AttrBurst is the width of the burst a seeded execution belongs to: how
// many executions of its key ran at once.
const AttrBurst = "demo.burst"

// Defaults of [Seeded]: a time scale a run takes seconds at. A step's
// leases are released at the end of its slot, just before the next step
// starts, so every planned time the pool compares with the TTL is a whole
// number of slots: how long a session sat idle since its release or its
// pre-warm, and how old a burst's peak is when read at an acquire or a
// release. The gap is two slots, which keeps them on that grid, and the TTL
// sits half a slot (80ms) off it, so the outcome does not flip for less
// than 80ms of lateness; the gap is longer than the TTL (an idle gap
// expires the key's sessions) and the whole run shorter than the pool's
// sweep interval (the pool forgets no key).
const (
	DefaultSeededIdleTTL  = 240 * time.Millisecond
	DefaultSeededGap      = 320 * time.Millisecond
	DefaultSeededSteps    = 10
	DefaultSeededKeys     = 4
	DefaultSeededMaxBurst = 3
	DefaultSeededSlot     = 160 * time.Millisecond
)

// Seeded configures ModeSeeded: the workload's seed and shape, and the
// settings of its pools. Zero fields take the defaults above; Config.Scopes
// is the number of pool scopes (each a new pool over the same fixture and
// service).
type Seeded struct {
	// Seed draws the workload: the same seed, the same calls.
	Seed uint64
	// Steps per scope; each step is one execution: a single call or a
	// burst on one key, after an idle gap (none three times in four, else
	// Gap or twice Gap).
	Steps int
	// Keys is the number of distinct keys (tenants) the workload draws.
	Keys int
	// MaxBurst is the widest burst: that many leases of one key at once.
	MaxBurst int
	// Gap is the unit of idle gaps between steps.
	Gap time.Duration
	// Slot is the time a step has on the workload's clock, and Hold how
	// long into it its leases are released (zero: the whole slot): every
	// step starts at its planned time (the sum of the slots and gaps
	// before it) and releases at its start plus Hold, so that how long a
	// session sits idle is planned (a number of slots and gaps, less
	// Hold), not the sum of the calls' durations between two uses of a
	// key, and a run repeats its hits and misses under any load that lets
	// each step finish within Hold plus the TTL's distance to the grid
	// (the defaults: 160ms plus 80ms). Zero Slot: DefaultSeededSlot.
	Slot, Hold time.Duration
	// IdleTTL, MaxIdlePerKey and FixedIdlePerKey are the pools' settings
	// (pool.Options). Zero IdleTTL: DefaultSeededIdleTTL; zero
	// MaxIdlePerKey: the pool's default, 1.
	IdleTTL         time.Duration
	MaxIdlePerKey   int
	FixedIdlePerKey bool
	// PrewarmRecent, when positive, pre-warms each scope after the first
	// with the PrewarmRecent keys the service's previous scopes called
	// most recently (pool.Options.Prewarm): what whatif's --prewarm
	// recent:N models.
	PrewarmRecent int
}

func (s Seeded) withDefaults() Seeded {
	if s.Steps <= 0 {
		s.Steps = DefaultSeededSteps
	}
	if s.Keys <= 0 {
		s.Keys = DefaultSeededKeys
	}
	if s.MaxBurst <= 0 {
		s.MaxBurst = DefaultSeededMaxBurst
	}
	if s.Gap <= 0 {
		s.Gap = DefaultSeededGap
	}
	if s.IdleTTL <= 0 {
		s.IdleTTL = DefaultSeededIdleTTL
	}
	if s.Slot <= 0 {
		s.Slot = DefaultSeededSlot
	}
	if s.Hold <= 0 || s.Hold > s.Slot {
		s.Hold = s.Slot
	}
	return s
}

// Step is one step of the seeded workload: after an idle gap, Width leases
// of key Key at once (1: a single call).
type Step struct {
	Gap   time.Duration `json:"gap_ns"`
	Key   int           `json:"key"`
	Width int           `json:"width"`
}

// ScopePlan is one pool scope of the seeded workload: the keys it
// pre-warms (most recent first) and its steps.
type ScopePlan struct {
	Prewarm []int  `json:"prewarm"`
	Steps   []Step `json:"steps"`
}

// SeededPlan draws the seeded workload of cfg: the same Seed (and shape)
// gives the same plan, whatever the pool settings. It reads only
// Config.Scopes and Config.Seeded.
func SeededPlan(cfg Config) []ScopePlan {
	cfg = cfg.withDefaults()
	s := cfg.Seeded.withDefaults()
	rng := rand.New(rand.NewPCG(s.Seed, 0x6d63707472616365)) // "mcptrace"
	var recent []int                                         // the service's keys, most recently called first
	plans := make([]ScopePlan, 0, cfg.Scopes)
	for sc := range cfg.Scopes {
		var plan ScopePlan
		if sc > 0 && s.PrewarmRecent > 0 {
			plan.Prewarm = slices.Clone(recent[:min(s.PrewarmRecent, len(recent))])
		}
		for st := range s.Steps {
			step := Step{Width: 1}
			if st > 0 {
				switch r := rng.IntN(100); {
				case r < 18:
					step.Gap = s.Gap
				case r < 25:
					step.Gap = 2 * s.Gap
				}
			}
			// Callers come back to what they used last: a recent key
			// more often than not, so recent:N pre-warms pay sometimes.
			if len(recent) > 0 && rng.IntN(100) < 60 {
				step.Key = recent[rng.IntN(min(2, len(recent)))]
			} else {
				step.Key = rng.IntN(s.Keys)
			}
			if s.MaxBurst > 1 && rng.IntN(100) < 30 {
				step.Width = 2 + rng.IntN(s.MaxBurst-1)
			}
			recent = append([]int{step.Key}, slices.DeleteFunc(recent, func(k int) bool { return k == step.Key })...)
			plan.Steps = append(plan.Steps, step)
		}
		plans = append(plans, plan)
	}
	return plans
}

// seededTenant names key k of the seeded workload.
func seededTenant(k int) string { return "seeded-" + strconv.Itoa(k+1) }

// SeededScopeID is the pool scope id of scope sc (from 0) of the seeded
// workload.
func SeededScopeID(sc int) string { return fmt.Sprintf("seeded-scope-%d", sc+1) }

// runSeeded runs the seeded workload's scopes one after the other, each on
// a new pool, and books the pools' counters into res.
func runSeeded(ctx context.Context, srv *fixtures.Server, tp trace.TracerProvider, cfg Config, res *Result) error {
	s := cfg.Seeded.withDefaults()
	tracer := tp.Tracer(spans.ScopeName + "/demo")
	targets := make([]*pool.Target, s.Keys)
	for k := range targets {
		t, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), Header: http.Header{"X-Demo-Tenant": {seededTenant(k)}}})
		if err != nil {
			return fmt.Errorf("seeded target: %w", err)
		}
		targets[k] = t
	}
	seed := s.Seed
	res.Seed, res.Settings = &seed, s
	res.MissReasons = map[string]int64{}
	plans := SeededPlan(cfg)
	total, done := cfg.Scopes*s.Steps, 0
	for sc, plan := range plans {
		opts := pool.Options{ID: SeededScopeID(sc), TracerProvider: tp, SemconvCallSpans: cfg.SemconvCallSpans,
			IdleTTL: s.IdleTTL, MaxIdlePerKey: s.MaxIdlePerKey, FixedIdlePerKey: s.FixedIdlePerKey}
		for _, k := range plan.Prewarm {
			opts.Prewarm = append(opts.Prewarm, targets[k])
		}
		p, err := pool.New(opts)
		if err != nil {
			return fmt.Errorf("seeded pool %s: %w", opts.ID, err)
		}
		clock := time.Now() // the scope's planned clock: each step's start
		var late time.Duration
		for _, step := range plan.Steps {
			clock = clock.Add(step.Gap)
			if !sleepCtx(ctx, time.Until(clock)) {
				p.Close()
				return ctx.Err()
			}
			late = max(late, time.Since(clock), runSeededStep(ctx, tracer, p, targets[step.Key], step, clock.Add(s.Hold), res))
			clock = clock.Add(s.Slot)
			done++
			if cfg.Progress != nil {
				cfg.Progress(ModeSeeded, done, total)
			}
		}
		res.LateMS = max(res.LateMS, float64(late.Microseconds())/1000)
		st := p.Stat()
		res.Acquires += st.Acquires
		res.Hits += st.Hits
		res.PrewarmDials += st.PrewarmDials
		addCounts(res.MissReasons, st.MissReasons)
		if err := p.Close(); err != nil {
			return err
		}
	}
	return nil
}

// warmSeeded makes one session and one call on srv through an untraced
// pool before the seeded workload starts: the process's first dial and
// call pay one-time costs (the first connection, the SDK's and the
// fixture's first session, under -race many milliseconds) that would
// otherwise overrun the first step's slot and move its release off the
// planned grid. It leaves no span, and the caller counts the sessions the
// workload opened after it.
func warmSeeded(ctx context.Context, srv *fixtures.Server) error {
	t, err := pool.NewTarget(pool.TargetConfig{Endpoint: srv.URL(), Header: http.Header{"X-Demo-Tenant": {"seeded-warm-up"}}})
	if err != nil {
		return fmt.Errorf("seeded warm-up target: %w", err)
	}
	p, err := pool.New(pool.Options{ID: "seeded-warm-up"})
	if err != nil {
		return fmt.Errorf("seeded warm-up pool: %w", err)
	}
	l, err := p.Acquire(ctx, t)
	if err == nil {
		_, err = l.CallTool(ctx, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": "warm-up"}})
		l.Release(err)
	}
	if cerr := p.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("seeded warm-up: %w", err)
	}
	return nil
}

// runSeededStep runs one step: Width executions of one key at once, each
// a demo.execution root span around one lease and one call. The leases are
// acquired one after the other, each while the ones before it are held,
// and only then used and released: so the order in which the acquires
// reach the pool is the order their spans start in, the first takes the
// key's most recent idle session, and every later one the idle sessions
// cannot serve dials while the others are out (a concurrent miss), whatever
// the scheduler does.
//
// The leases are released at release (the step's planned start plus Hold),
// so that the idle time that follows is planned too; it returns how late
// the last of them was released.
func runSeededStep(ctx context.Context, tracer trace.Tracer, p *pool.Pool, t *pool.Target, step Step, release time.Time, res *Result) time.Duration {
	type held struct {
		ctx  context.Context
		span trace.Span
		l    pool.Lease
		err  error
		late time.Duration
	}
	leases := make([]held, step.Width)
	for i := range leases {
		h := &leases[i]
		h.ctx, h.span = tracer.Start(ctx, SpanExecution, trace.WithAttributes(
			attribute.String(AttrMode, string(ModeSeeded)), attribute.Int(AttrBurst, step.Width)))
		h.l, h.err = p.Acquire(h.ctx, t)
	}
	var wg sync.WaitGroup
	for i := range leases {
		h := &leases[i]
		wg.Go(func() {
			defer h.span.End()
			if h.err != nil {
				h.span.RecordError(h.err)
				return
			}
			_, h.err = h.l.CallTool(h.ctx, &mcp.CallToolParams{Name: fixtures.ToolEcho, Arguments: map[string]any{"text": strconv.Itoa(i)}})
			sleepCtx(ctx, time.Until(release)) // a cancelled run releases at once
			h.l.Release(h.err)
			h.late = time.Since(release)
			if h.err != nil {
				h.span.RecordError(h.err)
			}
		})
	}
	wg.Wait()
	res.Executions += step.Width
	res.Calls += step.Width
	var late time.Duration
	for _, h := range leases {
		if h.err != nil {
			res.Errors++
		}
		late = max(late, h.late)
	}
	return late
}

// sleepCtx waits d unless ctx is done first; it reports whether to go on.
// A negative d does not wait. The live and the seeded workloads share it.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ParsePrewarm reads a pre-warm setting: "none" (0) or "recent:N" with N a
// positive number of keys.
func ParsePrewarm(s string) (int, error) {
	if s == "none" || s == "" {
		return 0, nil
	}
	if n, ok := strings.CutPrefix(s, "recent:"); ok {
		if v, err := strconv.Atoi(n); err == nil && v > 0 {
			return v, nil
		}
	}
	return 0, fmt.Errorf("%q: expected none or recent:N with N a positive number of keys", s)
}

// ParseIdlePerKey reads an idle-per-key setting: "peak" (the pool's
// default: a key keeps its in-use peak within the idle TTL, at least one)
// or a positive number N (at most N idle sessions per key whatever the
// bursts: MaxIdlePerKey N with FixedIdlePerKey).
func ParseIdlePerKey(s string) (maxIdle int, fixed bool, err error) {
	if s == spans.IdleSizingPeak {
		return 0, false, nil
	}
	if v, err := strconv.Atoi(s); err == nil && v > 0 {
		return v, true, nil
	}
	return 0, false, fmt.Errorf("%q: expected peak or a positive number of idle sessions", s)
}
