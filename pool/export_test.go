package pool

import "time"

// SetClock replaces the pool's clock; tests call it before first use.
func SetClock(p *Pool, now func() time.Time) { p.now = now }

// NewOnClock is New with the clock now from the start, pre-warm included.
func NewOnClock(opts Options, now func() time.Time) (*Pool, error) { return newPool(opts, now) }

// StartSweeper starts the background sweeper on ticks that the test sends;
// the pool must have been built with a negative SweepInterval.
func StartSweeper(p *Pool, ticks <-chan time.Time) { p.startSweeper(ticks, func() {}) }

// RPCHead is rpcHead, for the test of what a call span's
// jsonrpc.request.id is read from.
var RPCHead = rpcHead
