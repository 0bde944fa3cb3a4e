//go:build !race

package pool_test

// loadWorkers without the race detector: every execution at once.
const loadWorkers = loadExecutions
