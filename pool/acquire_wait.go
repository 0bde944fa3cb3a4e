package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptrace/mcptrace/spans"
)

// waitHandshake waits for the key's in-flight handshake, after which the
// acquire looks again (nil), or for the caller's context (the acquire's
// error, ended on its span).
func (p *Pool) waitHandshake(ctx context.Context, span acquireSpan, t *Target, s step) error {
	select {
	case <-s.wait:
		return nil
	case <-ctx.Done():
		err := p.scrubber(t).error(fmt.Errorf("acquire %s: wait for the key's handshake: %w", t.shown, ctx.Err()))
		p.inst.endAcquireFailed(ctx, span, err, spans.ErrTypeCanceled, spans.MissConcurrent, s.hint)
		return err
	}
}

// capWait is an acquire's waiting for its key's in-use cap, over however
// many rounds it takes: the Options.AcquireTimeout deadline, armed by the
// first wait, and the time waited so far.
type capWait struct {
	timer    *time.Timer
	deadline <-chan time.Time
	waited   time.Duration
}

// stop releases the deadline's timer; the acquire defers it.
func (w *capWait) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// waitInUseCap waits for one of the key's leases to end, after which the
// acquire looks again (nil), or fails on the caller's context or the
// acquire deadline (the acquire's error, ended on its span and counted).
func (p *Pool) waitInUseCap(ctx context.Context, span acquireSpan, t *Target, s step, attempt int, w *capWait) error {
	if w.deadline == nil && p.opts.AcquireTimeout > 0 {
		w.timer = time.NewTimer(p.opts.AcquireTimeout)
		w.deadline = w.timer.C
	}
	began := p.now()
	err := p.waitFreed(ctx, s.wait, w.deadline)
	w.waited += p.now().Sub(began)
	p.inst.acquireWaited(span, w.waited)
	reason := p.capDone(s, attempt, err)
	if err == nil {
		return nil
	}
	errType := spans.ErrTypeCanceled
	if errors.Is(err, ErrAcquireTimeout) {
		errType = spans.ErrTypeAcquireTimeout
	}
	p.inst.acquireTimeout(ctx, errType)
	err = p.scrubber(t).error(fmt.Errorf("acquire %s: %d sessions in use (MaxInUsePerKey): %w", t.shown, p.opts.MaxInUsePerKey, err))
	p.inst.endAcquireFailed(ctx, span, err, errType, reason, s.hint)
	return err
}

// capDone ends a wait for the in-use cap in one critical section: the wait
// no longer pending, and on a failed wait (err) the timeout counted and the
// miss's cause returned for the span.
func (p *Pool) capDone(s step, attempt int, err error) (reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stats.pending--
	if err == nil {
		return ""
	}
	if errors.Is(err, ErrAcquireTimeout) {
		p.stats.timeouts++
	}
	return p.idle.Cause(s.ks, s.known, attempt > 1)
}

// waitFreed waits for freed, the context, or the acquire deadline
// (Options.AcquireTimeout), whichever comes first.
func (p *Pool) waitFreed(ctx context.Context, freed <-chan struct{}, deadline <-chan time.Time) error {
	select {
	case <-freed:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-deadline:
		return ErrAcquireTimeout
	}
}
