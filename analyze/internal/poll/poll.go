// Package poll lets the analyzer's long, pure loops stop when their
// context is done, at the cost of a counter per step: the measures, the
// vocabulary stage and the rule observation all stop the same way.
package poll

import "context"

// pollEvery is how many loop steps pass between two looks at a context: a
// hot loop over millions of spans pays a counter per step, and a channel
// read (ctx.Err) only once per 4096, so a cancelled measure stops within a
// few microseconds of work.
const pollEvery = 1 << 12

// Poll lets a long, pure loop of the measures stop when its context is done
// (every loop that can run long checks the context). The first
// error sticks, so every later loop stops at its first step and the stage
// that follows reads it with Err. A nil *Poll (a context that can never be
// done, as the engine's per-group measures pass) never stops and costs one
// nil check.
type Poll struct {
	ctx context.Context
	n   uint32
	e   error
}

// New returns a poll of ctx, nil when ctx can never be done.
func New(ctx context.Context) *Poll {
	if ctx == nil || ctx.Done() == nil {
		return nil
	}
	return &Poll{ctx: ctx}
}

// Stop reports whether the loop calling it should stop: the context was
// found done at this step or an earlier one.
func (p *Poll) Stop() bool {
	if p == nil {
		return false
	}
	if p.e != nil {
		return true
	}
	p.n++
	if p.n%pollEvery == 0 {
		p.e = p.ctx.Err()
	}
	return p.e != nil
}

// Err returns the context's error once a loop has stopped on it, nil
// before; it reads no channel.
func (p *Poll) Err() error {
	if p == nil {
		return nil
	}
	return p.e
}
