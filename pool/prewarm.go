package pool

import (
	"context"
	"errors"
	"sync"
)

// Pre-warm (Options.Prewarm): New dials the targets it is given before it
// returns and puts their sessions idle, so that their first acquires hit.
// The dials run before the pool is handed out, so nothing else touches the
// keys they create; they still take p.mu like any dial, and dial with no
// lock held.

// prewarmCtxKey marks a context as a pre-warm dial's, for its handshake
// span (instruments.startHandshake).
type prewarmCtxKey struct{}

// withPrewarm returns ctx marked as a pre-warm dial's.
func withPrewarm(ctx context.Context) context.Context {
	return context.WithValue(ctx, prewarmCtxKey{}, true)
}

// isPrewarm reports whether ctx is a pre-warm dial's.
func isPrewarm(ctx context.Context) bool { return ctx.Value(prewarmCtxKey{}) != nil }

// prewarm dials targets (each distinct key once, at most MaxIdle keys) in
// parallel and puts each session idle, all within Options.PrewarmTimeout.
// A failure is logged and counted, never returned: pre-warming is a bet on
// what the scope will call, and a lost bet must not keep the pool from
// starting.
func (p *Pool) prewarm(targets []*Target) {
	if len(targets) == 0 || p.opts.MaxIdlePerKey < 0 {
		return
	}
	var todo []*Target
	seen := make(map[string]bool, len(targets))
	for _, t := range targets {
		if seen[t.key] || len(todo) == p.opts.MaxIdle {
			continue
		}
		seen[t.key] = true
		todo = append(todo, t)
	}
	ctx, cancel := context.WithTimeout(withPrewarm(context.Background()), p.opts.PrewarmTimeout)
	defer cancel()
	var wg sync.WaitGroup
	for _, t := range todo {
		wg.Go(func() { p.prewarmKey(ctx, t) })
	}
	wg.Wait()
}

// prewarmKey dials one target and puts its session idle, as a release
// would. On failure the key is forgotten again, so that the first acquire
// of it is a cold miss, as without the pre-warm.
func (p *Pool) prewarmKey(ctx context.Context, t *Target) {
	p.mu.Lock()
	ks, _, evs := p.idle.KeyOf(t.key, ns(p.now()), nil)
	p.stats.dials++
	p.stats.prewarmDials++
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)

	c, hs, err := p.dial(ctx, t, ks, "")
	now := p.now()
	p.mu.Lock()
	p.countHandshakeLocked(hs)
	if err != nil {
		p.stats.dialFailures++
		p.stats.prewarmFailures++
		p.idle.ForgetIfUnused(ks)
		p.mu.Unlock()
		p.opts.Logger.Warn("mcp pool: pre-warm dial failed", "key", t.key, "canceled", errors.Is(err, context.DeadlineExceeded), "error", err.Error())
		return
	}
	p.openedLocked(ks, c)
	c.e, evs = p.idle.Prewarmed(ks, c, c.sessionless, ns(now), nil)
	p.mu.Unlock()
	p.closeEvicted(ctx, evs)
}
