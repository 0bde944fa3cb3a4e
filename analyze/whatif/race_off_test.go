//go:build !race

package whatif

// raceEnabled is false without the race detector (race_on_test.go).
const raceEnabled = false
