//go:build race

package pool_test

// loadWorkers under the race detector: 500 simultaneous sessions take about
// 20 s there, half the package's time budget, and near the detector's limit
// of live goroutines. 64 still overlaps executions heavily.
const loadWorkers = 64
