//go:build race

package whatif

// raceEnabled is true under the race detector, which makes each map
// operation of a million-key test cost tens of times more.
const raceEnabled = true
