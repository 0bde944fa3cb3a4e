//go:build race

package engine

// raceEnabled is true under the race detector, whose shadow memory
// prepareHeap's allocations touch (the reserve itself stays untouched).
const raceEnabled = true
